import { SERVER_INFO_META_KEY, type CallToolResult, type Tool } from '@modelcontextprotocol/server';

/**
 * What goes on the MCP wire, in one place for both paths. The gateway's own rules are defined here
 * once and used by both the SDK path (server.ts) and the fast path (fast-path.ts): its identity and the
 * cache hints of its answers. The rules the SDK's codec owns (projection by era, JSON-RPC error framing,
 * the 2025 stateless leg's SSE framing) are applied by the SDK on its path; the fast path writes bytes
 * itself with the mirrors below, held to the SDK's bytes by tests/e2e/gateway/fast-path.test.ts and
 * tests/in-process/wire.test.ts (one case per SDK-owned rule).
 */

/** The gateway's own identity on both eras (its serverInfo / server/discover `_meta`). */
export const GATEWAY_SERVER_INFO = { name: 'mcp-catalog-gateway', version: '0.1.0' };

/**
 * Cache hints (2026-07-28 `ttlMs`/`cacheScope`) the gateway's answers carry, by method. tools/list
 * differs per caller (scope filtering): always private, 0 ms. The pass-through lists and reads carry
 * the upstream's own hints on the result (modern callers); these are the fallbacks. Legacy answers
 * never carry them.
 */
export const CACHE_HINTS = {
  'tools/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 0, cacheScope: 'private' },
  'prompts/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const;

/**
 * What the 2026-07-28 encode contract appends to a tools/list result `{ tools }`, as JSON text after
 * the tools array: resultType, the tools/list cache hint, serverInfo in `_meta` (the SDK's key order).
 */
export const MODERN_TOOLS_LIST_TAIL = `,"resultType":"complete","ttlMs":${CACHE_HINTS['tools/list'].ttlMs},"cacheScope":"${CACHE_HINTS['tools/list'].cacheScope}","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: GATEWAY_SERVER_INFO })}`;

/** A tools/call result as the caller's revision carries it. */
export type ProjectCallToolResult = (result: CallToolResult, outputSchema: Record<string, unknown> | undefined) => CallToolResult;

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The SDK wire codecs' `projectCallToolResult` (SDK 2.4 core wire/rev2025-11-25 and rev2026-07-28;
 * spec server/tools §Structured Content): a non-object structuredContent gets a JSON text block when
 * the result has no text, and on the 2025 revisions, where structuredContent must be an object, it is
 * wrapped as `{ result }`, as it is when the advertised outputSchema's root is not an object.
 */
export function projectionFor(era: 'modern' | 'legacy'): ProjectCallToolResult {
  return (result, outputSchema) => {
    const sc = result.structuredContent as unknown;
    if (sc === undefined) return result;
    const nonObject = !isPlainObject(sc);
    const withText: CallToolResult =
      nonObject && !(result.content ?? []).some((c) => c.type === 'text')
        ? { ...result, content: [...(result.content ?? []), { type: 'text', text: JSON.stringify(sc) }] }
        : result;
    if (era === 'modern') return withText;
    const schemaWrapped = outputSchema !== undefined && outputSchema.type !== 'object';
    return nonObject || schemaWrapped ? { ...withText, structuredContent: { result: sc } } : withText;
  };
}

/**
 * A tools/list definition as the SDK's 2025 codec sends it (SEP-2106): an outputSchema whose root is not
 * an object is wrapped as `{ type: 'object', properties: { result: <schema> }, required: ['result'] }`,
 * matching the `{ result }` wrapping of such a tool's structuredContent ({@link projectionFor}).
 * Undefined when the definition goes out unchanged.
 */
export function legacyToolDefinition(tool: Tool): Tool | undefined {
  const schema = tool.outputSchema as Record<string, unknown> | undefined;
  if (schema === undefined || schema.type === 'object') return undefined;
  return { ...tool, outputSchema: { type: 'object', properties: { result: schema }, required: ['result'] } } as Tool;
}

/** A JSON-RPC error response in the SDK's key order: `{"jsonrpc","id","error":{code,message,data?}}`. */
export function errorMessage(id: string | number | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } });
}

/** The response headers of the SDK's stateless 2025 leg, which answers every request as one SSE event. */
export const LEGACY_SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } as const;

/** One JSON-RPC message framed as the SDK frames it on an SSE stream: one `message` event. */
export function sseMessageEvent<T extends string | Buffer>(message: readonly T[]): (string | T)[] {
  return ['event: message\ndata: ', ...message, '\n\n'];
}
