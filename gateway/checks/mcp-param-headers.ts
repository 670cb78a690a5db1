/**
 * SEP-2243 `Mcp-Param-{Name}` headers (spec 2026-07-28 basic/transports/streamable-http §Custom Headers
 * from Tool Parameters; server/tools §x-mcp-header): a tool's `inputSchema` may mark primitive
 * arguments with `x-mcp-header`, and on the 2026-07-28 HTTP wire their values travel as headers too.
 * The gateway is a server to its callers (it checks the headers against the body) and a client to its
 * upstreams (it builds them from the arguments it forwards). The SDK keeps its own copy of these rules
 * internal, so the declarations' scan is the gateway's; the header values are encoded and decoded by the
 * wire's one codec (wire/param-value.ts). Pure.
 */
import { decodeParamValue, encodeParamValue, paramValueText } from '../wire/param-value.ts';

/** One `x-mcp-header` declaration: the header's name part, the argument's property path, its type. */
export interface ParamHeader {
  readonly name: string;
  readonly path: readonly string[];
  readonly type: 'string' | 'integer' | 'boolean';
}

/** The declarations of a tool, or why its `x-mcp-header` use is invalid (the tool must then be rejected). */
export type ParamHeaderScan = { readonly valid: true; readonly headers: readonly ParamHeader[] } | { readonly valid: false; readonly reason: string };

const PREFIX = 'Mcp-Param-';
/** RFC 9110 §5.1 token (`1*tchar`). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas are not "statically reachable via properties": an annotation there is invalid. */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];
const NAME_TO_SCHEMA = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const DECIMAL = /^-?\d+(\.\d+)?$/;

const scans = new WeakMap<object, ParamHeaderScan>();

/**
 * Scans an `inputSchema` for `x-mcp-header` declarations and checks every constraint of the spec: a
 * non-empty RFC 9110 token, unique case-insensitively, on a string/integer/boolean property reached
 * from the root through `properties` keys only. Memoised per schema object.
 */
export function paramHeaders(inputSchema: unknown): ParamHeaderScan {
  if (inputSchema === null || typeof inputSchema !== 'object') return { valid: true, headers: [] };
  let scan = scans.get(inputSchema);
  if (!scan) scans.set(inputSchema, (scan = scanSchema(inputSchema)));
  return scan;
}

function scanSchema(root: object): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (node === null || typeof node !== 'object') return undefined;
    const schema = node as Record<string, unknown>;
    if ('x-mcp-header' in schema) {
      const where = path.length ? path.join('.') : '<root>';
      if (!reachable || path.length === 0) return `${where}: x-mcp-header is only allowed on a property reached through 'properties' keys alone`;
      const name = schema['x-mcp-header'];
      if (typeof name !== 'string' || !TOKEN.test(name)) return `${where}: x-mcp-header must be a non-empty RFC 9110 token`;
      if (typeof schema.type !== 'string' || !PRIMITIVE.has(schema.type))
        return `${where}: x-mcp-header is only allowed on string, integer or boolean properties`;
      const prior = seen.get(name.toLowerCase());
      if (prior !== undefined) return `x-mcp-header '${name}' is declared twice (also as '${prior}')`;
      seen.set(name.toLowerCase(), name);
      headers.push({ name, path, type: schema.type as ParamHeader['type'] });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object') {
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault) return fault;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : NAME_TO_SCHEMA.has(keyword) && sub !== null && typeof sub === 'object' ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(root, [], true);
  return fault ? { valid: false, reason: fault } : { valid: true, headers };
}

/**
 * The `Mcp-Param-*` headers a client sends for `args` (§Client Behavior): one per declaration whose
 * argument is present and not null, the value converted (integers in decimal, booleans lowercase) and
 * encoded as a header value (wire/param-value.ts).
 */
export function paramHeaderValues(headers: readonly ParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers) {
    const value = paramValueText(valueAt(args, header.path));
    if (value !== undefined) out[`${PREFIX}${header.name}`] = encodeParamValue(value);
  }
  return out;
}

/**
 * The server-side check (§Server Behavior for Custom Headers): for every declaration whose argument is
 * present and not null, the header must be there, decode (a sentinel value must be canonical Base64 of
 * UTF-8) and equal the body's value (integers compared as numbers). Returns why it fails, or undefined.
 * @param header - reads one request header by name (case-insensitive), undefined when absent.
 */
export function paramHeaderMismatch(headers: readonly ParamHeader[], args: unknown, header: (name: string) => string | undefined): string | undefined {
  for (const declared of headers) {
    const body = valueAt(args, declared.path);
    const expected = paramValueText(body);
    if (expected === undefined) continue;
    const name = `${PREFIX}${declared.name}`;
    const raw = header(name);
    if (raw === undefined) return `the body carries ${declared.path.join('.')}=${JSON.stringify(body)} but the ${name} header is absent`;
    const decoded = decodeParamValue(raw.trim());
    if (decoded === undefined) return `the ${name} header carries an invalid Base64 value`;
    const equal = declared.type === 'integer' && typeof body === 'number' && DECIMAL.test(decoded) ? Number(decoded) === body : decoded === expected;
    if (!equal) return `the ${name} header decodes to ${JSON.stringify(decoded)} but the body carries ${declared.path.join('.')}=${JSON.stringify(body)}`;
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
