import type { Cancellation } from './cancellation.ts';
import type { IncomingHttpHeaders } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  UnsupportedProtocolVersionError,
  classifyInboundRequest,
  specTypeSchemas,
  type InboundClassificationOutcome,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { clip } from './clip.ts';
import { ERROR_CODE, isEchoableId, isPlainObject, type RequestId } from './jsonrpc.ts';
import { decodeParamValue, encodeParamValue, MCP_NAME_SOURCE } from './param-value.ts';
import { LEGACY_REVISIONS, MODERN_REVISIONS, servedEra, type Era } from './revisions.ts';
import { ANSWER_MEDIA_TYPES, chooseRepresentation } from './negotiation.ts';
import { definesStructuredContent } from './server-codec.ts';

/**
 * Reading a request the gateway serves, before the SDK does: which requests are plain enough for the
 * fast path to answer exactly as the SDK would (the SDK would route them, unrefused, to the same era:
 * tests/in-process/wire-oracle.test.ts runs the SDK's `classifyInboundRequest` beside this on every
 * case), and what a request's `_meta` claims. Pure.
 */

/**
 * The parts of the SDK's per-request context (`ServerContext.mcpReq`) the gateway reads of a request it
 * answers or forwards: its id and abort signal, its `_meta` and 2026-07-28 envelope, multi-round-trip
 * retry fields, and the request-scoped notification channels. The SDK handler supplies its own; the
 * fast path (http/fast-path.ts) supplies one for the plain requests it answers without the SDK.
 */
export type RequestView = Pick<ServerContext['mcpReq'], 'id' | 'signal' | '_meta' | 'envelope' | 'inputResponses' | 'requestState' | 'notify' | 'log'> & {
  /** Aborts `signal`, when the gateway owns its controller (the fast path): a 2025-era cancellation then aborts it directly. */
  readonly abort?: (reason: unknown) => void;
  /**
   * The request's cancellation, when the gateway owns it (the fast path): forwarded in place of `signal`,
   * which is then made only if something asks for it (wire/cancellation.ts).
   */
  readonly cancellation?: Cancellation;
};

/** A plain tools/list or tools/call: the only requests the fast path answers. */
export interface PlainRequest {
  era: Era;
  id: RequestId;
  method: 'tools/list' | 'tools/call';
  /** tools/call: the tool name and arguments. */
  name?: string;
  arguments?: Record<string, unknown>;
  /** 2026-07-28: the `_meta` envelope as sent (protocolVersion, clientInfo, clientCapabilities). */
  envelope?: Record<string, unknown>;
}

/** What the SDK's 2026-07-28 leg requires in `_meta` and the SDK clients send; any other key takes the SDK path. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const CALL_PARAMS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
const LIST_PARAMS: ReadonlySet<string> = new Set(['_meta']);

/** Whether `value` is valid against the SDK's own schema of the spec type. */
function isSpecType(name: 'Implementation' | 'ClientCapabilities', value: unknown): boolean {
  return specTypeSchemas[name]['~standard'].validate(value).issues === undefined;
}

/** Envelopes whose verdict is remembered, and the longest one remembered (JSON characters): at most about 1 MB. */
const ENVELOPE_MEMO_SIZE = 256;
const ENVELOPE_MEMO_CHARS = 4096;
const envelopeVerdicts = new Map<string, boolean>();

/**
 * Whether a 2026-07-28 envelope's clientInfo and clientCapabilities are valid spec types. A client sends
 * the same envelope on every request and the two schema checks were about 1.4% of a forwarded call's CPU
 * (docs/performance.md), so verdicts are remembered by the pair's JSON text. Parsed JSON maps to its text
 * one to one except a number too large for a double (`1e400` parses to Infinity, which stringifies as
 * `null`): a text with `null` in it is never remembered. Bounded: past {@link ENVELOPE_MEMO_SIZE}
 * envelopes the oldest is forgotten; one longer than {@link ENVELOPE_MEMO_CHARS} is checked every time.
 */
function validEnvelope(clientInfo: unknown, clientCapabilities: unknown): boolean {
  let text: string;
  try {
    text = JSON.stringify([clientInfo ?? null, clientCapabilities ?? null]);
  } catch {
    // Nested past what JSON.stringify's recursion holds (4,500 levels: protocol try-out, an unhandled RangeError, 200
    // -32603 without the id): no fast path; the SDK path's limits.jsonDepth refuses it with 400 naming the path.
    return false;
  }
  const known = envelopeVerdicts.get(text);
  if (known !== undefined) return known;
  const verdict = isSpecType('Implementation', clientInfo) && isSpecType('ClientCapabilities', clientCapabilities);
  if (text.length <= ENVELOPE_MEMO_CHARS && !text.includes('null')) {
    if (envelopeVerdicts.size >= ENVELOPE_MEMO_SIZE) envelopeVerdicts.delete(envelopeVerdicts.keys().next().value!);
    envelopeVerdicts.set(text, verdict);
  }
  return verdict;
}

const onlyKeys = (value: Record<string, unknown>, allowed: ReadonlySet<string>) => Object.keys(value).every((key) => allowed.has(key));

/**
 * The request when it is one the fast path answers exactly as the SDK handler would, else undefined
 * (the SDK path then answers it, errors included). Plain means: a single JSON-RPC request (`jsonrpc`,
 * `id` string or safe integer, `method`, `params`, nothing else) for tools/list without a cursor or
 * tools/call with a string name and object arguments; an `Accept` under which the representation the
 * SDK would answer in (2025: SSE, 2026-07-28: JSON) is the one negotiated (wire/negotiation.ts); and either
 * - 2026-07-28: the `MCP-Protocol-Version` header, `_meta` holding exactly the envelope the SDK clients
 *   send (protocolVersion equal to the header; clientInfo and clientCapabilities valid against the SDK's
 *   spec schemas for Implementation and ClientCapabilities) and `Mcp-Method`/`Mcp-Name` equal to the body
 *   (spec basic/transports/streamable-http §Request Metadata): anything the SDK would check and might
 *   refuse is out; or
 * - an initialize-based revision in the header and no `_meta` at all (no progress token, no custom keys).
 * Retried multi-round-trip requests, progress, log levels and trace context take the SDK path.
 */
export function plainRequest(message: unknown, headers: IncomingHttpHeaders): PlainRequest | undefined {
  if (!isPlainObject(message) || message.jsonrpc !== '2.0' || !onlyKeys(message, MESSAGE_KEYS)) return undefined;
  const { id, method, params = {} } = message;
  if (!isEchoableId(id)) return undefined;
  if ((method !== 'tools/list' && method !== 'tools/call') || !isPlainObject(params)) return undefined;
  const version = headers['mcp-protocol-version'];
  if (typeof version !== 'string') return undefined;
  // The fast path answers in the SDK's own choice (2025: SSE, 2026-07-28: JSON): only when the caller's Accept keeps it.
  const produced = servedEra(version) === 'legacy' ? 'sse' : 'json';
  if (chooseRepresentation(header(headers, 'accept'), produced) !== produced) return undefined;

  let name: string | undefined;
  let args: Record<string, unknown> | undefined;
  if (method === 'tools/call') {
    if (typeof params.name !== 'string' || !onlyKeys(params, CALL_PARAMS)) return undefined;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
    name = params.name;
    args = params.arguments as Record<string, unknown> | undefined;
  } else if (!onlyKeys(params, LIST_PARAMS)) return undefined;

  const meta = params._meta;
  const era = servedEra(version);
  // Before 2025-06-18 a caller is sent no structuredContent and no outputSchema: the SDK path answers it (mcp/server.ts).
  if (era === 'legacy') return meta === undefined && definesStructuredContent(era, version) ? { era, id, method, name, arguments: args } : undefined;
  if (era !== 'modern' || !isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== version) return undefined;
  // The SDK validates the envelope against the spec's types and answers 400 when it breaks them.
  if (!validEnvelope(meta[CLIENT_INFO_META_KEY], meta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  // Decoded before it is compared (streamable-http §Value Encoding): a sentinel equal to the body as written names another tool.
  const mcpName = headers['mcp-name'];
  if (headers['mcp-method'] !== method || (name === undefined ? mcpName !== undefined : typeof mcpName !== 'string' || decodeParamValue(mcpName) !== name))
    return undefined;
  return { era, id, method, name, arguments: args, envelope: meta };
}

/** A single message's `_meta` protocol-version claim (2026-07-28 per-request envelope), when it is a string. */
export function revisionClaim(message: Record<string, unknown> | undefined): string | undefined {
  const params = message?.params;
  const claim = isPlainObject(params) && isPlainObject(params._meta) ? params._meta[PROTOCOL_VERSION_META_KEY] : undefined;
  return typeof claim === 'string' ? claim : undefined;
}

/** A refusal of the request before any dispatch, as the SDK's entry answers it (its `InboundLadderRejection` fields). */
export interface LadderRejection {
  readonly cell: string;
  readonly httpStatus: number;
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
  /** false: the answer carries `id: null` (the SDK's 2025 transport refuses the exchange, not the request). */
  readonly echoId?: boolean;
}

/**
 * A POST carrying requests whose Accept admits neither representation the gateway answers a request in
 * (wire/negotiation.ts `chooseRepresentation`, RFC 9110 §12.5.1; a `q=0` weight refuses a type), or,
 * for a 2026-07-28 `subscriptions/listen`, no event stream: 406, -32000, both eras (MCP basic/transports/
 * streamable-http: the client MUST accept both), `data.kind` `not_acceptable`. Undefined when acceptable, or when the body holds no
 * request (notifications and responses are answered 202 without a body).
 */
export function acceptRejection(
  headers: IncomingHttpHeaders,
  messages: readonly Record<string, unknown>[],
  era: 'modern' | 'legacy',
): LadderRejection | undefined {
  const requests = messages.filter((m) => typeof m.method === 'string' && 'id' in m);
  if (requests.length === 0) return undefined;
  // A stream in 2026-07-28 only: in a 2025 revision it is an unknown method, answered as any request (client try-out: a 406 about a stream).
  const listen = era === 'modern' && requests.length === 1 && requests[0]!.method === 'subscriptions/listen';
  const accept = header(headers, 'accept');
  if (chooseRepresentation(accept, listen ? 'sse' : 'json', listen) !== undefined) return undefined;
  const shown = accept === undefined ? '' : accept.length > 100 ? `${accept.slice(0, 100)}…` : accept;
  const admits = listen
    ? 'no text/event-stream, the media type a subscriptions/listen stream is sent in'
    : 'neither application/json nor text/event-stream, the media types a request is answered in';
  return {
    cell: 'not-acceptable',
    httpStatus: 406,
    code: ERROR_CODE.serverError,
    message: `Not Acceptable: the Accept header ${JSON.stringify(shown)} admits ${admits}; send Accept: ${ANSWER_MEDIA_TYPES}`,
    // As the 413, 415 and 400 edge refusals name theirs (errors.ts ErrorKind `not_acceptable`).
    data: { kind: 'not_acceptable' },
  };
}

/** The era a request is served in (a 2026-07-28 request: with the message), or the SDK's refusal of it. */
export type Route =
  | { readonly era: 'legacy' }
  | { readonly era: 'modern'; readonly request?: { method: string; params?: unknown } }
  | { readonly refused: LadderRejection };

/** The one header value of a request header, as the SDK's entry reads it (`Headers.get`: repeated ones joined). */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A revision served through initialize claimed in the per-request `_meta` envelope: -32022, saying where it is
 * served (the SDK's bare "Unsupported protocol version: 2025-11-25" told the caller a served revision was not: wire try-out).
 */
function legacyClaimRefusal(claimed: string): Extract<Route, { refused: unknown }>['refused'] {
  const error = new UnsupportedProtocolVersionError({ supported: [...MODERN_REVISIONS], requested: claimed });
  return {
    cell: 'unsupported-modern-revision',
    httpStatus: 400,
    code: error.code,
    message: `Unsupported protocol version: ${JSON.stringify(claimed)} in the _meta envelope, which only ${MODERN_REVISIONS.join(', ')} requests carry; ${claimed} is served after initialize, without the envelope`,
    data: { kind: 'unsupported_protocol_version', ...(error.data as object) },
  };
}

/**
 * How the SDK's HTTP entry routes a POST (`classifyInboundRequest`, the body-primary era ladder of SDK
 * 2.4): the era it is served in, or the rejection the SDK would answer it with (JSON-RPC shape,
 * header/body disagreement -32020, an invalid or missing envelope -32602, and, on the modern route, an
 * envelope claiming a revision the modern codec does not speak: -32022 with the SDK's own error). A
 * 2026-07-28 request then meets the SDK's standard-header rung ({@link standardHeaderRejection}).
 */
export function routeOf(body: unknown, headers: IncomingHttpHeaders): Route {
  const outcome: InboundClassificationOutcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header(headers, 'mcp-protocol-version'),
    mcpMethodHeader: header(headers, 'mcp-method'),
    mcpNameHeader: header(headers, 'mcp-name'),
    body,
  });
  if (outcome.kind === 'reject') {
    // An envelope incomplete for 2026-07-28 that claims a 2025 revision: the revision is the caller's mistake, not the
    // missing field (client try-out: told to add clientCapabilities, then refused the revision); the -32022 below.
    const envelopeClaim = revisionClaim(isPlainObject(body) ? body : undefined);
    if (outcome.code === ERROR_CODE.invalidParams && envelopeClaim !== undefined && LEGACY_REVISIONS.includes(envelopeClaim))
      return { refused: legacyClaimRefusal(envelopeClaim) };
    const { cell, httpStatus, code, message, data } = outcome;
    // A malformed message the SDK names no kind for: `invalid_request`, as the gateway's own -32600 refusals say (client try-out).
    const kind = data === undefined && code === ERROR_CODE.invalidRequest ? { data: { kind: 'invalid_request' } } : {};
    const refused = { cell, httpStatus, code, message, ...(data !== undefined ? { data } : kind) };
    return { refused: code === ERROR_CODE.headerMismatch ? shortMismatch(refused, isPlainObject(body) ? body : undefined) : refused };
  }
  if (outcome.kind === 'legacy') return { era: 'legacy' };
  const claimed = outcome.classification.revision;
  if (claimed !== undefined && LEGACY_REVISIONS.includes(claimed)) return { refused: legacyClaimRefusal(claimed) };
  if (claimed === undefined || !MODERN_REVISIONS.includes(claimed)) {
    const error = new UnsupportedProtocolVersionError({ supported: [...MODERN_REVISIONS], requested: claimed ?? 'unknown' });
    return {
      refused: {
        cell: 'unsupported-modern-revision',
        httpStatus: 400,
        code: error.code,
        message: error.message,
        data: { kind: 'unsupported_protocol_version', ...(error.data as object) },
      },
    };
  }
  return outcome.messageKind === 'request' ? { era: 'modern', request: outcome.message } : { era: 'modern' };
}

/** OWS (RFC 9110 §5.6.3: spaces and tabs) around a field value, removed as the SDK removes it. */
const stripOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '');

/** At most this many characters of a header or body value are echoed in a -32020 answer. */
const ECHOED_CHARS = 64;
/** At most this many characters of a -32020 message: it names both values, and a body value may be long. */
const MESSAGE_CHARS = 400;

/**
 * A -32020 HeaderMismatch as the gateway answers it: the SDK's status, code and message (the message cut
 * at {@link MESSAGE_CHARS}), `data.kind` `header_mismatch` (as every gateway error names its kind), and
 * `data.mismatch` holding the two values that disagree, each cut at
 * {@link ECHOED_CHARS}: the header's as sent (`(missing)` when absent) and the body's (its method, its
 * envelope's protocol version, or the params member `Mcp-Name` mirrors). The SDK puts its whole message
 * in `data.mismatch.body` instead, so a long value came back twice (issue 33).
 */
function shortMismatch(rejection: LadderRejection, message: Record<string, unknown> | undefined): LadderRejection {
  const shown = (rejection.data as { mismatch?: { header?: unknown } } | undefined)?.mismatch?.header;
  return {
    ...rejection,
    message: clip(rejection.message, MESSAGE_CHARS),
    data: {
      kind: 'header_mismatch',
      mismatch: { header: clip(typeof shown === 'string' ? shown : '(missing)', ECHOED_CHARS), body: clip(bodyValueOf(rejection.cell, message), ECHOED_CHARS) },
    },
  };
}

/** The body's side of a header/body disagreement, by the SDK's rejection cell. */
function bodyValueOf(cell: string, message: Record<string, unknown> | undefined): string {
  const method = typeof message?.method === 'string' ? message.method : undefined;
  if (cell.includes('version')) return revisionClaim(message) ?? '(none)';
  if (cell.startsWith('name-header')) {
    const field = method !== undefined && Object.hasOwn(MCP_NAME_SOURCE, method) ? MCP_NAME_SOURCE[method] : undefined;
    const value = field !== undefined && isPlainObject(message?.params) ? message.params[field] : undefined;
    return typeof value === 'string' ? value : '(missing)';
  }
  return method ?? (message === undefined ? '(batch)' : '(missing)');
}

/** A header value byte outside ASCII: raw UTF-8 sent where SEP-2243 asks for its Base64 form. */
const NON_ASCII = /[\u0080-\u00ff]/;

function mismatch(cell: string, shown: string, body: string, message: { method: string; params?: unknown }): LadderRejection {
  return shortMismatch(
    {
      cell,
      httpStatus: 400,
      code: ERROR_CODE.headerMismatch,
      message: `Bad Request: the request headers and body disagree: ${body}`,
      data: { mismatch: { header: shown } },
    },
    message as Record<string, unknown>,
  );
}

/**
 * SEP-2243 standard request headers on a 2026-07-28 request (spec basic/transports/streamable-http
 * §Request Metadata), as the SDK's entry checks them after classifying it (`validateStandardRequestHeaders`,
 * which it does not export): `MCP-Protocol-Version` and `Mcp-Method` present, and `Mcp-Name` present,
 * validly encoded and equal to the body's name, uri or task id on the methods that carry one. HTTP 400,
 * -32020 HeaderMismatch, `data.mismatch` the two values ({@link shortMismatch}); undefined when the headers agree.
 */
export function standardHeaderRejection(headers: IncomingHttpHeaders, message: { method: string; params?: unknown }): LadderRejection | undefined {
  const version = header(headers, 'mcp-protocol-version');
  const method = message.method;
  if (version === undefined) {
    const claimed = revisionClaim(message as Record<string, unknown>);
    return mismatch(
      'version-header-missing',
      '(missing)',
      claimed === undefined
        ? 'the body carries a modern per-request envelope but the required MCP-Protocol-Version header is absent'
        : `the body envelope names protocol version ${claimed} but the required MCP-Protocol-Version header is absent`,
      message,
    );
  }
  if (header(headers, 'mcp-method') === undefined)
    return mismatch('method-header-missing', '(missing)', `the body names method ${method} but the required Mcp-Method header is absent`, message);
  const field = Object.hasOwn(MCP_NAME_SOURCE, method) ? MCP_NAME_SOURCE[method] : undefined;
  if (field === undefined) return undefined;
  const raw = isPlainObject(message.params) ? message.params[field] : undefined;
  const body = typeof raw === 'string' ? raw : undefined;
  const nameHeader = header(headers, 'mcp-name');
  if (nameHeader === undefined) {
    if (body === undefined) return undefined;
    return mismatch('name-header-missing', '(missing)', `the body carries params.${field}="${body}" but the required Mcp-Name header is absent`, message);
  }
  const shown = stripOws(nameHeader);
  const decoded = decodeParamValue(shown);
  if (decoded === undefined) return mismatch('name-header-invalid-encoding', shown, 'the Mcp-Name header carries an invalid Base64 sentinel value', message);
  if (body !== undefined && decoded !== body) {
    const refused = mismatch('name-header-mismatch', shown, `the body carries params.${field}="${body}" but the Mcp-Name header names "${decoded}"`, message);
    // Raw UTF-8 in a header reaches us as Latin-1 ("lÃ­st"): data says how such a name is sent (the
    // message stays the SDK's, word for word: tests/in-process/wire-oracle.test.ts).
    if (!NON_ASCII.test(shown)) return refused;
    return {
      ...refused,
      data: { ...(refused.data as object), hint: `a name outside visible ASCII is sent Base64-encoded: Mcp-Name: ${encodeParamValue(body)}` },
    };
  }
  return undefined;
}
