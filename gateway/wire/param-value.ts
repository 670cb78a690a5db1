/**
 * Header values that mirror a request's body on the 2026-07-28 wire (SEP-2243, spec basic/transports/
 * streamable-http §Custom Headers from Tool Parameters and §Request Metadata): `Mcp-Name` and
 * `Mcp-Param-{Name}`. One encoder, used by the undici hop for every header it sends, and one decoder,
 * used by the edge's check of a caller's headers: the SDK's rules (its client's `encodeMcpParamValue`
 * and server's `decodeMcpParamValue`, which it does not export), held to its client's headers by
 * tests/in-process/wire-oracle.test.ts. Pure.
 */

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A field value the spec lets through as it is: tab and visible ASCII or space, nothing else. */
const PLAIN = /^[\t\x20-\x7e]*$/;

/**
 * A string as a header value: as it is when it is a plain, non-empty field value without surrounding
 * whitespace (RFC 9110 §5.5), else UTF-8 in the Base64 sentinel `=?base64?…?=`, as is a plain value
 * that looks like the sentinel itself (the spec's "to avoid ambiguity" rule).
 */
export function encodeParamValue(value: string): string {
  const sentinelLike = value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX);
  const plain = value.length > 0 && !sentinelLike && value === value.trim() && PLAIN.test(value);
  return plain ? value : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * A header value decoded: a sentinel's payload as UTF-8, anything else as it is; undefined when the
 * sentinel's payload is not canonical Base64 of valid UTF-8 (which a server must reject).
 */
export function decodeParamValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const base64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(base64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * An argument value as its header text (spec §Type Conversion): strings as they are, numbers in
 * decimal, booleans lowercase; undefined for anything else, a non-finite number or an integer beyond
 * the safe range (no header is sent for it).
 */
export function paramValueText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/**
 * Request methods whose 2026-07-28 wire carries `Mcp-Name`, and the params field it mirrors (SEP-2243;
 * SEP-2663 adds the task methods, whose `Mcp-Name` is the task id).
 */
export const MCP_NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** A UTF-16 surrogate on its own: in `u` mode a class of surrogates matches only those no pair completes. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where a string holds a lone UTF-16 surrogate (JSON's `"\ud800"` unpaired), or -1 when it is
 * well formed. Such a string has no UTF-8 form: {@link encodeParamValue} would send U+FFFD in its
 * place, a header that no longer equals the body, so a name, URI or task id holding one cannot travel
 * in `Mcp-Name` (nor an argument in `Mcp-Param-*`): the request is refused as invalid params instead.
 */
export function loneSurrogateAt(value: string): number {
  return value.search(LONE_SURROGATE);
}

/** The `Mcp-Name` value a request of `method` carries, encoded; undefined when the method has none or the field is not a string. */
export function mcpNameValue(method: string, params: Readonly<Record<string, unknown>>): string | undefined {
  const field = Object.hasOwn(MCP_NAME_SOURCE, method) ? MCP_NAME_SOURCE[method] : undefined;
  const value = field === undefined ? undefined : params[field];
  return typeof value === 'string' ? encodeParamValue(value) : undefined;
}
