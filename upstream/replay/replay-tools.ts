/**
 * The replay upstream's catalogue: tool definitions served as they are, with names made unique and the
 * category carried where the gateway reads it, and the deterministic result of calling one.
 */
import type { CatalogEntry, ToolDefinition } from './catalog-file.ts';
import { TOOL_META_KEY } from './catalog-file.ts';
import { sampleValue } from './sample-value.ts';

/** Separator between a server key and a tool name when a name must be made unique. */
export const SERVER_SEPARATOR = '__';

/**
 * The definitions to serve. A name that repeats across servers (the same tool name on two servers of a
 * multi-server dump) is served as `<server_key>__<name>`; a repeat with no server key to tell it apart
 * throws, since one MCP server cannot list a name twice. A category from the file goes into
 * `_meta["ai.cpz/tool"]` (with no required scopes) unless the tool already has that key.
 */
export function replayTools(entries: CatalogEntry[]): ToolDefinition[] {
  const counts = new Map<string, number>();
  for (const { tool } of entries) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
  const seen = new Set<string>();
  return entries.map(({ tool, serverKey, category }) => {
    const repeated = (counts.get(tool.name) ?? 0) > 1;
    if (repeated && serverKey === undefined) throw new Error(`tool name "${tool.name}" repeats and has no server key to tell the copies apart`);
    const name = repeated ? `${serverKey}${SERVER_SEPARATOR}${tool.name}` : tool.name;
    if (seen.has(name)) throw new Error(`tool name "${name}" repeats within server "${serverKey}"`);
    seen.add(name);
    const meta =
      category !== undefined && tool._meta?.[TOOL_META_KEY] === undefined ? { ...tool._meta, [TOOL_META_KEY]: { category, requiredScopes: [] } } : tool._meta;
    return { ...tool, name, inputSchema: tool.inputSchema ?? { type: 'object' }, ...(meta !== undefined ? { _meta: meta } : {}) };
  });
}

/**
 * The result of calling `tool` with `args`: with an outputSchema, a `structuredContent` valid against it
 * (and its JSON as text, as the spec recommends); without one, a text echo of the call. Deterministic.
 */
export function replayResult(
  tool: ToolDefinition,
  args: Record<string, unknown>,
): {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
} {
  if (tool.outputSchema !== undefined) {
    const value = sampleValue(tool.outputSchema);
    const structured = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  return { content: [{ type: 'text', text: JSON.stringify({ tool: tool.name, arguments: args }) }] };
}
