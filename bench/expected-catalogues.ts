/**
 * What each caller must see, computed without the gateway: the reference upstream's tool definitions
 * (their `_meta["ai.cpz/tool"].requiredScopes` and readOnlyHint), the platform's grants for the demo
 * keys, and the configured compact anchors (config/cpzai.yaml). A caller sees a tool when it holds
 * any of its required scopes; `/mcp/compact` lists search_tools, call_tool, every visible write and
 * the visible anchors (issue 8).
 */
import { loadConfig } from '../config/load.ts';
import { DEMO_CREDENTIALS, expandScopes } from '../upstream/platform/credentials.ts';
import { TOOL_LIST, TOOL_META_KEY } from '../upstream/server/tools/index.ts';

export type DemoKey = 'full' | 'data' | 'identity';
export const DEMO_KEY_NAMES: readonly DemoKey[] = ['full', 'data', 'identity'];

/** The demo credentials as request headers (public demo values, see upstream/README.md). */
export const DEMO_KEYS = Object.fromEntries(
  DEMO_CREDENTIALS.map((c) => [c.keyId.replace('cpz_demo_', ''), { 'x-cpz-key': c.keyId, 'x-cpz-secret': c.secret } as Record<string, string>]),
) as Record<DemoKey, Record<string, string>>;

const ANCHORS = loadConfig({ env: {} }).upstreams[0]!.anchors;

interface ReferenceTool {
  name: string;
  requiredScopes: string[];
  readOnly: boolean;
}

const TOOLS: ReferenceTool[] = TOOL_LIST.map((tool) => {
  const meta = (tool._meta as Record<string, { requiredScopes?: string[] }> | undefined)?.[TOOL_META_KEY];
  return {
    name: tool.name,
    requiredScopes: meta?.requiredScopes ?? [],
    readOnly: (tool.annotations as { readOnlyHint?: boolean } | undefined)?.readOnlyHint === true,
  };
});

/** Every tool of the reference upstream. */
export const ALL_TOOL_NAMES: readonly string[] = TOOLS.map((t) => t.name);

/** Tools visible to a caller with `scopes` on `/mcp`, sorted. */
export function visibleNames(scopes: readonly string[]): string[] {
  return TOOLS.filter((t) => t.requiredScopes.length === 0 || t.requiredScopes.some((s) => scopes.includes(s)))
    .map((t) => t.name)
    .sort();
}

/** The `/mcp/compact` tools/list of a caller with `scopes`, sorted. */
export function compactNames(scopes: readonly string[]): string[] {
  const visible = new Set(visibleNames(scopes));
  const advertised = TOOLS.filter((t) => visible.has(t.name) && (!t.readOnly || ANCHORS.includes(t.name))).map((t) => t.name);
  return ['search_tools', 'call_tool', ...advertised].sort();
}

/** The scopes the platform grants a demo key. */
export function demoScopes(key: DemoKey): string[] {
  const credential = DEMO_CREDENTIALS.find((c) => c.keyId === `cpz_demo_${key}`)!;
  return expandScopes(credential.granted);
}

/** Expected tools/list names per demo key and endpoint. */
export const EXPECTED: Record<DemoKey, { full: string[]; compact: string[] }> = Object.fromEntries(
  DEMO_KEY_NAMES.map((key) => [key, { full: visibleNames(demoScopes(key)), compact: compactNames(demoScopes(key)) }]),
) as Record<DemoKey, { full: string[]; compact: string[] }>;
