/**
 * Reads a catalogue file into MCP tool definitions. Accepted shapes:
 * - a tools/list result `{ tools: [...] }` (our `tool-catalog.json`) or a bare array of tool definitions
 *   (`github-mcp-server-tools.json`);
 * - a flattened multi-server dump whose elements add `server`, `server_key` and `category`
 *   (`livemcpbench-tools.json`).
 * Throws an Error naming the file and the offending element when the file is not one of these.
 */
import { readFileSync } from 'node:fs';

/** A tool definition as tools/list carries it (fields we do not know are kept as they are). */
export type ToolDefinition = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
};

/** One catalogue entry: the definition, plus where it comes from when the file says so. */
export type CatalogEntry = { tool: ToolDefinition; serverKey?: string; server?: string; category?: string };

/** `_meta` key under which a tool's category (and required scopes) travel; see upstream/server. */
export const TOOL_META_KEY = 'ai.cpz/tool';

const DUMP_FIELDS = ['server', 'server_key', 'category'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Category from `_meta["ai.cpz/tool"].category`, when present. */
export function metaCategory(tool: { _meta?: Record<string, unknown> }): string | undefined {
  const meta = tool._meta?.[TOOL_META_KEY];
  return isObject(meta) && typeof meta.category === 'string' ? meta.category : undefined;
}

/** Parses catalogue JSON already read (`source` names it in errors). */
export function parseCatalog(json: unknown, source: string): CatalogEntry[] {
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json.tools) ? json.tools : undefined;
  if (list === undefined) throw new Error(`${source}: expected an array of tools or { tools: [...] }`);
  return list.map((raw: unknown, i: number): CatalogEntry => {
    if (!isObject(raw) || typeof raw.name !== 'string' || raw.name === '') {
      throw new Error(`${source}: element ${i} has no string "name"`);
    }
    const tool = { ...raw, inputSchema: raw.inputSchema ?? { type: 'object' } } as unknown as ToolDefinition;
    if (!isObject(tool.inputSchema)) throw new Error(`${source}: tool "${raw.name}" has an inputSchema that is not an object`);
    for (const field of DUMP_FIELDS) delete tool[field];
    const category = typeof raw.category === 'string' ? raw.category : metaCategory(tool);
    return {
      tool,
      ...(typeof raw.server_key === 'string' ? { serverKey: raw.server_key } : {}),
      ...(typeof raw.server === 'string' ? { server: raw.server } : {}),
      ...(category !== undefined ? { category } : {}),
    };
  });
}

/** Reads and parses the catalogue file at `path`. */
export function readCatalog(path: string): CatalogEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: cannot read catalogue (${(err as Error).message})`);
  }
  return parseCatalog(json, path);
}
