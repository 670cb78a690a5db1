import { ProtocolError } from '@modelcontextprotocol/server';
import { createCaller } from '../policy/caller.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import { reportMessage } from '../mcp/message-metrics.ts';
import { dispatch, dispatchContext, guarded, toolsListing } from '../mcp/server.ts';
import type { CallTarget, Surface } from '../ports.ts';
import { ERROR_CODE, errorResponse, inBandErrorStatus } from '../wire/jsonrpc.ts';
import type { PlainRequest, RequestView } from '../wire/requests.ts';
import { callToolAnswer, errorCodeFor, projectionFor, toolsListAnswer } from '../wire/server-codec.ts';
import { LEGACY_SSE_HEADERS, sseMessageEvent } from '../wire/sse.ts';
import type { Listing } from '../catalog/listing.ts';
import { COMPRESS_MIN_BYTES, acceptsGzip, gzippedListingAnswer } from '../mcp/listing-gzip.ts';
import { listingToolsJson } from '../mcp/listing-wire.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import type { StreamWriter } from '../upstream/input-bridge.ts';
import type { Exchange } from './exchange.ts';
import { Cancellation } from '../wire/cancellation.ts';

/**
 * Answers a plain request (wire/requests.ts `plainRequest`) without the SDK's per-request Server: the same dispatch (`dispatch`,
 * the one table of arms in mcp-server.ts), the same caches, the same upstream client, and the answer
 * the SDK handler would give, byte for byte in content: the 2026-07-28 encode contract (resultType,
 * cache fields on tools/list, serverInfo in `_meta`), the 2025 stateless leg's single SSE `message`
 * event, and in-band errors with their code and data. tools/list answers write the listing's cached
 * UTF-8 JSON (listing.ts) instead of serialising the tools again. Why: measured, the SDK's parse, validate,
 * per-request Server and web Request/Response conversion were most of the gateway's own time per call
 * (README, Performance). Returns false, having answered nothing, when the upstreams declare logging
 * (their log messages would be relayed on an SSE stream only the SDK handler opens) or are not yet
 * described; the caller then hands the request to the SDK. Counted in `mcp_requests_total` as the
 * SDK path counts it.
 */
export async function answerPlainRequest(
  ctx: Exchange,
  runtime: GatewayRuntime,
  surface: Surface,
  authenticated: AuthenticatedRequest,
  plain: PlainRequest,
  target?: CallTarget,
): Promise<boolean> {
  const info = await runtime.upstreamSet.describe({ credential: authenticated.credential, requestId: authenticated.requestId }).catch(() => undefined);
  if (!info || (plain.method === 'tools/call' && info.capabilities.logging !== undefined)) return false;

  const { log } = runtime;
  const request = new PlainRequestView(plain);
  let answered = false;
  let callerLeft = false;
  ctx.res.once('close', () => {
    if (answered) return;
    callerLeft = true;
    request.abort(new Error(runtime.closingConnections ? 'the gateway shut down before it was answered' : 'the caller closed the connection'));
  });
  // 2025-era: the SSE answer opens early only if an upstream asks the caller something mid-call.
  const stream = plain.era === 'legacy' && plain.method === 'tools/call' ? lazyLegacyStream(ctx) : undefined;
  const d = dispatchContext(
    {
      runtime,
      surface,
      caller: createCaller(runtime, authenticated, plain.era),
      request,
      project: projectionFor(plain.era),
      withoutStructuredContent: undefined,
      callerStream: stream?.write,
      target,
      runId: undefined,
    },
    log,
    authenticated.requestId,
  );
  const labels = { endpoint: surface.name, era: plain.era };
  // The SDK's 2025 leg has sent its 200 and SSE headers before the handler runs (the access log sees 200 even if the caller leaves).
  if (plain.era === 'legacy') ctx.status = 200;
  // The JSON-RPC message in pieces: a tools/list answer keeps the listing's cached bytes as one piece.
  let message: (string | Buffer)[];
  let status = 200;
  let outcome: 'ok' | 'error' = 'ok';
  let listing: Listing | undefined;
  let ttlMs = 0;
  try {
    if (plain.method === 'tools/list') {
      ({ listing, ttlMs } = await guarded('tools/list', d, () => toolsListing(d, undefined)));
      message = listingAnswer(listing, ttlMs, plain);
    } else message = [callToolAnswer(plain.era, plain.id, (await dispatch('tools/call', callRequest(plain), d)) as Record<string, unknown>)];
  } catch (error) {
    const {
      code,
      message: text,
      data,
    } = error instanceof ProtocolError ? error : new ProtocolError(ERROR_CODE.internalError, 'the gateway failed to answer this request');
    const sent = errorCodeFor(plain.era, code);
    status = inBandErrorStatus(plain.era, sent);
    message = [errorResponse('in-band', plain.id, sent, text, data)];
    outcome = 'error';
  }
  answered = true;
  // A caller that went away got no answer: an error, as the SDK path counts an exchange closed without one.
  reportMessage(runtime.outcomes, labels, plain.method, callerLeft ? 'error' : outcome);
  if (stream?.opened()) stream.end(sseMessageEvent(message));
  else if (plain.era === 'legacy') {
    // The SDK's stateless 2025 leg answers every request as one SSE `message` event.
    ctx.set(LEGACY_SSE_HEADERS);
    respond(ctx, status, sseMessageEvent(message));
  } else {
    ctx.set('content-type', 'application/json');
    // Large listings in gzip when accepted (listing-gzip.ts); never the SSE answers above.
    if (listing && outcome === 'ok' && runtime.config.dispatch.compressListings && listing.bytes >= COMPRESS_MIN_BYTES) {
      ctx.set('vary', 'Accept-Encoding');
      if (acceptsGzip(ctx.get('accept-encoding'))) {
        ctx.set('content-encoding', 'gzip');
        message = gzippedListingAnswer(listing, ttlMs, plain.id);
      }
    }
    respond(ctx, status, message);
  }
  return true;
}

/** Answers from this many UTF-16 code units on are written as a Buffer ({@link respond}). */
const LARGE_ANSWER_CHARS = 64 * 1024;

/**
 * Writes the answer itself (Koa steps aside, as for the SDK handler): the pieces go out as they are,
 * so a large listing's cached bytes are not copied into a new string or buffer per request.
 */
function respond(ctx: Exchange, status: number, pieces: readonly (string | Buffer)[]): void {
  ctx.status = status;
  ctx.respond = false;
  const res = ctx.res;
  // All strings (every tools/call answer): one string, which node:http sends with the headers in one
  // write; separate pieces cost a writev each (measured: the largest single cost of a fast-path call).
  if (pieces.every((piece) => typeof piece === 'string')) {
    const body = pieces.join('');
    // A large one as bytes: node:http writes an answer corked, and a corked string write keeps the
    // string (headers + body, flattened) beside its UTF-8 copy until the socket has sent it all: twice
    // the answer held per connection whose client reads slowly or not at all (measured, 8 MB for a 4 MB
    // answer). A Buffer is sent as it is, and the string can go at once.
    if (body.length >= LARGE_ANSWER_CHARS) {
      const bytes = Buffer.from(body);
      res.setHeader('content-length', bytes.length);
      res.end(bytes);
      return;
    }
    res.setHeader('content-length', Buffer.byteLength(body));
    res.end(body);
    return;
  }
  res.setHeader(
    'content-length',
    pieces.reduce((n, piece) => n + (typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length), 0),
  );
  for (const piece of pieces.slice(0, -1)) res.write(piece);
  res.end(pieces.at(-1));
}

/**
 * The 2025 leg's SSE answer, opened (200 and the SSE headers, no length) when the first server-to-client
 * request is written on it: a 2025-era upstream's question relayed to the caller (upstream/input-bridge.ts),
 * which the SDK's stateless leg would write on the same stream before the response. A call that asks
 * nothing never opens it and is answered whole by {@link respond}.
 */
function lazyLegacyStream(ctx: Exchange): { write: StreamWriter; opened(): boolean; end(pieces: readonly (string | Buffer)[]): void } {
  let opened = false;
  const res = ctx.res;
  return {
    write: (message) => {
      if (res.writableEnded || res.destroyed) return Promise.reject(new Error('the caller closed its stream'));
      if (!opened) {
        opened = true;
        ctx.respond = false;
        ctx.set(LEGACY_SSE_HEADERS);
        res.writeHead(200);
      }
      return new Promise<void>((resolve, reject) =>
        res.write(sseMessageEvent([JSON.stringify(message)]).join(''), (error) => (error ? reject(error) : resolve())),
      );
    },
    opened: () => opened,
    end: (pieces) => {
      if (res.writableEnded || res.destroyed) return;
      // Large pieces as bytes, as respond() writes them: these writes are corked too.
      for (const piece of pieces) res.write(typeof piece === 'string' && piece.length >= LARGE_ANSWER_CHARS ? Buffer.from(piece) : piece);
      res.end();
    },
  };
}

/**
 * The request of a plain call as the arms read it (wire/requests.ts RequestView). Its cancellation is the
 * gateway's own ({@link Cancellation}: no AbortController unless something asks for `signal`). No progress
 * token was sent and the upstreams do not log: nothing is ever sent on the notification channels.
 */
class PlainRequestView implements RequestView {
  readonly id: PlainRequest['id'];
  readonly _meta: RequestView['_meta'];
  readonly envelope: RequestView['envelope'];
  readonly inputResponses = undefined;
  readonly cancellation = new Cancellation();
  /** Aborts the call (a 2025-era `notifications/cancelled` reaches it through inflight-calls.ts). */
  readonly abort = (reason: unknown): void => this.cancellation.abort(reason);

  constructor(plain: PlainRequest) {
    this.id = plain.id;
    this._meta = plain.envelope as RequestView['_meta'];
    this.envelope = plain.envelope as RequestView['envelope'];
  }

  // Own fields holding shared functions, so a copy of the view (`{ ...request }`: run_code's inner calls) keeps them.
  readonly requestState = noRequestState;
  readonly notify = nothingSent;
  readonly log = nothingSent;

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}

const noRequestState = (): undefined => undefined;
const nothingSent = async (): Promise<void> => {};

function callRequest(plain: PlainRequest) {
  return { method: 'tools/call' as const, params: { name: plain.name!, ...(plain.arguments !== undefined ? { arguments: plain.arguments } : {}) } };
}

/** A tools/list answer from the listing's cached JSON (its tools for the era: listing-wire.ts). */
function listingAnswer(listing: Listing, ttlMs: number, plain: PlainRequest): (string | Buffer)[] {
  return toolsListAnswer(plain.era, plain.id, listingToolsJson(listing, plain.era), ttlMs);
}
