import { InMemoryTransport, SERVER_INFO_META_KEY, Server, type CallToolResult, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/server';
import type { Listing } from '../catalog/listing.ts';

/**
 * What goes on the MCP wire, in one place for both paths. The gateway's own rules are defined here
 * once and used by both the SDK path (server.ts) and the fast path (fast-path.ts): its identity and the
 * cache hints of its answers. The rules the SDK's codec owns are applied by the SDK on its path; on the
 * fast path:
 * - the 2025 codec is the SDK's own, reached through a never-negotiated SDK Server (an SDK Server is
 *   2025-era until a version is negotiated): tools/list definitions (SEP-2106 wrap, {@link legacyToolsJson})
 *   and tools/call projection ({@link projectionFor} `legacy`);
 * - the 2026-07-28 codec cannot be reached outside the SDK's own handler (its `WireCodec` is not public,
 *   and a Server negotiates 2026-07-28 only inside it), so its rules are mirrored here: the text block of
 *   a non-object structuredContent, the encode contract's resultType, cache fields and serverInfo
 *   ({@link MODERN_TOOLS_LIST_BEFORE_TTL}, fast-path.ts `encodeModern`), the tool fields it deleted
 *   ({@link modernListingJson}); so are the JSON-RPC error framing
 *   ({@link errorMessage}) and the 2025 stateless leg's SSE framing ({@link sseMessageEvent}), which
 *   the SDK writes inside its transports.
 * tests/in-process/wire.test.ts holds each of them to the SDK's bytes, one case per rule.
 */

/** The gateway's own identity on both eras (its serverInfo / server/discover `_meta`). */
export const GATEWAY_SERVER_INFO = { name: 'mcp-catalog-gateway', version: '0.1.0' };

/**
 * Cache hints (2026-07-28 `ttlMs`/`cacheScope`, SEP-2549: server/utilities/caching) the gateway's
 * answers carry, by method: the SDK's `cacheHints` fallbacks, used when a result has no fields of its
 * own. tools/list differs per caller (scope filtering): always private; its `ttlMs` is set per answer on
 * the result ({@link modernToolsListFields}: the SDK's `cacheHints` is one static table per Server). The
 * pass-through lists and reads carry the upstream's own hints on the result (modern callers). Legacy
 * answers never carry them.
 */
export const CACHE_HINTS = {
  'tools/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 0, cacheScope: 'private' },
  'prompts/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const;

/**
 * The fields a 2026-07-28 tools/list result carries besides `tools`, as the SDK path's arm returns
 * them: resultType, this answer's `ttlMs` (mcp/server.ts `privateTtlMs`) and the private scope. In this
 * key order, which the SDK's encoder keeps (stampResultType keeps a `complete` it finds, fillCacheFields
 * spreads the handler's own fields first), so the fast path's {@link MODERN_TOOLS_LIST_BEFORE_TTL} and
 * {@link MODERN_TOOLS_LIST_AFTER_TTL} write the same bytes.
 */
export function modernToolsListFields(ttlMs: number): { resultType: 'complete'; ttlMs: number; cacheScope: 'private' } {
  return { resultType: 'complete', ttlMs, cacheScope: CACHE_HINTS['tools/list'].cacheScope };
}

/**
 * What the 2026-07-28 encode contract appends to a tools/list result `{ tools }`, as JSON text after
 * the tools array, in two parts around the answer's `ttlMs`: resultType and the key of the TTL (the same
 * for every answer of a listing, so it can be compressed with the listing: listing-gzip.ts), then the
 * cache scope and serverInfo in `_meta` (the SDK's key order).
 */
export const MODERN_TOOLS_LIST_BEFORE_TTL = ',"resultType":"complete","ttlMs":';
export const MODERN_TOOLS_LIST_AFTER_TTL = `,"cacheScope":"${CACHE_HINTS['tools/list'].cacheScope}","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: GATEWAY_SERVER_INFO })}`;

/** A tools/call result as the caller's revision carries it. */
export type ProjectCallToolResult = (result: CallToolResult, outputSchema: Record<string, unknown> | undefined) => CallToolResult;

/** A JSON object: not null, not an array (what JSON-RPC and MCP call an object). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * An SDK Server that never negotiates a version, so its wire codec is the SDK's 2025 one (SDK 2.4:
 * "legacy until a version has been negotiated"). The SDK exposes that codec through the Server only.
 */
const legacyCodec = new Server(GATEWAY_SERVER_INFO, { capabilities: { tools: {} } });

/** The 2026-07-28 `projectCallToolResult` (SDK core wire/rev2026-07-28): the 2025 codec's text block, no wrap. */
function projectModern(result: CallToolResult): CallToolResult {
  const sc = result.structuredContent as unknown;
  if (sc === undefined || isPlainObject(sc) || (result.content ?? []).some((c) => c.type === 'text')) return result;
  return { ...result, content: [...(result.content ?? []), { type: 'text', text: JSON.stringify(sc) }] };
}

/**
 * The SDK wire codecs' `projectCallToolResult` (spec server/tools §Structured Content): a non-object
 * structuredContent gets a JSON text block when the result has no text, and on the 2025 revisions,
 * where structuredContent must be an object, it is wrapped as `{ result }`, as it is when the
 * advertised outputSchema's root is not an object. 2025: the SDK's own; 2026-07-28: its mirror.
 */
export function projectionFor(era: 'modern' | 'legacy'): ProjectCallToolResult {
  return era === 'legacy' ? (result, outputSchema) => legacyCodec.projectCallToolResult(result, outputSchema) : projectModern;
}

/**
 * `tools` as the SDK's 2025 codec sends a tools/list result, as JSON text of the array: SEP-2106 wraps
 * an outputSchema whose root is not an object as `{ result }` (hoisting its `$schema`, rewriting its
 * `$ref`s). Written by the SDK itself: a 2025-era SDK Server answers one tools/list over an in-memory
 * transport. Rejects with the SDK's error when it refuses the tools. About a millisecond: callers cache it.
 */
export async function legacyToolsJson(tools: readonly Tool[]): Promise<string> {
  const server = new Server(GATEWAY_SERVER_INFO, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools: [...tools] }));
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  try {
    const answer = new Promise<JSONRPCMessage>((resolve) => (client.onmessage = resolve));
    await server.connect(serverSide);
    await client.start();
    await client.send({ jsonrpc: '2.0', id: 0, method: 'tools/list' });
    const message = (await answer) as { result?: { tools?: unknown }; error?: { code: number; message: string } };
    if (message.error || !Array.isArray(message.result?.tools))
      throw new Error(`the SDK refused the tools/list result: ${message.error?.message ?? 'no tools'}`);
    return JSON.stringify(message.result.tools);
  } finally {
    await server.close();
  }
}

/**
 * Tool fields 2026-07-28 deleted from tools/list, which the SDK's 2026 encoder drops (SDK 2.4
 * `enforceDeletedFields`): `execution` (tasks are not a tool property there). The 2025 revisions keep them.
 */
const DELETED_TOOL_FIELDS_2026 = ['execution'] as const;

const modernListings = new WeakMap<Listing, Buffer>();

/**
 * A listing's tools as 2026-07-28 sends them, as JSON: the listing's own bytes, or, when a tool carries
 * a field 2026-07-28 deleted, the tools without it (made once per listing, counted in its bytes).
 */
export function modernListingJson(listing: Listing): Buffer {
  let json = modernListings.get(listing);
  if (json === undefined) {
    const carries = listing.tools.some((tool) => DELETED_TOOL_FIELDS_2026.some((field) => field in tool));
    json = carries
      ? listing.derived('tools|2026-07-28', () =>
          Buffer.from(
            JSON.stringify(
              listing.tools.map((tool) => {
                const kept: Record<string, unknown> = { ...tool };
                for (const field of DELETED_TOOL_FIELDS_2026) delete kept[field];
                return kept;
              }),
            ),
          ),
        )
      : listing.json;
    modernListings.set(listing, json);
  }
  return json;
}

const legacyListings = new WeakMap<Listing, Promise<Buffer>>();

/**
 * A listing's tools as the SDK's 2025 codec sends them, as JSON ({@link legacyToolsJson}: the SDK writes
 * them), made once per listing and counted in its bytes; the listing's own bytes when the codec changes
 * nothing (no outputSchema with a non-object root: the SDK's own test, `type !== 'object'`).
 */
export function legacyListingJson(listing: Listing): Promise<Buffer> {
  let json = legacyListings.get(listing);
  if (json === undefined) {
    const wraps = listing.tools.some((tool) => tool.outputSchema !== undefined && (tool.outputSchema as { type?: unknown }).type !== 'object');
    json = wraps ? legacyToolsJson(listing.tools).then((text) => listing.derived('tools|2025', () => Buffer.from(text))) : Promise.resolve(listing.json);
    // A failed encoding is not kept: the next request asks the SDK again.
    json.catch(() => legacyListings.delete(listing));
    legacyListings.set(listing, json);
  }
  return json;
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
