/**
 * Search text a server attaches to its own tool definitions in `_meta`, read at index time.
 */

/** `_meta` keys whose values are search text a server gives for its tool: Claude Code's `anthropic/searchHint`
 *  (a phrase), and `keywords` inside the CPZAI platform's own key (a list). */
export const SEARCH_HINT_KEY = 'anthropic/searchHint';
export const TOOL_META_KEY = 'ai.cpz/tool';

/** The search keywords a tool's `_meta` carries (see `SEARCH_HINT_KEY`); malformed values are ignored. */
export function metaKeywords(meta: Record<string, unknown> | undefined): string[] {
  if (meta === undefined || meta === null || typeof meta !== 'object') return [];
  const out: string[] = [];
  const hint = meta[SEARCH_HINT_KEY];
  if (typeof hint === 'string') out.push(hint);
  const own = meta[TOOL_META_KEY] as { keywords?: unknown } | undefined;
  if (own && typeof own === 'object' && Array.isArray(own.keywords)) out.push(...own.keywords.filter((k): k is string => typeof k === 'string'));
  return out;
}
