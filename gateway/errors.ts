import { ProtocolError, type CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolError as UpstreamProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { ERROR_CODE, errorResponse, type RequestId } from './wire/jsonrpc.ts';

/**
 * What went wrong, named after what happened. Every error the gateway produces has one kind, and
 * {@link errorMapping} is the one place that turns a kind into a JSON-RPC code and an HTTP status.
 */
export type ErrorKind =
  | 'parse_error'
  | 'invalid_request'
  | 'batch_not_supported'
  | 'header_mismatch'
  | 'unsupported_protocol_version'
  | 'method_not_found'
  | 'invalid_arguments'
  | 'resource_not_found'
  | 'params_over_limit'
  | 'inexact_number'
  | 'ill_formed_string'
  | 'unknown_tool'
  | 'unauthorized'
  | 'scopes_unavailable'
  | 'auth_unavailable'
  | 'forbidden_origin'
  | 'forbidden_host'
  | 'malformed_target'
  | 'misdirected_request'
  | 'insufficient_scope'
  | 'payload_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'not_acceptable'
  | 'scope_denied'
  | 'call_directly'
  | 'tool_held'
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'upstream_error'
  | 'upstream_rejected'
  | 'output_schema_violation'
  | 'cancelled'
  | 'rate_limited'
  | 'missing_client_capability'
  | 'script_error'
  | 'limit_exceeded'
  | 'configuration_reloaded'
  | 'internal';

/** Who the error is about: the client's request, the gateway, or the upstream behind it. */
export type Blame = 'client' | 'gateway' | 'upstream';

export interface ErrorMapping {
  /** JSON-RPC error code (spec codes; -32000/-32001 implementation-defined transport rejections). */
  code: number;
  /** HTTP status when answered at the edge; 200 when the error travels in-band. */
  httpStatus: number;
  blame: Blame;
}

/**
 * The single mapping from kind to wire. The rule it keeps: -32602 (the request was wrong) only for the
 * client's own mistakes; anything the gateway or upstream failed at is -32603 or an isError result.
 */
export function errorMapping(kind: ErrorKind): ErrorMapping {
  switch (kind) {
    case 'parse_error':
      return { code: ERROR_CODE.parseError, httpStatus: 400, blame: 'client' };
    case 'invalid_request':
      return { code: ERROR_CODE.invalidRequest, httpStatus: 400, blame: 'client' };
    case 'batch_not_supported':
      return { code: ERROR_CODE.invalidRequest, httpStatus: 400, blame: 'client' };
    // SEP-2243 HeaderMismatch (spec 2026-07-28 basic/transports/streamable-http §Server Validation).
    case 'header_mismatch':
      return { code: ERROR_CODE.headerMismatch, httpStatus: 400, blame: 'client' };
    // UnsupportedProtocolVersionError (2026-07-28 basic/versioning; 400 by streamable-http §Protocol Version Header).
    case 'unsupported_protocol_version':
      return { code: ERROR_CODE.unsupportedProtocolVersion, httpStatus: 400, blame: 'client' };
    case 'method_not_found':
      return { code: ERROR_CODE.methodNotFound, httpStatus: 404, blame: 'client' };
    case 'invalid_arguments':
      return { code: ERROR_CODE.invalidParams, httpStatus: 200, blame: 'client' };
    // -32002 for 2025-era callers (2025-11-25 server/resources §Error Handling); the 2026-07-28 codec sends
    // -32602 (basic/index §Error Codes: MUST NOT emit -32002; wire/server-codec.ts errorCodeFor).
    case 'resource_not_found':
      return { code: ERROR_CODE.resourceNotFound, httpStatus: 200, blame: 'client' };
    // A request's params over an input limit (limits.*), refused at the edge before dispatch.
    case 'params_over_limit':
      return { code: ERROR_CODE.invalidParams, httpStatus: 400, blame: 'client' };
    // A number in params JSON.parse would not read as written (checks/exact-numbers.ts), refused at the edge.
    case 'inexact_number':
      return { code: ERROR_CODE.invalidParams, httpStatus: 400, blame: 'client' };
    // A name, URI or task id with a lone UTF-16 surrogate (http/classify.ts illFormedName): no Mcp-Name header can carry it.
    case 'ill_formed_string':
      return { code: ERROR_CODE.invalidParams, httpStatus: 400, blame: 'client' };
    case 'unknown_tool':
      return { code: ERROR_CODE.invalidParams, httpStatus: 200, blame: 'client' };
    case 'unauthorized':
      return { code: ERROR_CODE.unauthorized, httpStatus: 401, blame: 'client' };
    // The scope lookup failed under failureMode closed: nothing forwarded, retry later (issue 13).
    case 'scopes_unavailable':
      return { code: ERROR_CODE.serverError, httpStatus: 503, blame: 'upstream' };
    // The credential could not be checked (the OAuth token store is unreachable): 503 + Retry-After, so a
    // client keeps its token instead of throwing it away as a 401 invalid_token would tell it to.
    case 'auth_unavailable':
      return { code: ERROR_CODE.serverError, httpStatus: 503, blame: 'gateway' };
    case 'forbidden_origin':
      return { code: ERROR_CODE.serverError, httpStatus: 403, blame: 'client' };
    case 'forbidden_host':
      return { code: ERROR_CODE.serverError, httpStatus: 403, blame: 'client' };
    // A Host header that is no host (RFC 9110 §7.2), or a request-target of no known form (RFC 9112 §3.2).
    case 'malformed_target':
      return { code: ERROR_CODE.serverError, httpStatus: 400, blame: 'client' };
    // RFC 9110 §15.5.20: the gateway cannot tell whether the URL the request names is its own, so it takes no
    // token for it (http/protected-resource.ts tokenAudience). Not 401: a client would fetch a token again, forever.
    case 'misdirected_request':
      return { code: ERROR_CODE.serverError, httpStatus: 421, blame: 'gateway' };
    // RFC 6750 §3.1 / MCP 2026-07-28 authorization "Runtime Insufficient Scope Errors" (oauth.external.insufficientScope).
    case 'insufficient_scope':
      return { code: ERROR_CODE.unauthorized, httpStatus: 403, blame: 'client' };
    case 'payload_too_large':
      return { code: ERROR_CODE.serverError, httpStatus: 413, blame: 'client' };
    case 'not_found':
      return { code: ERROR_CODE.serverError, httpStatus: 404, blame: 'client' };
    // A path this server serves, asked with a method it does not serve there (RFC 9110 §15.5.6: with Allow).
    case 'method_not_allowed':
      return { code: ERROR_CODE.serverError, httpStatus: 405, blame: 'client' };
    case 'unsupported_media_type':
      return { code: ERROR_CODE.serverError, httpStatus: 415, blame: 'client' };
    // An Accept admitting neither JSON nor SSE (RFC 9110 §15.5.7; wire/requests.ts acceptRejection, which writes it itself).
    case 'not_acceptable':
      return { code: ERROR_CODE.serverError, httpStatus: 406, blame: 'client' };
    case 'scope_denied':
      return { code: ERROR_CODE.invalidParams, httpStatus: 200, blame: 'client' };
    case 'call_directly':
      return { code: ERROR_CODE.invalidParams, httpStatus: 200, blame: 'client' };
    // A tool on hold (catalog/pin-guard.ts): its upstream changed it since it was approved; nothing sent.
    // Neither the caller's mistake (-32602) nor a failure (-32603): -32000, implementation-defined (JSON-RPC 2.0 §5.1).
    case 'tool_held':
      return { code: ERROR_CODE.serverError, httpStatus: 200, blame: 'upstream' };
    case 'upstream_unavailable':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'upstream' };
    case 'upstream_timeout':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'upstream' };
    case 'upstream_error':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'upstream' };
    case 'upstream_rejected':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'upstream' };
    case 'output_schema_violation':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'upstream' };
    case 'cancelled':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'client' };
    // Answered at the edge (429 + Retry-After) or as an isError tool result; -32000 is implementation-defined
    // (JSON-RPC 2.0 §5.1), unlike -32020..-32099, which the MCP spec reserves for its own codes.
    case 'rate_limited':
      return { code: ERROR_CODE.serverError, httpStatus: 429, blame: 'client' };
    // MissingRequiredClientCapability (2026-07-28 basic/index §Error Codes; SEP-2663 for the tasks extension).
    case 'missing_client_capability':
      return { code: ERROR_CODE.missingRequiredClientCapability, httpStatus: 400, blame: 'client' };
    // run_code's own failures (surfaces/run-code.ts): always isError results, the model fixes its script.
    case 'script_error':
    case 'limit_exceeded':
      return { code: ERROR_CODE.serverError, httpStatus: 200, blame: 'client' };
    // A script's tool call after a reload replaced the configuration its run was authorised under (runtime-state.ts
    // replacedByReload): a refusal the script's caller resolves by running it again, like a run_code limit.
    case 'configuration_reloaded':
      return { code: ERROR_CODE.serverError, httpStatus: 200, blame: 'client' };
    case 'internal':
      return { code: ERROR_CODE.internalError, httpStatus: 200, blame: 'gateway' };
  }
}

/** An error thrown from an MCP handler; the SDK puts `code`, `message` and `data.kind` on the wire. */
export class GatewayError extends ProtocolError {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    data: Record<string, unknown> = {},
    code = errorMapping(kind).code,
  ) {
    super(code, message, { kind, ...data });
    this.name = 'GatewayError';
  }
}

/**
 * A JSON-RPC error the upstream answered, relayed to the caller: its code unchanged, its message without
 * the "MCP error N: " prefix an SDK v1 server writes into it ({@link upstreamMessage}), and its `data`
 * with the gateway's `kind` (`upstream_rejected`) and `upstream` (the upstream's configured name) beside
 * the upstream's own keys, which keep their values, so spec-typed data (-32021's `requiredCapabilities`,
 * -32602's `uri`, ...) keeps its schema. Data that is not an object (a string, an array) is relayed as
 * it is. The SDK maps the code to the HTTP status as for any handler error.
 */
export class RelayedUpstreamError extends ProtocolError {
  readonly kind = 'upstream_rejected' as const;
  constructor(
    readonly upstream: string,
    code: number,
    message: string,
    data?: unknown,
  ) {
    super(code, upstreamMessage(message), relayedData(upstream, data));
    this.name = 'RelayedUpstreamError';
  }
}

/** The gateway's keys on a relayed error's `data` (see {@link RelayedUpstreamError}). */
function relayedData(upstream: string, data: unknown): unknown {
  if (data === undefined || data === null) return { kind: 'upstream_rejected', upstream };
  if (typeof data !== 'object' || Array.isArray(data)) return data;
  return { ...data, kind: 'upstream_rejected', upstream };
}

/**
 * An upstream's error message without the "MCP error <code>: " prefix(es) an SDK v1 server puts into the
 * message it sends (McpError's own message), which the caller's SDK adds again when it reports the error.
 */
export function upstreamMessage(message: string): string {
  return message.replace(/^(?:MCP error -?\d+: )+/, '');
}

/**
 * The JSON-RPC error response of an answer given at the HTTP edge (wire/jsonrpc.ts `errorResponse`, as
 * the SDK's entry frames its refusals), as JSON text, and its HTTP status. `id` is the request's when the
 * edge read one (the spec asks errors to echo it), else null: the request was never dispatched. `data`
 * joins `kind` (e.g. UnsupportedProtocolVersionError's `supported` and `requested`).
 */
export function jsonRpcErrorBody(
  kind: ErrorKind,
  message: string,
  id: RequestId | null = null,
  data: Record<string, unknown> = {},
): { status: number; text: string } {
  const { code, httpStatus } = errorMapping(kind);
  return { status: httpStatus, text: errorResponse('entry', id, code, message, { kind, ...data }) };
}

/** Where an isError result the gateway wrote names its error kind (`_meta`). */
export const ERROR_META_KEY = 'ai.cpz.gateway/error';

/** A tools/call execution failure as the model should read it: an isError result, never a protocol error. */
export function toolErrorResult(kind: ErrorKind, message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { [ERROR_META_KEY]: kind } };
}

/** A failure talking to an upstream, classified; `code` is set when the upstream itself answered a JSON-RPC error. */
export interface UpstreamFailure {
  kind: ErrorKind;
  message: string;
  code?: number;
  data?: unknown;
  status?: number;
  /** Whether the request had been written to the upstream's connection when it failed, where that is known ({@link markDelivery}). */
  delivery?: Delivery;
  /** `upstream_timeout`: the upstream's `timeoutMs` that ran out, where the sender knew it (upstream/client.ts). */
  timeoutMs?: number;
  /** The answer came, larger than `limits.resultBytes` (this many bytes), and was given up: the tool ran ({@link markResultTooLarge}). */
  resultBytes?: number;
}

/**
 * Whether a failed request had been put on the wire to its upstream (`sent`: it may have run there, and
 * no answer says what became of it) or not (`not_sent`: queued, refused at connect, given up before).
 * Known on the HTTP hop (upstream/http-hop.ts: undici hands the request a controller as it writes it)
 * and for an SDK request that lost its connection; absent elsewhere.
 */
export type Delivery = 'sent' | 'not_sent';

const deliveries = new WeakMap<object, Delivery>();

/** Records on `error` whether its request had been sent ({@link Delivery}); returns the error. Off the wire: never in an answer. */
export function markDelivery<E>(error: E, delivery: Delivery): E {
  if (typeof error === 'object' && error !== null) deliveries.set(error, delivery);
  return error;
}

/** What {@link markDelivery} recorded on `error`, if anything. */
export function deliveryOf(error: unknown): Delivery | undefined {
  return typeof error === 'object' && error !== null ? deliveries.get(error) : undefined;
}

const tooLarge = new WeakMap<object, number>();

/** Records on `error` that its answer outgrew `maxBytes` (limits.resultBytes) and was given up; returns the error. */
export function markResultTooLarge<E>(error: E, maxBytes: number): E {
  if (typeof error === 'object' && error !== null) tooLarge.set(error, maxBytes);
  return error;
}

/** The classification a GatewayError was made from (upstreamFailureError), read back whole when it is classified again. */
const classifications = new WeakMap<GatewayError, UpstreamFailure>();

/** `failure` with `error`'s delivery, when it has one. */
function withDelivery(failure: UpstreamFailure, error: unknown): UpstreamFailure {
  const delivery = deliveryOf(error);
  const resultBytes = typeof error === 'object' && error !== null ? tooLarge.get(error) : undefined;
  if (delivery === undefined && resultBytes === undefined) return failure;
  return { ...failure, ...(delivery ? { delivery } : {}), ...(resultBytes !== undefined ? { resultBytes } : {}) };
}

/** The hop's message for a 2xx answer in a content type that is neither JSON nor SSE (http-hop.ts). */
const CONTENT_TYPE_REFUSAL = /^upstream answered HTTP \d{3} with [\w./+-]+( [\w ]+)?$/;

/** `message` about the upstream named: "upstream answered ..." becomes "upstream NAME answered ...". */
const naming = (upstream: string, message: string) =>
  message.startsWith('upstream ') ? `upstream ${upstream} ${message.slice('upstream '.length)}` : `upstream ${upstream}: ${message}`;

/**
 * Classifies anything the upstream client threw. Timeouts, refused connections, closed streams and 5xx
 * are the upstream being unavailable (execution failures); an answer that is not an MCP response (bad
 * JSON, a result of the wrong shape, a 2xx page in another content type) is `upstream_error`; a JSON-RPC
 * error it answered stays a protocol error with its own code; 401 means the forwarded credential was refused.
 */
export function classifyUpstreamFailure(error: unknown, upstream: string): UpstreamFailure {
  return withDelivery(classified(error, upstream), error);
}

function classified(error: unknown, upstream: string): UpstreamFailure {
  // Ours first: a GatewayError is also a ProtocolError, but it is never the upstream's answer. One made from a
  // classification (upstreamFailureError) reads it back whole: status and delivery included.
  if (error instanceof GatewayError) return classifications.get(error) ?? { kind: error.kind, message: error.message };
  if (error instanceof RelayedUpstreamError) return { kind: 'upstream_rejected', code: error.code, message: error.message, data: error.data };
  if (error instanceof UpstreamProtocolError || error instanceof ProtocolError) {
    return { kind: 'upstream_rejected', code: error.code, message: upstreamMessage(error.message), data: error.data };
  }
  if (error instanceof SdkHttpError) {
    const status = error.status;
    if (status === 401) return { kind: 'unauthorized', status, message: `upstream ${upstream} refused the credential (HTTP 401)` };
    if (status >= 500) return { kind: 'upstream_error', status, message: `upstream ${upstream} failed with HTTP ${status}` };
    // A 2xx that is not an MCP answer (text/html from a proxy's login page): its content type says why.
    if (status < 300 && CONTENT_TYPE_REFUSAL.test(error.message))
      return { kind: 'upstream_error', status, message: `${naming(upstream, error.message)}, not an MCP response` };
    return { kind: 'upstream_error', status, message: `upstream ${upstream} answered HTTP ${status}` };
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return { kind: 'upstream_timeout', message: `upstream ${upstream} did not answer in time` };
    // It answered, but not with an MCP response: the upstream is up and wrong (its own message names what).
    if (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType)
      return { kind: 'upstream_error', message: naming(upstream, upstreamMessage(error.message)) };
    if (error.code === SdkErrorCode.ClientHttpAuthentication)
      return { kind: 'unauthorized', status: 401, message: `upstream ${upstream} refused the credential (HTTP 401)` };
    return { kind: 'upstream_unavailable', message: `upstream ${upstream} is unavailable (${error.code})` };
  }
  // A body that did not parse, on a path other than the hop (which says so itself); V8's message quotes the body.
  if (error instanceof SyntaxError) return { kind: 'upstream_error', message: `upstream ${upstream} answered invalid JSON` };
  const name = (error as Error | undefined)?.name;
  if (name === 'AbortError') return { kind: 'cancelled', message: 'the request was cancelled' };
  if (name === 'TimeoutError') return { kind: 'upstream_timeout', message: `upstream ${upstream} did not answer in time` };
  return { kind: 'upstream_unavailable', message: `upstream ${upstream} is unreachable` };
}

/**
 * The error a classified upstream failure travels as, from where it happened (upstream/client.ts) to
 * every layer that reads it: the upstream's own JSON-RPC error as a RelayedUpstreamError (code, message,
 * data unchanged), anything else as a GatewayError of the failure's kind (-32603 family, upstream in data).
 * `cause` keeps the original error for logs.
 */
export function upstreamFailureError(failure: UpstreamFailure, upstream: string, cause?: unknown): GatewayError | RelayedUpstreamError {
  const error =
    failure.kind === 'upstream_rejected'
      ? new RelayedUpstreamError(upstream, failure.code!, failure.message, failure.data)
      : new GatewayError(failure.kind, failure.message, { upstream });
  if (cause !== undefined && cause !== error) Object.defineProperty(error, 'cause', { value: cause, enumerable: false, configurable: true });
  if (error instanceof GatewayError) classifications.set(error, failure);
  return error;
}

/**
 * The classification a failed forward carries: the upstream client classified it where it failed and
 * threw a GatewayError or RelayedUpstreamError ({@link upstreamFailureError}), read back here without
 * classifying again. Only an error that did not come through the client is classified here.
 */
export function failureOf(error: unknown, upstream: string): UpstreamFailure {
  return classifyUpstreamFailure(error, upstream);
}
