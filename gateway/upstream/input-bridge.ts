import { randomUUID } from 'node:crypto';
import { ProtocolError } from '@modelcontextprotocol/client';

/**
 * A bridge between a 2025-era upstream that asks its client for input by sending it requests
 * (`sampling/createMessage`, `elicitation/create`, `roots/list`, 2025-11-25 client/*) in the middle of a
 * call, and a 2026-07-28 caller, which gives input in band (spec 2026-07-28 basic/patterns/mrtr): the
 * caller gets an InputRequiredResult naming the upstream's requests, answers them in `inputResponses` of
 * a retry carrying the bridge's `requestState`, and the retry resumes the SAME upstream call, which was
 * left waiting for those answers. The upstream call may ask again (another InputRequiredResult) or finish
 * (the retry's result).
 *
 * State lives here, in memory, for at most `ttlMs` between an InputRequiredResult and its retry: a retry
 * after that (or on another gateway instance) finds no call, and is refused like a forged state. A call is
 * bound to the caller (the credential digest) that started it and to what it calls (the upstream, the method
 * and the tool, prompt or resource: `subject`): another caller cannot resume it, nor can its own caller under
 * another name (a retry naming a read-only tool, or `call_tool`'s target, would otherwise finish a write the
 * gateway then audits, counts and authorises as that other tool: security try-out).
 *
 * A 2025-era caller is asked on its call's own response stream instead ({@link InputBridge.relayOnStream},
 * 2025-11-25 basic/transports §Sending Messages to the Server: the server MAY send JSON-RPC requests on
 * the POST's SSE stream before the response), under an id the bridge issues; its client answers in a POST
 * of its own, which the edge hands to {@link InputBridge.answer}, tied back by that id and the same
 * credential digest. The same in-memory rule: an answer reaching another gateway instance, or arriving
 * after the question was given up, finds nothing and is refused as unknown.
 */

/** A request the upstream sent its client during a call. */
export interface UpstreamInputRequest {
  method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list';
  params?: Record<string, unknown>;
}

/** How a bridged call stands after a turn: finished, or waiting for the caller's answers. */
export type BridgeOutcome<R> =
  | { kind: 'result'; value: R }
  | { kind: 'input_required'; result: { resultType: 'input_required'; inputRequests: Record<string, UpstreamInputRequest>; requestState: string } };

interface Waiting {
  request: UpstreamInputRequest;
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

interface PendingCall<R> {
  owner: string;
  /** What the call calls (see {@link InputBridge.begin}): a retry must name the same. */
  subject: string;
  call: Promise<R>;
  waiting: Map<string, Waiting>;
  next: number;
  /** Wakes the turn awaiting this call when the upstream asks something. */
  wake?: () => void;
  expiry?: NodeJS.Timeout;
  /** Aborts the upstream call (the bridge gave up on it). */
  abort: AbortController;
}

/** The prefix of every requestState the bridge issues (a 2025-era upstream never issues one). */
export const BRIDGE_STATE_PREFIX = 'gw-input:';
/** The prefix of every JSON-RPC id the bridge issues on a 2025-era caller's stream (a random UUID follows). */
export const STREAM_REQUEST_ID_PREFIX = 'gw-ask-';

/** A server-to-client JSON-RPC request as written on a caller's response stream. */
export interface StreamRequest {
  jsonrpc: '2.0';
  id: string;
  method: UpstreamInputRequest['method'];
  params?: Record<string, unknown>;
}

/** Writes one message on the caller's own response stream; rejects when it cannot (the stream is gone). */
export type StreamWriter = (message: StreamRequest) => Promise<void>;

/** One call's questions to a 2025-era caller on its stream (see {@link InputBridge.relayOnStream}). */
export interface StreamRelay {
  /**
   * Writes `request` on the caller's stream under a fresh id and resolves with the result the caller's
   * client POSTs back. Rejects with a `ProtocolError` carrying the caller's JSON-RPC error, or with
   * {@link BridgeClosedError} when nobody will answer: the stream could not be written, no answer came
   * within the relay's `timeoutMs`, or the call ended first.
   */
  ask(request: UpstreamInputRequest): Promise<Record<string, unknown>>;
  /** Ends the relay (the call is over): every question still waiting is given up. */
  close(why: string): void;
}

interface StreamQuestion {
  owner: string;
  relay: Set<string>;
  timer: NodeJS.Timeout;
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

/** Thrown to the upstream for a question nobody will answer (expired, the caller gave up). */
export class BridgeClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BridgeClosedError';
  }
}

export class InputBridge {
  private readonly calls = new Map<string, PendingCall<unknown>>();
  /** Questions written on 2025-era callers' streams, by the id the bridge issued. */
  private readonly questions = new Map<string, StreamQuestion>();

  /** @param ttlMs - how long a call waits for the caller's retry after an InputRequiredResult. */
  constructor(private readonly ttlMs: number) {}

  /** Calls waiting for a caller's answers (tests, metrics). */
  get size(): number {
    return this.calls.size;
  }

  /** Questions on 2025-era callers' streams still waiting for their answer (tests, metrics). */
  get waitingOnStreams(): number {
    return this.questions.size;
  }

  /**
   * Starts an upstream call for `owner` calling `subject` (an opaque key of the upstream, method and name the
   * call was admitted for: a retry must carry the same, {@link InputBridge.resume}). `start` receives the upstream-bound abort signal (owned by the
   * bridge: the call outlives the caller's first request) and `ask`, which the upstream client's request
   * handlers call with each input request; `callerSignal` cancels the call while a turn waits on it.
   */
  begin<R>(
    owner: string,
    subject: string,
    start: (ask: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>, signal: AbortSignal) => Promise<R>,
    callerSignal?: AbortSignal,
  ): Promise<BridgeOutcome<R>> {
    const pending: PendingCall<R> = { owner, subject, call: undefined as unknown as Promise<R>, waiting: new Map(), next: 1, abort: new AbortController() };
    const ask = (request: UpstreamInputRequest) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const key = `${request.method.replace(/\W+/g, '-')}-${pending.next++}`;
        pending.waiting.set(key, { request, resolve, reject });
        pending.wake?.();
      });
    pending.call = start(ask, pending.abort.signal);
    // Observed by every turn; never an unhandled rejection while no turn is waiting.
    pending.call.catch(() => undefined);
    return this.turn(randomUUID(), pending, callerSignal);
  }

  /**
   * Resumes the call a retry's `requestState` names with its `inputResponses` (key -> the result the
   * caller's client produced). Undefined when the state names no call of this owner and subject (expired,
   * forged, another caller's, or retried under another name: that call keeps waiting for its own retry).
   * Requests the retry does not answer are asked again.
   */
  resume(
    owner: string,
    subject: string,
    requestState: string,
    responses: Record<string, unknown> | undefined,
    callerSignal?: AbortSignal,
  ): Promise<BridgeOutcome<unknown>> | undefined {
    const id = requestState.startsWith(BRIDGE_STATE_PREFIX) ? requestState.slice(BRIDGE_STATE_PREFIX.length) : undefined;
    const pending = id === undefined ? undefined : this.calls.get(id);
    if (!pending || pending.owner !== owner || pending.subject !== subject) return undefined;
    clearTimeout(pending.expiry);
    this.calls.delete(id!);
    for (const [key, response] of Object.entries(responses ?? {})) {
      const waiting = pending.waiting.get(key);
      if (!waiting || typeof response !== 'object' || response === null) continue;
      pending.waiting.delete(key);
      waiting.resolve(response as Record<string, unknown>);
    }
    return this.turn(id!, pending, callerSignal);
  }

  /**
   * The relay of one call of `owner` (a 2025-era caller's credential digest) whose answer is a stream the
   * caller reads: each question of the upstream is written with `write` as a JSON-RPC request whose id
   * the bridge issues ({@link STREAM_REQUEST_ID_PREFIX} + a random UUID: unique, not guessable), and
   * waits at most `timeoutMs` for {@link answer}. Every method is relayed: a stateless 2025 leg keeps no
   * trace of the capabilities the caller declared in its initialize (another POST, perhaps another
   * instance), so the caller's client answers for itself (-32601 from a client without the capability).
   */
  relayOnStream(owner: string, write: StreamWriter, timeoutMs: number): StreamRelay {
    const mine = new Set<string>();
    let closed: string | undefined;
    return {
      ask: (request) => {
        if (closed !== undefined) return Promise.reject(new BridgeClosedError(`the gateway's caller will not answer: ${closed}`));
        const id = `${STREAM_REQUEST_ID_PREFIX}${randomUUID()}`;
        const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
          const timer = setTimeout(() => this.giveUp(id, `no answer within ${timeoutMs} ms`), timeoutMs);
          timer.unref?.();
          this.questions.set(id, { owner, relay: mine, timer, resolve, reject });
          mine.add(id);
        });
        const message: StreamRequest = { jsonrpc: '2.0', id, method: request.method, ...(request.params !== undefined ? { params: request.params } : {}) };
        Promise.resolve()
          .then(() => write(message))
          .catch((error: unknown) => this.giveUp(id, `its stream could not be written (${(error as Error)?.message ?? String(error)})`));
        return answered;
      },
      close: (why) => {
        closed ??= why;
        for (const id of [...mine]) this.giveUp(id, why);
      },
    };
  }

  /**
   * A JSON-RPC response `owner` POSTed (2025-11-25 basic/transports §Sending Messages to the Server):
   * true when it answers a question of that owner still waiting (a `result` object, or an `error` with an
   * integer code and a string message), which then resolves or rejects; false otherwise, alike for an id
   * never issued, answered already, given up, or issued to another owner (whose question keeps waiting).
   */
  answer(owner: string, message: Record<string, unknown>): boolean {
    const id = message.id;
    const question = typeof id === 'string' ? this.questions.get(id) : undefined;
    if (!question || question.owner !== owner) return false;
    const { result, error } = message as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    const isResult = 'result' in message && !('error' in message) && result !== null && typeof result === 'object' && !Array.isArray(result);
    const isError = 'error' in message && !('result' in message) && Number.isInteger(error?.code) && typeof error?.message === 'string';
    if (!isResult && !isError) return false;
    this.forget(id as string, question);
    if (isResult) question.resolve(result as Record<string, unknown>);
    else question.reject(new ProtocolError(error!.code as number, error!.message as string, error!.data));
    return true;
  }

  /** Gives up every waiting call and question (shutdown). */
  close(): void {
    for (const [id, pending] of this.calls) this.drop(id, pending, 'the gateway is shutting down');
    for (const id of [...this.questions.keys()]) this.giveUp(id, 'the gateway is shutting down');
  }

  private giveUp(id: string, why: string): void {
    const question = this.questions.get(id);
    if (!question) return;
    this.forget(id, question);
    question.reject(new BridgeClosedError(`the gateway's caller will not answer: ${why}`));
  }

  private forget(id: string, question: StreamQuestion): void {
    clearTimeout(question.timer);
    this.questions.delete(id);
    question.relay.delete(id);
  }

  /** Waits until the call finishes or asks for input (the upstream may send several requests at once: one tick gathers them). */
  private async turn<R>(id: string, pending: PendingCall<R>, callerSignal?: AbortSignal): Promise<BridgeOutcome<R>> {
    const onAbort = () => this.drop(id, pending as PendingCall<unknown>, 'the caller cancelled the request');
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    try {
      const asked = new Promise<'asked'>((resolve) => {
        pending.wake = () => setImmediate(() => resolve('asked'));
        if (pending.waiting.size > 0) pending.wake();
      });
      const outcome = await Promise.race([pending.call.then((value) => ({ value })), asked]);
      if (outcome !== 'asked') return { kind: 'result', value: outcome.value };
      pending.wake = undefined;
      this.calls.set(id, pending as PendingCall<unknown>);
      pending.expiry = setTimeout(() => this.drop(id, pending as PendingCall<unknown>, `no retry within ${this.ttlMs} ms`), this.ttlMs);
      pending.expiry.unref?.();
      const inputRequests = Object.fromEntries([...pending.waiting].map(([key, w]) => [key, w.request]));
      return { kind: 'input_required', result: { resultType: 'input_required', inputRequests, requestState: `${BRIDGE_STATE_PREFIX}${id}` } };
    } finally {
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private drop(id: string, pending: PendingCall<unknown>, why: string): void {
    clearTimeout(pending.expiry);
    this.calls.delete(id);
    for (const waiting of pending.waiting.values()) waiting.reject(new BridgeClosedError(`the gateway's caller will not answer: ${why}`));
    pending.waiting.clear();
    pending.abort.abort(new BridgeClosedError(why));
  }
}
