import type { Tool } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../config/types.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import { CALL_TOOL, SEARCH_TOOLS, resolveTool } from '../policy/tool-resolution.ts';
import { runCodeDefinition } from './run-code.ts';

/**
 * The paragraph `/mcp/compact` adds to the upstreams' instructions, which were written for a server that
 * lists every tool (the CPZAI ones say "look ids up with the list_* tools", most of which are not listed
 * here): the workflow that reaches the rest, and that it reaches only what the caller's credential may use
 * (a tool another credential's scopes allow is neither listed nor found: try-out).
 */
export const COMPACT_INSTRUCTIONS =
  'On this endpoint most tools are not listed up front. To use one that is not in your tool list: call search_tools ' +
  'with the task in plain words, read the input_schema of the match, then call it directly by name if `advertised` is ' +
  'true, else through call_tool with {name, arguments}; search_tools finds only the tools your credential may use.';

/** Said after the upstreams' own instructions only (try-out: "named above" read oddly with nothing above it). */
export const COMPACT_AFTER_UPSTREAM = 'Tools the instructions above name but your list lacks are reached the same way when your credential may use them.';

/** The upstreams of the caller's visible tools, sorted: search_tools' `upstream` enum (several upstreams only). */
export function visibleUpstreams(visible: VisibleCatalog): string[] {
  return [...new Set(visible.tools.map((t) => t.upstream))].sort();
}

/** The categories of the caller's visible tools (of `upstream` only, when given), sorted: the search's category enum and no-match hint. */
export function visibleCategories(visible: VisibleCatalog, upstream?: string): string[] {
  const tools = upstream === undefined ? visible.tools : visible.tools.filter((t) => t.upstream === upstream);
  return [...new Set(tools.map((t) => t.category).filter((c): c is string => !!c))].sort();
}

/**
 * The compact tools/list for one visible catalogue: search_tools, call_tool, run_code where
 * `compact.codeMode.enabled` (a catalogue tool of that name is then shadowed), then the catalogue tools
 * the surface advertises to this caller (policy/tool-resolution.ts: every state-changing tool, the read
 * anchors, MCP Apps app-only tools) in catalogue order. Built once per visibility key (see ListingCache).
 */
export function compactTools(config: GatewayConfig, visible: VisibleCatalog): Tool[] {
  const code = config.compact.codeMode.enabled;
  const advertised = visible.tools.filter((t) => resolveTool(visible.catalog, visible.access, t.name, 'compact', code).advertised).map((t) => t.definition);
  return [
    searchToolsDefinition(config, visibleCategories(visible), visibleUpstreams(visible)),
    CALL_TOOL_DEFINITION,
    ...(code ? [runCodeDefinition(config.compact.codeMode, visible)] : []),
    ...advertised,
  ];
}

/** Characters of a search_tools query: a task described in a paragraph fits; a pasted document does not. */
const MAX_QUERY_LENGTH = 2000;
/** Characters of a tool name given to call_tool: twice the 128 MCP 2025-11-25 §Tool Names recommends, room for an upstream prefix. */
const MAX_TOOL_NAME_LENGTH = 256;

// Descriptions are read by a model on every request: they teach the workflow in as few words as do it.
function searchToolsDefinition(config: GatewayConfig, categories: string[], upstreams: string[]): Tool {
  const max = config.compact.maxSearchLimit;
  // Only with several upstreams: one upstream's search_tools stays exactly as it was.
  const several = config.upstreams.length > 1;
  // Only in code mode: without it, search_tools stays exactly as it was.
  const code = config.compact.codeMode.enabled;
  return {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      'Finds tools of this server; most are not listed up front. Describe the task (or give a tool or parameter name). ' +
      'Each match has its input_schema and `advertised`: if true call the tool by name, else through call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        // Bounded so a long query costs no ranking work and no echo (limits.stringLength is for tool arguments).
        query: { type: 'string', maxLength: MAX_QUERY_LENGTH, description: 'The task in plain words, or a tool or parameter name.' },
        ...(categories.length ? { category: { type: 'string', enum: categories } } : {}),
        ...(several && upstreams.length ? { upstream: { type: 'string', enum: upstreams, description: 'Only tools of this server.' } } : {}),
        limit: { type: 'integer', minimum: 1, maximum: max, default: Math.min(config.compact.searchLimit, max) },
        detail: {
          type: 'string',
          enum: code ? ['brief', 'full', 'typescript'] : ['brief', 'full'],
          default: 'full',
          description:
            'brief: name, title, one-line description and advertised only (ask again with full for schemas).' +
            (code ? ' typescript: name, advertised and a TypeScript declaration for run_code scripts.' : ''),
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        tools: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              title: { type: 'string' },
              description: { type: 'string' },
              category: { type: 'string' },
              ...(several ? { upstream: { type: 'string' } } : {}),
              input_schema: { type: 'object' },
              output_schema: { type: 'object' },
              annotations: { type: 'object' },
              score: { type: 'number' },
              advertised: { type: 'boolean' },
              held: { type: 'boolean', description: 'On hold: its upstream changed it since approval; refused until an operator approves.' },
              held_reason: { type: 'string' },
              _meta: { type: 'object' },
              ...(code ? { declaration: { type: 'string' } } : {}),
            },
            required: ['name', 'advertised'],
          },
        },
        matched: { type: 'integer', description: 'Tools that matched the query (before the limit).' },
        total: { type: 'integer', description: 'Tools this caller can search.' },
        summary: { type: 'string', description: '"N of M tools matched": refine the query when N is large.' },
        hint: { type: 'string' },
      },
      required: ['tools', 'matched', 'total', 'summary'],
    },
    annotations: { readOnlyHint: true },
  };
}

const CALL_TOOL_DEFINITION: Tool = {
  name: CALL_TOOL,
  title: 'Call a found tool',
  description:
    'Runs a read-only tool found with search_tools whose `advertised` is false, and returns its result. ' +
    'Advertised tools (writes and a few reads) are called by name, not here.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: MAX_TOOL_NAME_LENGTH, description: 'Tool name from search_tools.' },
      arguments: { type: 'object', description: "Matching that tool's input_schema." },
    },
    required: ['name'],
    additionalProperties: false,
  },
  // It runs read-only tools only and refuses the rest, so it is read-only itself.
  annotations: { readOnlyHint: true },
};
