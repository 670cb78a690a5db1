import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import type { CallSignal } from '../wire/cancellation.ts';
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, type LoggingMessageNotificationParams } from '@modelcontextprotocol/client';
import { answer, cancellation, encodeRequest, receivedMessage, responseFor, sessionHeaders, settleResponse, type ClientSession } from '../wire/client-codec.ts';
import { ERROR_CODE } from '../wire/jsonrpc.ts';
import { markDelivery, markResultTooLarge } from '../errors.ts';
import { SseReader } from '../wire/sse.ts';

/**
 * What one upstream connection (made by the SDK client's handshake) fixes for every request on it:
 * the revision spoken, the session (sessionful 2025-era upstreams), and for 2026-07-28 the `_meta`
 * envelope this hop's client sends on every request (protocolVersion, clientInfo, clientCapabilities).
 */
export type HopSession = ClientSession;

/** One forwarded request's per-call inputs, all explicit: nothing is read from ambient request state. */
export interface HopCall {
  /** The caller's credential headers to put on the wire (already filtered by `forwardCredentials`). */
  credentialHeaders?: Readonly<Record<string, string>>;
  /** The gateway's request id, sent as `x-request-id`. */
  requestId?: string;
  signal?: CallSignal;
  /** Upstream progress for this request; also restarts the timeout (the SDK's resetTimeoutOnProgress). */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** `notifications/message` the upstream sends on this request's response stream, in order. */
  onlog?: (message: LoggingMessageNotificationParams) => void;
  /** Any other notification on the response stream (list_changed: the catalogue cache listens). */
  onnotification?: (method: string, params: unknown) => void;
  /** Extra headers (`Mcp-Param-*`), below the static, credential and request-id headers in precedence. */
  headers?: Readonly<Record<string, string>>;
  /** Hand an `input_required` result back (2026-07-28 multi-round-trip, manual mode) instead of failing. */
  allowInputRequired?: boolean;
  /** Hand a `resultType: "task"` result back (the tasks extension, SEP-2663) instead of failing. */
  allowTaskResult?: boolean;
  /**
   * Answers the upstream's sampling, elicitation and roots requests on this request's response stream
   * (the input bridge, input-bridge.ts); absent, or for any other method: -32601.
   */
  oninputrequest?: (request: InputRequest) => Promise<Record<string, unknown>>;
  /** Milliseconds without an answer (or progress) before the request fails with REQUEST_TIMEOUT. */
  timeoutMs: number;
  /**
   * Largest answer read for this request, bytes (`limits.resultBytes`): a JSON body, or one SSE event,
   * past it fails the request (SdkError INVALID_RESULT: the upstream answered, too much to hold; an
   * `upstream_error`) and the rest is not read. Absent: no bound.
   */
  maxBytes?: number;
}

/** A server-to-client request the caller may answer (2025-11-25 client/sampling, client/elicitation, client/roots). */
export interface InputRequest {
  method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list';
  params?: Record<string, unknown>;
}

/** The methods of a server's request to its client that ask for input (2025-11-25 client/*; 2026-07-28 InputRequest). */
export const INPUT_METHODS: ReadonlySet<string> = new Set<InputRequest['method']>(['sampling/createMessage', 'elicitation/create', 'roots/list']);

/**
 * The response stream broke after the upstream started answering: the request failed, and whether the
 * upstream is gone too is for a liveness check to say (the stream may have been cut by something between).
 */
export class UpstreamStreamBroken extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UpstreamStreamBroken';
  }
}

/** Errors bodies are read for a JSON-RPC error up to this size; past it only the status counts. */
const MAX_ERROR_BODY = 1 << 20;
/** Connection refused or reset before any answer: the upstream (or the connection to it) is gone. */
const LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
/** How long a response stream may stay open after it carried the answer before its socket is given up. */
const STREAM_GRACE_MS = 5000;
/** Above the SDK client's counter, so a hop request never shares an id with one of the session's SDK requests. */
const FIRST_ID = 1_000_000;

/**
 * The upstream hop for forwarded requests to a Streamable HTTP upstream, on undici directly: one
 * keep-alive `Pool` per upstream with at most `connections` sockets, no web streams, no per-request
 * `Headers` or `Request` objects. It speaks what the SDK client spoke on the same wire (spec
 * basic/transports/streamable-http, both eras):
 * - a POST with `Accept: application/json, text/event-stream`, `MCP-Protocol-Version`, the session id
 *   (sessionful 2025-era upstreams), and on 2026-07-28 the `_meta` envelope, `Mcp-Method`, `Mcp-Name`;
 * - a JSON answer, or an SSE stream on which progress and log notifications are relayed in the order
 *   they arrive, before the response; server-to-client requests on the stream are answered (ping with
 *   an empty result, sampling / elicitation / roots by `oninputrequest` when the call has one, anything
 *   else -32601);
 * - errors thrown as the SDK client threw them, so classification is unchanged (errors.ts): a JSON-RPC
 *   error answering this request, under ANY HTTP status, is a `ProtocolError` with the upstream's code,
 *   message and data; another non-2xx is an `SdkHttpError` with its status (401: ClientHttpAuthentication);
 *   no answer in `timeoutMs` (restarted by progress) and a caller's abort are `SdkError` REQUEST_TIMEOUT
 *   (the caller of `forward` tells the two apart by its signal), and on the 2025 wire they also send
 *   `notifications/cancelled` (2025-11-25 basic/utilities/cancellation; 2026-07-28 cancels by closing
 *   the stream, which the abort does); a refused or reset connection is `SdkError` CONNECTION_CLOSED;
 *   a stream that breaks mid-answer is {@link UpstreamStreamBroken}.
 * Results are decoded as the SDK's codecs decode them: 2026-07-28 requires `resultType` (`complete` is
 * lifted off, `input_required` handed back only with `allowInputRequired`).
 */
export class HttpHop {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly staticHeaders: Record<string, string>;
  private nextId = FIRST_ID;
  private closed = false;

  constructor(url: string, staticHeaders: Readonly<Record<string, string>>, connections: number) {
    const target = new URL(url);
    this.path = `${target.pathname}${target.search}`;
    this.staticHeaders = lowerCased(staticHeaders);
    this.pool = new Pool(target.origin, {
      connections,
      pipelining: 1,
      // Our own timer (restarted by progress) bounds a request; undici's would cut long tool calls.
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
    });
  }

  /** Sends one request and resolves with its result. @throws as described on the class. */
  request(session: HopSession, method: string, params: Record<string, unknown>, call: HopCall): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(markDelivery(new SdkError(SdkErrorCode.NotConnected, 'Not connected'), 'not_sent'));
    // Given up before it was sent: nothing to cancel upstream.
    if (call.signal?.aborted)
      return Promise.reject(
        markDelivery(new SdkError(SdkErrorCode.RequestTimeout, `AbortError: ${describeReason(call.signal.reason)}`, { timeout: call.timeoutMs }), 'not_sent'),
      );
    const id = this.nextId++;
    const modern = session.era === 'modern';
    const encoded = encodeRequest(session, id, method, params, call.onprogress ? id : undefined);
    const body = encoded.body;
    const headers = this.headers(session, call);
    for (const name in encoded.headers) headers[name] = encoded.headers[name]!;

    let settle!: { resolve: (value: Record<string, unknown>) => void; reject: (error: unknown) => void };
    const outcome = new Promise<Record<string, unknown>>((resolve, reject) => (settle = { resolve, reject }));
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (error: unknown, result?: Record<string, unknown>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
      if (error === undefined) settle.resolve(result!);
      // No answer (lost, timed out, stream cut): whether the request had been written says whether it may have run.
      else settle.reject(answered(error) ? error : markDelivery(error, exchange.started ? 'sent' : 'not_sent'));
    };
    const giveUp = (reason: string) => {
      if (done) return;
      finish(new SdkError(SdkErrorCode.RequestTimeout, reason, { timeout: call.timeoutMs }));
      if (!modern) this.cancelUpstream(session, call, id, reason);
      exchange.abort();
    };
    const onAbort = () => giveUp(`AbortError: ${describeReason(call.signal?.reason)}`);
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => giveUp('Request timed out'), call.timeoutMs);
    };
    const exchange = new Exchange(this, session, call, id, finish, call.onprogress ? arm : undefined);
    call.signal?.addEventListener('abort', onAbort, { once: true });
    arm();
    try {
      this.pool.dispatch({ path: this.path, method: 'POST', headers, body }, exchange);
    } catch (error) {
      finish(transportError(error));
    }
    return outcome;
  }

  /** Closes every pooled connection (requests in flight fail). */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy().catch(() => {});
  }

  private headers(session: HopSession, call: HopCall): Record<string, string> {
    const headers: Record<string, string> = {};
    if (call.headers) for (const name in call.headers) headers[name.toLowerCase()] = call.headers[name]!;
    const own = sessionHeaders(session);
    for (const name in own) headers[name] = own[name]!;
    for (const name in this.staticHeaders) headers[name] = this.staticHeaders[name]!;
    if (call.credentialHeaders) for (const name in call.credentialHeaders) headers[name.toLowerCase()] = call.credentialHeaders[name]!;
    if (call.requestId !== undefined) headers['x-request-id'] = call.requestId;
    return headers;
  }

  /** @internal A notification on a response stream (Exchange). */
  notified(method: string, params: Record<string, unknown> | undefined, call: HopCall, id: number, progressed: (() => void) | undefined): void {
    if (method === 'notifications/progress') {
      if (!call.onprogress || params?.progressToken !== id || typeof params.progress !== 'number') return;
      progressed?.();
      const { progressToken: _token, ...progress } = params;
      call.onprogress(progress as { progress: number; total?: number; message?: string });
    } else if (method === 'notifications/message') {
      if (params && typeof params.level === 'string') call.onlog?.(params as unknown as LoggingMessageNotificationParams);
    } else call.onnotification?.(method, params);
  }

  /**
   * A server-to-client request on a response stream: ping is answered; sampling, elicitation and roots
   * go to `call.oninputrequest` when there is one (its rejection is the error answered: a ProtocolError's
   * code, else -32603); anything else is -32601.
   */
  /** @internal */
  answerServerRequest(session: HopSession, call: HopCall, message: Record<string, unknown>): void {
    const { id, method } = message;
    if (method === 'ping' || !call.oninputrequest || !INPUT_METHODS.has(method as string)) {
      this.post(session, call, answer(id, method === 'ping' ? { result: {} } : { error: { code: ERROR_CODE.methodNotFound, message: 'Method not found' } }));
      return;
    }
    const request = { method, params: message.params } as InputRequest;
    call.oninputrequest(request).then(
      (result) => this.post(session, call, answer(id, { result })),
      (error: unknown) =>
        this.post(
          session,
          call,
          answer(id, {
            error: {
              code: error instanceof ProtocolError ? error.code : ERROR_CODE.internalError,
              message: error instanceof Error ? error.message : String(error),
            },
          }),
        ),
    );
  }

  /** `notifications/cancelled` for request `id` (2025 wire): best effort, its answer is not awaited. */
  private cancelUpstream(session: HopSession, call: HopCall, id: number, reason: string): void {
    this.post(session, call, cancellation(id, reason));
  }

  private post(session: HopSession, call: HopCall, body: string): void {
    if (this.closed) return;
    const headers = this.headers(session, { ...call, headers: undefined });
    this.pool
      .request({ path: this.path, method: 'POST', headers, body })
      .then((response) => response.body.dump())
      .catch(() => {});
  }
}

type Finish = (error: unknown, result?: Record<string, unknown>) => void;

/** Why the hop aborted a request it gave up on (never seen by a caller: the request has settled already). */
const GIVEN_UP = 'the gateway gave up on this request';

/**
 * The HTTP exchange of one forwarded request, as an undici dispatch handler (`Dispatcher.dispatch`,
 * the callbacks `Pool.request` itself is built on): the answer is read from the callbacks as it
 * arrives, a JSON body whole, an SSE stream line by line, with no body stream, no promise per chunk,
 * no AsyncResource and no AbortSignal (measured: those were a tenth of the gateway's CPU per call).
 * It settles the request through `finish` exactly once; a request given up on is aborted through the
 * controller undici hands over ({@link Exchange.abort}).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private givenUp = false;
  /** What the response body is read as, once its head has arrived. */
  private mode: 'pending' | 'json' | 'sse' | 'error' | 'ignored' = 'pending';
  private statusCode = 0;
  private chunks: Buffer[] = [];
  private size = 0;
  /** An error body past {@link MAX_ERROR_BODY}: only the status counts. */
  private oversized = false;
  private reader?: SseReader;
  private answered = false;
  private ended = false;
  /** Gives up a response stream the upstream keeps open after the answer (see {@link event}). */
  private grace?: NodeJS.Timeout;

  constructor(
    private readonly hop: HttpHop,
    private readonly session: HopSession,
    private readonly call: HopCall,
    private readonly id: number,
    private readonly finish: Finish,
    private readonly progressed: (() => void) | undefined,
  ) {}

  /** Whether undici has started writing the request (it hands over a controller as it does): it may have reached the upstream. */
  get started(): boolean {
    return this.controller !== undefined;
  }

  /** Gives the request up: before it is written (queued in the pool), or while its answer is read. */
  abort(): void {
    this.givenUp = true;
    if (this.controller && !this.ended) this.controller.abort(new Error(GIVEN_UP));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.givenUp) controller.abort(new Error(GIVEN_UP));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx heads come before the answer's own.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    const refused = this.start(statusCode, headers);
    if (refused !== undefined) this.finish(refused);
  }

  /** How the body is read, by the answer's head; the error when the head alone settles the request. */
  private start(statusCode: number, headers: IncomingHttpHeaders): unknown {
    if (statusCode === 401) {
      this.mode = 'ignored';
      return new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, 'Server returned 401', { status: 401 });
    }
    if (statusCode >= 300) {
      this.mode = 'error';
      this.oversized = Number(headers['content-length'] ?? 0) > MAX_ERROR_BODY;
      return undefined;
    }
    const type = contentType(headers['content-type']);
    if (type === 'application/json') this.mode = 'json';
    else if (type === 'text/event-stream') {
      this.mode = 'sse';
      this.reader = new SseReader((data) => this.event(data));
    } else {
      // Read to its end and dropped, so the socket goes back to the pool.
      this.mode = 'ignored';
      return new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `upstream answered HTTP ${statusCode} with ${type || 'no content type'}`, {
        status: statusCode,
      });
    }
    return undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const max = this.call.maxBytes;
    if (this.mode === 'json') {
      if (max !== undefined && this.size + chunk.length > max) this.tooLarge(controller, max);
      else this.collect(chunk);
    } else if (this.mode === 'error') {
      if (this.oversized) return;
      if (this.size + chunk.length > MAX_ERROR_BODY) {
        this.oversized = true;
        this.chunks = [];
      } else this.collect(chunk);
    } else if (this.mode === 'sse') {
      try {
        this.reader!.write(chunk);
      } catch (error) {
        this.broken(error as Error);
        controller.abort(error as Error);
        return;
      }
      if (max !== undefined && this.reader!.held > max && !this.answered) this.tooLarge(controller, max);
    }
  }

  /** The answer outgrew `maxBytes`: the request fails, and the connection is dropped rather than read to its end. */
  private tooLarge(controller: Dispatcher.DispatchController, max: number): void {
    this.chunks = [];
    this.mode = 'ignored';
    this.finish(markResultTooLarge(new SdkError(SdkErrorCode.InvalidResult, `upstream answered more than ${max} bytes (limits.resultBytes)`), max));
    controller.abort(new Error(GIVEN_UP));
  }

  onResponseEnd(): void {
    this.ended = true;
    clearTimeout(this.grace);
    if (this.mode === 'json' || this.mode === 'error') this.finish(...this.answer());
    else if (this.mode === 'sse') this.endStream();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.ended = true;
    clearTimeout(this.grace);
    if (this.mode === 'sse') this.broken(error);
    // An error answer whose body broke: the status is the answer.
    else if (this.mode === 'error') this.finish(httpError(this.statusCode, undefined, this.id));
    // No answer, or a JSON body cut short (a request given up on has settled already: finish ignores it).
    else this.finish(transportError(error));
  }

  /** A whole JSON or error body, settled. */
  private answer(): [unknown, Record<string, unknown>?] {
    if (this.mode === 'error') return [httpError(this.statusCode, this.oversized ? undefined : this.text(), this.id)];
    let message: Record<string, unknown> | undefined;
    try {
      message = responseFor(JSON.parse(this.text()) as unknown, this.id);
    } catch (error) {
      return [transportError(error)];
    }
    if (!message) return [new SdkError(SdkErrorCode.InvalidResult, `upstream answered HTTP ${this.statusCode} without a response to request ${this.id}`)];
    return settleResponse(message, this.session.era, this.call);
  }

  /** The SSE stream ended: what was left in the buffer is the last event. */
  private endStream(): void {
    this.reader!.end();
    if (!this.answered) this.finish(new UpstreamStreamBroken('upstream response stream ended before the answer'));
  }

  private broken(error: Error): void {
    if (!this.answered) this.finish(new UpstreamStreamBroken(`upstream response stream broke before the answer (${error.message})`, { cause: error }));
  }

  private collect(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  private text(): string {
    const { chunks } = this;
    return (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size)).toString('utf8');
  }

  /** One SSE event's data: a notification or server-to-client request relayed, or this request's answer. */
  private event(data: string): void {
    if (this.answered || data === '') return;
    const received = receivedMessage(data);
    if (received === undefined) return;
    if (received.kind === 'request') return void this.hop.answerServerRequest(this.session, this.call, received.message);
    if (received.kind === 'notification') return void this.hop.notified(received.method, received.params, this.call, this.id, this.progressed);
    const message = received.message;
    if (message.id !== this.id) return;
    this.answered = true;
    this.finish(...settleResponse(message, this.session.era, this.call));
    // The server SHOULD close the stream after the response (2025-11-25 basic/transports §Sending
    // Messages to the Server); one that does not would hold this pooled socket for good.
    if (!this.ended)
      this.grace = setTimeout(() => {
        if (!this.ended) this.controller?.abort(new Error('the upstream kept the response stream open after the answer'));
      }, STREAM_GRACE_MS).unref();
  }
}

/** A non-2xx answer (not 401): the JSON-RPC error its body (`text`, when read) carries for this request, else the HTTP status. */
function httpError(statusCode: number, text: string | undefined, id: number): unknown {
  if (text !== undefined) {
    try {
      const message = responseFor(JSON.parse(text) as unknown, id);
      if (message && message.error !== undefined) {
        const [error] = settleResponse(message, 'legacy', {});
        if (error instanceof ProtocolError) return error;
      }
    } catch {
      // Not JSON: the status is the answer.
    }
  }
  return new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${text?.slice(0, 200) ?? `HTTP ${statusCode}`}`, {
    status: statusCode,
    text,
  });
}

/** Whether an error is the upstream's own answer (a JSON-RPC error, an HTTP status): it did not go unanswered. */
function answered(error: unknown): boolean {
  return error instanceof ProtocolError || error instanceof SdkHttpError;
}

/** A failure of the exchange itself: lost connections as the SDK names them; our own abort has settled already. */
function transportError(error: unknown): unknown {
  if (error instanceof UpstreamStreamBroken || error instanceof SdkError || error instanceof ProtocolError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && LOST_CODES.has(code))
    return new SdkError(SdkErrorCode.ConnectionClosed, `upstream connection lost (${code})`, undefined, { cause: error });
  // Not V8's message: it quotes the start of the body, which may hold what the upstream meant for no one.
  if (error instanceof SyntaxError) return new SdkError(SdkErrorCode.InvalidResult, 'upstream answered invalid JSON');
  return new SdkError(SdkErrorCode.SendFailed, `upstream request failed (${(error as Error)?.message ?? String(error)})`, undefined, { cause: error });
}

function contentType(value: string | string[] | undefined): string {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return '';
  const semi = raw.indexOf(';');
  return (semi < 0 ? raw : raw.slice(0, semi)).trim().toLowerCase();
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) out[name.toLowerCase()] = headers[name]!;
  return out;
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'This operation was aborted' : String(reason);
}
