/**
 * JSON-RPC requests exactly as the SDK clients put them on the wire, for the load generator, and the
 * parsing that checks their answers. Captured from the clients themselves (a fetch wrapper on
 * `@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client` 2.x against the reference upstream):
 *
 * - legacy (2025-11-25, what the v1 client sends after `initialize` to a stateless server): headers
 *   `accept: application/json, text/event-stream`, `content-type: application/json`,
 *   `mcp-protocol-version: 2025-11-25`; body `{"method","params"?,"jsonrpc":"2.0","id"}`. Stateless
 *   servers need no session, so the requests stand alone (no initialize per request).
 * - modern (2026-07-28, spec basic/transports/streamable-http "Request Metadata"): the same accept and
 *   content type, `mcp-protocol-version: 2026-07-28`, `mcp-method: <method>`, `mcp-name: <params.name>`
 *   for tools/call (Base64 sentinel `=?base64?…?=` when not header-safe), and the `_meta` envelope
 *   (`io.modelcontextprotocol/protocolVersion`, `/clientInfo`, `/clientCapabilities`) in params.
 *
 * Answers come as application/json or as an SSE stream (legacy servers answer with one `message`
 * event); {@link parseAnswer} reads either.
 */
export type Era = 'legacy' | 'modern';
export const ERAS: readonly Era[] = ['legacy', 'modern'];

export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'mcp-gateway-bench', version: '1.0.0' };

/** One HTTP request, ready for fetch or autocannon. */
export interface RpcCall {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

/** A header-safe value (RFC 9110 visible ASCII, no leading/trailing space) or the spec's Base64 sentinel. */
function headerValue(value: string): string {
  const safe = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value);
  return safe ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/**
 * The request `method(params)` to the MCP endpoint `url` in `era`, with the caller's credential headers.
 * @param params JSON-RPC params without `_meta` (the modern envelope is added here).
 */
export function rpcCall(era: Era, url: string, credential: Readonly<Record<string, string>>, method: string, params?: Record<string, unknown>, id = 1): RpcCall {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  let body: Record<string, unknown>;
  if (era === 'legacy') {
    headers['mcp-protocol-version'] = LEGACY_VERSION;
    body = { method, ...(params ? { params } : {}), jsonrpc: '2.0', id };
  } else {
    headers['mcp-method'] = method;
    const name = params?.name ?? params?.uri;
    if (typeof name === 'string') headers['mcp-name'] = headerValue(name);
    headers['mcp-protocol-version'] = MODERN_VERSION;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    body = { method, jsonrpc: '2.0', id, params: { ...params, _meta } };
  }
  return { url, method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body) };
}

/** A JSON-RPC answer: its result or error. */
export interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** Reads a JSON-RPC response from an application/json body or from an SSE stream (the last `data:` with a result or error). */
export function parseAnswer(body: string): RpcAnswer {
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{')) return JSON.parse(trimmed) as RpcAnswer;
  let answer: RpcAnswer | undefined;
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const message = JSON.parse(line.slice(5).trim()) as RpcAnswer & { method?: string };
    if (message.result !== undefined || message.error !== undefined) answer = message;
  }
  if (!answer) throw new Error(`no JSON-RPC response in body: ${body.slice(0, 200)}`);
  return answer;
}

/** Sends one call and returns status, content type, raw body and the parsed answer (undefined when unparsable). */
export async function sendCall(call: RpcCall): Promise<{ status: number; contentType: string; body: string; answer?: RpcAnswer }> {
  const response = await fetch(call.url, { method: call.method, headers: call.headers, body: call.body });
  const body = await response.text();
  let answer: RpcAnswer | undefined;
  try {
    answer = parseAnswer(body);
  } catch {
    answer = undefined;
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body, answer };
}

/**
 * Sends `call` once and requires HTTP 200 and a result that `check` accepts; returns the result.
 * @throws Error naming the call, the status and the start of the body otherwise.
 */
export async function verifiedResult(label: string, call: RpcCall, check: (result: Record<string, unknown>) => string | undefined): Promise<Record<string, unknown>> {
  const { status, body, answer } = await sendCall(call);
  const fail = (why: string) => new Error(`${label}: ${why} (HTTP ${status}, body ${body.slice(0, 300)})`);
  if (status !== 200) throw fail('expected HTTP 200');
  if (!answer?.result) throw fail(answer?.error ? `JSON-RPC error ${answer.error.code} ${answer.error.message}` : 'no JSON-RPC result');
  const problem = check(answer.result);
  if (problem) throw fail(problem);
  return answer.result;
}

/** Tool names of a tools/list result. */
export function toolNames(result: Record<string, unknown>): string[] {
  const tools = result.tools;
  return Array.isArray(tools) ? tools.map((t) => (t as { name?: unknown }).name).filter((n): n is string => typeof n === 'string') : [];
}

/** The matches of a search_tools result, from structuredContent or the text content, whichever shape it takes. */
export function searchMatches(result: Record<string, unknown>): string[] {
  const names = (list: unknown): string[] | undefined =>
    Array.isArray(list) ? list.map((m) => (m as { name?: unknown }).name).filter((n): n is string => typeof n === 'string') : undefined;
  const sc = result.structuredContent as Record<string, unknown> | undefined;
  const structured = sc && (names(sc.results) ?? names(sc.tools) ?? names(sc.matches));
  if (structured) return structured;
  const text = (result.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === 'text')?.text ?? '';
  try {
    const parsed = JSON.parse(text) as Record<string, unknown> | unknown[];
    return names(parsed) ?? names((parsed as Record<string, unknown>).results) ?? names((parsed as Record<string, unknown>).tools) ?? names((parsed as Record<string, unknown>).matches) ?? [];
  } catch {
    return [];
  }
}

/** Same multiset of names, order ignored. */
export function sameNames(actual: readonly string[], expected: readonly string[]): boolean {
  if (actual.length !== expected.length) return false;
  const a = [...actual].sort();
  const b = [...expected].sort();
  return a.every((name, i) => name === b[i]);
}
