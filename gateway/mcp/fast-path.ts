import type { IncomingHttpHeaders } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  specTypeSchemas,
} from '@modelcontextprotocol/server';
import { createCaller } from '../policy/caller.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import { countMessage, methodLabel } from './message-metrics.ts';
import { dispatch, guarded, toolsListing, type DispatchContext, type RequestView, type Surface } from './server.ts';
import { dispatchRuntimeOf } from './types.ts';
import {
  GATEWAY_SERVER_INFO,
  LEGACY_SSE_HEADERS,
  MODERN_TOOLS_LIST_AFTER_TTL,
  MODERN_TOOLS_LIST_BEFORE_TTL,
  errorMessage,
  isPlainObject,
  legacyListingJson,
  modernListingJson,
  projectionFor,
  sseMessageEvent,
} from './wire.ts';
import type { Listing } from '../catalog/listing.ts';
import { COMPRESS_MIN_BYTES, acceptsGzip, gzippedListingAnswer } from './listing-gzip.ts';
import { requestLog } from '../obs/request-context.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import type { StreamWriter } from '../upstream/input-bridge.ts';
import type { Exchange } from '../http/exchange.ts';

/** The per-request-envelope revisions the SDK (2.4) serves; the SDK does not export its list. */
export const MODERN_REVISIONS: ReadonlySet<string> = new Set(['2026-07-28']);
/** The initialize-based revisions (2024-10-07 to 2025-11-25) the SDK serves statelessly. */
const LEGACY_REVISIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => !MODERN_REVISIONS.has(v)));
/** Every revision the gateway serves, newest first: an UnsupportedProtocolVersionError's `supported` (classify.ts). */
export const SERVED_REVISIONS: readonly string[] = [...MODERN_REVISIONS, ...LEGACY_REVISIONS].sort().reverse();
/** What the SDK's 2026-07-28 leg requires in `_meta` and the SDK clients send; any other key takes the SDK path. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
/** MissingRequiredClientCapability (2026-07-28): the one in-band error the SDK answers with HTTP 400. */
const MISSING_CLIENT_CAPABILITY = -32021;

/** A plain tools/list or tools/call: the only requests the fast path answers. */
export interface PlainRequest {
  era: 'modern' | 'legacy';
  id: string | number;
  method: 'tools/list' | 'tools/call';
  /** tools/call: the tool name and arguments. */
  name?: string;
  arguments?: Record<string, unknown>;
  /** 2026-07-28: the `_meta` envelope as sent (protocolVersion, clientInfo, clientCapabilities). */
  envelope?: Record<string, unknown>;
}

const MESSAGE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const CALL_PARAMS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
const LIST_PARAMS: ReadonlySet<string> = new Set(['_meta']);

/** `value` as the spec type's schema outputs it (the SDK's own schemas: schema key order, defaults), or undefined when it breaks the type. */
function asSpecType(name: 'Implementation' | 'ClientCapabilities' | 'CallToolResult', value: unknown): Record<string, unknown> | undefined {
  const outcome = specTypeSchemas[name]['~standard'].validate(value);
  return outcome.issues === undefined ? (outcome.value as Record<string, unknown>) : undefined;
}

const onlyKeys = (value: Record<string, unknown>, allowed: ReadonlySet<string>) => Object.keys(value).every((key) => allowed.has(key));

/**
 * The request when it is one the fast path answers exactly as the SDK handler would, else undefined
 * (the SDK path then answers it, errors included). Plain means: a single JSON-RPC request (`jsonrpc`,
 * `id` string or safe integer, `method`, `params`, nothing else) for tools/list without a cursor or
 * tools/call with a string name and object arguments; `Accept` naming both JSON and SSE (what SDK
 * clients send); and either
 * - 2026-07-28: the `MCP-Protocol-Version` header, `_meta` holding exactly the envelope the SDK clients
 *   send (protocolVersion equal to the header; clientInfo and clientCapabilities valid against the SDK's
 *   spec schemas for Implementation and ClientCapabilities) and `Mcp-Method`/`Mcp-Name` equal to the body (spec basic/transports/streamable-http §Request
 *   Metadata): anything the SDK would check and might refuse is out; or
 * - an initialize-based revision in the header and no `_meta` at all (no progress token, no custom keys).
 * Retried multi-round-trip requests, progress, log levels and trace context take the SDK path.
 */
export function plainRequest(message: unknown, headers: IncomingHttpHeaders): PlainRequest | undefined {
  if (!isPlainObject(message) || message.jsonrpc !== '2.0' || !onlyKeys(message, MESSAGE_KEYS)) return undefined;
  const { id, method, params = {} } = message;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  if ((method !== 'tools/list' && method !== 'tools/call') || !isPlainObject(params)) return undefined;
  // Compared as written, as the SDK's transport does (anything else gets its 406 there).
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  const version = headers['mcp-protocol-version'];
  if (typeof version !== 'string') return undefined;

  let name: string | undefined;
  let args: Record<string, unknown> | undefined;
  if (method === 'tools/call') {
    if (typeof params.name !== 'string' || !onlyKeys(params, CALL_PARAMS)) return undefined;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
    name = params.name;
    args = params.arguments as Record<string, unknown> | undefined;
  } else if (!onlyKeys(params, LIST_PARAMS)) return undefined;

  const meta = params._meta;
  if (LEGACY_REVISIONS.has(version)) return meta === undefined ? { era: 'legacy', id, method, name, arguments: args } : undefined;
  if (!MODERN_REVISIONS.has(version) || !isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== version) return undefined;
  // The SDK validates the envelope against the spec's types and answers 400 when it breaks them.
  if (!asSpecType('Implementation', meta[CLIENT_INFO_META_KEY]) || !asSpecType('ClientCapabilities', meta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  if (headers['mcp-method'] !== method || headers['mcp-name'] !== name) return undefined;
  return { era: 'modern', id, method, name, arguments: args, envelope: meta };
}

/**
 * Answers a {@link plainRequest} without the SDK's per-request Server: the same dispatch (`dispatch`,
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
): Promise<boolean> {
  const info = await runtime.upstreamSet.describe({ credential: authenticated.credential, requestId: authenticated.requestId }).catch(() => undefined);
  if (!info || (plain.method === 'tools/call' && info.capabilities.logging !== undefined)) return false;

  const { metrics, log } = runtime;
  const aborter = new AbortController();
  let answered = false;
  let callerLeft = false;
  ctx.res.once('close', () => {
    if (answered) return;
    callerLeft = true;
    aborter.abort(new Error('the caller closed the connection'));
  });
  const request: RequestView = {
    id: plain.id,
    signal: aborter.signal,
    abort: (reason) => aborter.abort(reason),
    _meta: plain.envelope as RequestView['_meta'],
    envelope: plain.envelope as RequestView['envelope'],
    inputResponses: undefined,
    requestState: () => undefined,
    // No progress token was sent and the upstreams do not log: nothing is ever sent on these channels.
    notify: async () => {},
    log: async () => {},
  };
  // 2025-era: the SSE answer opens early only if an upstream asks the caller something mid-call.
  const stream = plain.era === 'legacy' && plain.method === 'tools/call' ? lazyLegacyStream(ctx) : undefined;
  const d: DispatchContext = {
    runtime: dispatchRuntimeOf(runtime),
    surface,
    caller: createCaller(runtime, authenticated, plain.era),
    request,
    project: projectionFor(plain.era),
    // Looked up when something is logged: most calls log nothing.
    get log() {
      return requestLog(log, authenticated.requestId);
    },
    ...(stream ? { callerStream: stream.write } : {}),
  };
  const labels = { endpoint: surface.name, era: plain.era, method: methodLabel(plain.method) };
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
      message = await listingAnswer(listing, ttlMs, plain);
    } else message = [resultAnswer(plain, (await dispatch('tools/call', callRequest(plain), d)) as Record<string, unknown>)];
  } catch (error) {
    const { code, message: text, data } = error instanceof ProtocolError ? error : new ProtocolError(-32603, 'the gateway failed to answer this request');
    if (code === MISSING_CLIENT_CAPABILITY && plain.era === 'modern') status = 400;
    message = [errorMessage(plain.id, code, text, data)];
    outcome = 'error';
  }
  answered = true;
  // A caller that went away got no answer: an error, as the SDK path counts an exchange closed without one.
  countMessage(metrics, labels, callerLeft ? 'error' : outcome);
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
      for (const piece of pieces) res.write(piece);
      res.end();
    },
  };
}

function callRequest(plain: PlainRequest) {
  return { method: 'tools/call' as const, params: { name: plain.name!, ...(plain.arguments !== undefined ? { arguments: plain.arguments } : {}) } };
}

/**
 * `{"result":…,"jsonrpc":"2.0","id":…}` in the SDK's key order. The SDK server passes every complete
 * tools/call result through the spec's CallToolResult schema (content defaulted to [], fields in schema
 * order, unknown ones kept), then the 2026-07-28 encode contract; so does this. A result the schema
 * does not take as it is (a 2026 non-object structuredContent) was already checked by the upstream
 * client and is sent unchanged.
 */
function resultAnswer(plain: PlainRequest, result: Record<string, unknown>): string {
  // input_required and a relayed task (SEP-2663 `resultType: "task"`) are not CallToolResults: sent as they are.
  const checked = (result.resultType === 'input_required' || result.resultType === 'task' ? undefined : asSpecType('CallToolResult', result)) ?? result;
  return JSON.stringify({ result: plain.era === 'modern' ? encodeModern(checked) : checked, jsonrpc: '2.0', id: plain.id });
}

/**
 * The 2026-07-28 encode contract for a tools/call result, as the SDK applies it to a handler's result:
 * `resultType` stamped `complete` unless the handler set one (tools/call may answer `input_required`),
 * no cache fields (tools/call is not cacheable), and the server's identity added to `_meta`.
 */
function encodeModern(result: Record<string, unknown>): Record<string, unknown> {
  const stamped = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: GATEWAY_SERVER_INFO } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: GATEWAY_SERVER_INFO } };
}

/**
 * A tools/list answer from the listing's cached JSON. 2026-07-28 adds what the SDK path's arm and the
 * SDK's encode contract add to the gateway's `{ tools }`: resultType, this answer's cache hint (private,
 * `ttlMs`: mcp/server.ts `privateTtlMs`) and serverInfo (wire.ts `modernToolsListFields`).
 */
async function listingAnswer(listing: Listing, ttlMs: number, plain: PlainRequest): Promise<(string | Buffer)[]> {
  const hints = plain.era === 'modern' ? `${MODERN_TOOLS_LIST_BEFORE_TTL}${ttlMs}${MODERN_TOOLS_LIST_AFTER_TTL}` : '';
  return [
    '{"result":{"tools":',
    plain.era === 'legacy' ? await legacyListingJson(listing) : modernListingJson(listing),
    `${hints}},"jsonrpc":"2.0","id":${JSON.stringify(plain.id)}}`,
  ];
}
