import { specTypeSchemas, type CallToolResult, type Result, type Tool } from '@modelcontextprotocol/server';
import { ERROR_CODE, resultResponse, type RequestId } from './jsonrpc.ts';
import { REVISION_WITHOUT_HEADER, type Era } from './revisions.ts';
import { sdkCodecFor, type SdkWireCodec } from './sdk-codec.ts';
import { withFields } from './objects.ts';

/**
 * The gateway as an MCP server on the wire: what its answers carry, for both paths. The SDK path
 * (mcp/server.ts) answers through the SDK's handler, which runs its own codec; the fast path
 * (http/fast-path.ts) writes the same answers itself, through the same codec: the SDK's own 2025 and
 * 2026-07-28 codecs (sdk-codec.ts), never a copy of their rules. What is the gateway's own is defined
 * here once and used by both paths: its identity, the cache hints of its answers, and that a 2025-era
 * caller keeps -32002. The fast path's answer bytes are held to the SDK path's by
 * tests/in-process/wire.test.ts, case by case, and to an SDK server's by tests/in-process/wire-oracle.test.ts
 * over a generated corpus.
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
 * The fields a 2026-07-28 tools/list result carries besides `tools`, as the arm returns them:
 * resultType, this answer's `ttlMs` (mcp/server.ts `privateTtlMs`) and the private scope.
 */
export function modernToolsListFields(ttlMs: number): { resultType: 'complete'; ttlMs: number; cacheScope: 'private' } {
  return { resultType: 'complete', ttlMs, cacheScope: CACHE_HINTS['tools/list'].cacheScope };
}

const CODECS: Readonly<Record<Era, SdkWireCodec>> = { modern: sdkCodecFor('9999-12-31'), legacy: sdkCodecFor(undefined) };

/** The first revision that defines `structuredContent` and `outputSchema` (2025-06-18 server/tools). */
export const FIRST_REVISION_WITH_STRUCTURED_CONTENT = '2025-06-18';

/** A tools/call result as the caller's revision carries it. */
export type ProjectCallToolResult = (result: CallToolResult, outputSchema: Record<string, unknown> | undefined) => CallToolResult;

const PROJECTIONS: Readonly<Record<Era, ProjectCallToolResult>> = {
  modern: (result, outputSchema) => CODECS.modern.projectCallToolResult(result, outputSchema),
  legacy: (result, outputSchema) => CODECS.legacy.projectCallToolResult(result, outputSchema),
};

/**
 * The SDK codec's `projectCallToolResult` for the era (spec server/tools §Structured Content): a
 * non-object structuredContent gets a JSON text block when the result has no text, and on the 2025
 * revisions it is wrapped as `{ result }`, as it is when the advertised outputSchema's root is not an object.
 */
export function projectionFor(era: Era): ProjectCallToolResult {
  return PROJECTIONS[era];
}

/**
 * Whether a caller of `era` and `revision` (its MCP-Protocol-Version header; none: 2025-03-26, 2025-11-25
 * basic/transports §Protocol Version Header) may be sent `structuredContent` and `outputSchema`: both came
 * in 2025-06-18 (server/tools §Structured Content, §Output Schema); 2025-03-26, 2024-11-05 and 2024-10-07
 * define neither. An SDK v1 client at 2025-03-26 that is listed an outputSchema refuses a result without
 * structuredContent, so the two go together ({@link withoutStructuredContent}, {@link withoutOutputSchemas}).
 */
export function definesStructuredContent(era: Era, revision: string | undefined): boolean {
  return era === 'modern' || (revision || REVISION_WITHOUT_HEADER) >= FIRST_REVISION_WITH_STRUCTURED_CONTENT;
}

/** The first revision with audio content blocks (2025-03-26 server/tools §Audio Content). */
const FIRST_REVISION_WITH_AUDIO = '2025-03-26';

/**
 * `project` for a caller before 2025-06-18 (`revision`: its MCP-Protocol-Version header, none: 2025-03-26):
 * `structuredContent` dropped, its JSON kept as a text block when the content has no text (a server
 * returning structured content SHOULD also return it serialised in a TextContent block, 2025-06-18
 * server/tools §Structured Content; the SDK's projection adds one already when there is no text); and the
 * content blocks its revision does not define told in a text block instead (a `resource_link`, 2025-06-18;
 * `audio` before 2025-03-26): its schema's content union refuses them, and an SDK v1 client of that revision
 * drops the whole result for one (try-out).
 */
export function withoutStructuredContent(project: ProjectCallToolResult, revision?: string): ProjectCallToolResult {
  const served = revision || REVISION_WITHOUT_HEADER;
  return (result, outputSchema) => {
    const projected = project(result, outputSchema);
    const content = projected.content?.some((block) => !definedBefore(block.type, served))
      ? projected.content.map((block) => (definedBefore(block.type, served) ? block : toldAsText(block, served)))
      : projected.content;
    const { structuredContent, ...rest } = projected;
    if (structuredContent === undefined || content?.some((block) => block.type === 'text')) return { ...rest, content };
    return { ...rest, content: [...(content ?? []), { type: 'text', text: JSON.stringify(structuredContent) }] };
  };
}

/** Whether a content block of `type` is in the content union of `revision` (before 2025-06-18). */
function definedBefore(type: string, revision: string): boolean {
  if (type === 'resource_link') return false;
  if (type === 'audio') return revision >= FIRST_REVISION_WITH_AUDIO;
  return true;
}

/** A content block `revision` does not define, as a text block that says what it was (with its annotations and `_meta`). */
function toldAsText(block: CallToolResult['content'][number], revision: string): CallToolResult['content'][number] {
  const { annotations, _meta } = block as { annotations?: unknown; _meta?: unknown };
  const kept = { ...(annotations !== undefined ? { annotations } : {}), ...(_meta !== undefined ? { _meta } : {}) } as Record<string, never>;
  if (block.type === 'resource_link') {
    const label = block.title ?? block.name;
    const facts = [block.mimeType, block.description].filter((fact) => typeof fact === 'string' && fact !== '');
    return {
      type: 'text',
      text: `Resource link: ${block.uri}${label && label !== block.uri ? ` (${label})` : ''}${facts.length ? `: ${facts.join('; ')}` : ''}`,
      ...kept,
    };
  }
  const mimeType = (block as { mimeType?: unknown }).mimeType;
  return {
    type: 'text',
    text: `[${block.type} content${typeof mimeType === 'string' ? ` (${mimeType})` : ''} left out: protocol revision ${revision} has no ${block.type} content blocks]`,
    ...kept,
  };
}

/** `tools` without their `outputSchema` (the same array when none has one), for a caller {@link definesStructuredContent} says no of. */
export function withoutOutputSchemas(tools: Tool[]): Tool[] {
  if (!tools.some((tool) => tool.outputSchema !== undefined)) return tools;
  return tools.map(({ outputSchema: _dropped, ...tool }) => tool as Tool);
}

/**
 * A result as the era's encode contract sends it (the SDK codec's `encodeResult`): on 2026-07-28
 * resultType stamped `complete` unless set (tools/call may answer `input_required` or `task`), cache
 * fields on cacheable results, the deleted fields dropped, serverInfo added to `_meta`; on 2025 the
 * SEP-2106 wrap of non-object output schemas in a tools/list.
 */
export function encodeResult(era: Era, method: string, result: Result): Result {
  // The 2026-07-28 codec adds resultType and `_meta` to a tools/call result as `{ ...result, key }`, a hidden class per
  // answer on Node 20 (wire/objects.ts): given both keys in place, in the order it appends them, it only replaces them.
  // tools/call only: a cacheable result gets ttlMs and cacheScope between the two (review).
  const keyed =
    era === 'modern' && method === 'tools/call' && (result.resultType === undefined || !('_meta' in result))
      ? withFields(result, { resultType: result.resultType === undefined ? 'complete' : result.resultType, _meta: result._meta })
      : result;
  return CODECS[era].encodeResult(method, keyed, GATEWAY_SERVER_INFO);
}

/**
 * The code a handler's error is sent with to a caller of `era`: the SDK's rule (-32002 becomes -32602,
 * 2026-07-28 basic/index §Error Codes), except that 2025-era callers keep -32002, which their revisions
 * name resource-not-found (2025-11-25 server/resources §Error Handling).
 */
export function errorCodeFor(era: Era, code: number): number {
  return era === 'legacy' && code === ERROR_CODE.resourceNotFound ? code : CODECS[era].encodeErrorCode(code);
}

/**
 * A complete tools/call result as the SDK server passes it on: through the spec's CallToolResult
 * schema (content defaulted to [], fields in schema order, unknown ones kept). `input_required` and a
 * relayed task (SEP-2663 `resultType: "task"`) are not CallToolResults and pass as they are, as does a
 * result the schema does not take (a 2026 non-object structuredContent, already checked by the
 * upstream client).
 */
export function asCallToolResult(result: Record<string, unknown>): Record<string, unknown> {
  if (result.resultType === 'input_required' || result.resultType === 'task') return result;
  const outcome = specTypeSchemas.CallToolResult['~standard'].validate(result);
  return outcome.issues === undefined ? (outcome.value as Record<string, unknown>) : result;
}

/**
 * `tools` as the era's codec sends them in a tools/list: the same array when it changes nothing (then
 * a listing's cached bytes can go out as they are), else the codec's copy (2026-07-28 drops `execution`;
 * 2025 wraps a non-object outputSchema root as `{ result }`, SEP-2106).
 */
export function toolsForEra(era: Era, tools: readonly Tool[]): readonly Tool[] {
  const encoded = CODECS[era].encodeResult('tools/list', { tools: tools as Tool[] }) as { tools?: readonly Tool[] };
  return encoded.tools ?? tools;
}

/**
 * What the 2026-07-28 encode contract writes after a tools/list result's `tools` array, as JSON text in
 * two parts around the answer's `ttlMs` value: resultType and the key of the TTL (the same for every
 * answer of a listing, so it can be compressed with the listing: mcp/listing-gzip.ts), then the cache
 * scope and serverInfo in `_meta`. Cut from the SDK codec's own encoding of an empty listing, so the
 * fields and their order are the SDK's.
 */
export const MODERN_TOOLS_LIST_TAIL: { readonly beforeTtl: string; readonly afterTtl: string } = (() => {
  const marker = 918_273_645_546_372;
  const encoded = JSON.stringify(encodeResult('modern', 'tools/list', { tools: [], ...modernToolsListFields(marker) }));
  const head = '{"tools":[]';
  const at = encoded.indexOf(String(marker));
  if (!encoded.startsWith(head) || at < 0 || encoded.indexOf(String(marker), at + 1) >= 0)
    throw new Error(`the SDK's 2026-07-28 tools/list encoding changed shape: ${encoded}`);
  return { beforeTtl: encoded.slice(head.length, at), afterTtl: encoded.slice(at + String(marker).length, -1) };
})();

/**
 * A tools/call answer as the SDK server sends it, as JSON text: the complete result through the spec's
 * CallToolResult schema ({@link asCallToolResult}), then the era's encode contract, in a JSON-RPC response.
 */
export function callToolAnswer(era: Era, id: RequestId, result: Record<string, unknown>): string {
  return resultResponse(id, encodeResult(era, 'tools/call', asCallToolResult(result)));
}

/**
 * A tools/list answer as the SDK server sends the arm's result (`tools` and, on 2026-07-28,
 * {@link modernToolsListFields}), in pieces around the tools' JSON (the era's tools, {@link toolsForEra},
 * already serialised: a listing's cached bytes go out as they are).
 */
export function toolsListAnswer<T extends string | Buffer>(era: Era, id: RequestId, toolsJson: T, ttlMs: number): (string | T)[] {
  const hints = era === 'modern' ? `${MODERN_TOOLS_LIST_TAIL.beforeTtl}${ttlMs}${MODERN_TOOLS_LIST_TAIL.afterTtl}` : '';
  return ['{"result":{"tools":', toolsJson, `${hints}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`];
}
