import { ProtocolErrorCode } from '@modelcontextprotocol/server';

/**
 * JSON-RPC 2.0 framing as the gateway writes it, in one place: the error codes it uses by their spec
 * names, the one writer of a JSON-RPC error response (every refusal of the edge, the fast path, the
 * node:http server's own), and the HTTP status an in-band error travels under. The SDK writes the same
 * messages inside its transports; tests/in-process/wire-oracle.test.ts holds these to its bytes.
 */

/** A JSON object: not null, not an array (what JSON-RPC and MCP call an object). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A JSON-RPC request id as MCP allows it (basic §Requests: a string or an integer, never null). */
export type RequestId = string | number;

/**
 * A request id or progress token the gateway can echo exactly: a string, or an integer JSON.parse reads
 * without rounding (|n| <= 2^53 - 1). A larger integer arrives already rounded (9007199254740993 is read as
 * ...992), so an answer would carry an id the caller never sent; it is refused, naming the limit.
 */
export function isEchoableId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/**
 * The id an error answer echoes: `value` when it is an id ({@link isEchoableId}) no longer than
 * `maxLength` characters, else null (JSON-RPC 2.0 §5: null when it cannot be read). An id past
 * `limits.stringLength` is never echoed, whichever refusal answers it (a 900 KB id came back whole).
 */
export function echoableId(value: unknown, maxLength: number): RequestId | null {
  return isEchoableId(value) && !(typeof value === 'string' && value.length > maxLength) ? value : null;
}

/**
 * The JSON-RPC error codes the gateway writes: JSON-RPC 2.0 §5.1 and the MCP codes, by the SDK's own
 * names (`ProtocolErrorCode`), plus -32020 HeaderMismatch (SEP-2243, 2026-07-28 basic/transports/
 * streamable-http §Server Validation), which the SDK does not export, and -32000/-32001, the
 * implementation-defined server errors the edge's own refusals use.
 */
export const ERROR_CODE = {
  parseError: ProtocolErrorCode.ParseError,
  invalidRequest: ProtocolErrorCode.InvalidRequest,
  methodNotFound: ProtocolErrorCode.MethodNotFound,
  invalidParams: ProtocolErrorCode.InvalidParams,
  internalError: ProtocolErrorCode.InternalError,
  /** 2025-11-25 server/resources §Error Handling; 2026-07-28 sends -32602 instead. */
  resourceNotFound: ProtocolErrorCode.ResourceNotFound,
  headerMismatch: -32020,
  missingRequiredClientCapability: ProtocolErrorCode.MissingRequiredClientCapability,
  unsupportedProtocolVersion: ProtocolErrorCode.UnsupportedProtocolVersion,
  /** 2025-11-25 client/elicitation §URL Mode; 2026-07-28 carries URL elicitations in an InputRequiredResult. */
  urlElicitationRequired: ProtocolErrorCode.UrlElicitationRequired,
  /** Implementation-defined (JSON-RPC 2.0 §5.1 -32000 to -32099): a refusal of the HTTP exchange itself. */
  serverError: -32000,
  /** Implementation-defined: the credential was missing or refused (HTTP 401). */
  unauthorized: -32001,
} as const;

/**
 * Where an error response is written, which fixes its key order as the SDK writes it: `in-band` by the
 * protocol layer answering a dispatched request (`{"jsonrpc","id","error"}`), `entry` by its HTTP entry
 * refusing an exchange before any dispatch (`{"jsonrpc","error","id"}`, createMcpHandler's
 * jsonRpcErrorResponse); the edge's refusals are entry refusals.
 */
export type ErrorFraming = 'in-band' | 'entry';

/**
 * A JSON-RPC error response as JSON text (JSON-RPC 2.0 §5, §5.1): `data` only when given, the id of
 * the request it answers, or null when none could be read.
 */
export function errorResponse(framing: ErrorFraming, id: RequestId | null, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify(framing === 'in-band' ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', error, id });
}

/** A JSON-RPC result response as JSON text, in the SDK's key order (`{"result","jsonrpc","id"}`). */
export function resultResponse(id: RequestId, result: unknown): string {
  return JSON.stringify({ result, jsonrpc: '2.0', id });
}

/**
 * The HTTP status of an answer carrying a handler's JSON-RPC error on 2026-07-28 (the SDK's
 * `httpStatusForErrorCode(code, 'in-band')`): 200, the error being the payload, except -32021
 * MissingRequiredClientCapability, whose 400 the spec mandates on the error itself (2026-07-28
 * basic/index §Error Codes). The 2025 stateless leg has sent its 200 before any handler runs.
 */
export function inBandErrorStatus(era: 'modern' | 'legacy', code: number): number {
  return era === 'modern' && code === ERROR_CODE.missingRequiredClientCapability ? 400 : 200;
}
