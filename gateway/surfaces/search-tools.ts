import { argumentErrorsMeta, type ArgumentError } from '../checks/input-check.ts';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { EmptyQueryError } from '../../search/index.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import { visibleCategories } from './compact-tools.ts';
import { toolErrorResult } from '../errors.ts';
import type { DispatchContext } from '../ports.ts';
import { SEARCH_TOOLS, findableByModel, resolveTool, type Resolved } from '../policy/tool-resolution.ts';
import { uiMeta } from '../catalog/extensions.ts';
import { recordDecision } from './tool-decision.ts';
import { inSpan } from '../obs/tracing.ts';
import { toolDeclaration } from './code-declarations.ts';
import { callableFirst, heldReason } from './tool-call.ts';

/** At most this many tools in a filter that matched nothing are named in the hint. */
const FEW_TOOLS = 20;

/** One search_tools match, in the shape its outputSchema declares (compact-tools.ts); `detail: brief`
 *  keeps name, title, the description's first sentence and `advertised`. */
interface SearchMatch {
  name: string;
  title?: string;
  description?: string;
  category?: string;
  /** The upstream serving the tool (several upstreams only). */
  upstream?: string;
  input_schema?: Tool['inputSchema'];
  output_schema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
  score?: number;
  advertised: boolean;
  /**
   * The tool is on hold (definition pinning, catalog/pin-guard.ts): its upstream changed it since it was
   * approved (or it is new, or has lint findings); the entry shows the approved definition, and a call
   * is refused (`tool_held`) until an operator approves the change. `held_reason` says why, in the
   * words of that refusal.
   */
  held?: true;
  held_reason?: string;
  /** MCP Apps: the tool's `_meta.ui` (its `ui://` view), so a host can prefetch the view it will render. */
  _meta?: { ui: Record<string, unknown> };
  /** `detail: typescript` (code mode): the tool as a method of run_code's `tools`. */
  declaration?: string;
}

/** Longest one-line description in a brief answer, characters. */
const BRIEF_DESCRIPTION = 160;

/**
 * search_tools: ranks the caller's visible tools for `query` on the catalogue version's shared index,
 * the index's filter admitting only tools the caller's model may find (policy/tool-resolution.ts
 * `findableByModel`: a hidden, app-only or withheld tool is never returned, hinted at or scored
 * against). Bad arguments (an empty or blank query among them) are an isError result naming
 * the paths: the spec's tool execution error for input validation (server/tools §Error Handling), so
 * the model can correct itself. No match: an empty list and a hint naming the caller's categories.
 * Every answer says "N of M tools matched" (`matched`, `total`, `summary`) so that a model knows when
 * to narrow its query; `detail: brief` answers without schemas (a cheap first look); `detail: typescript`
 * (code mode only) with each tool's TypeScript declaration for a run_code script (code-declarations.ts).
 * A tool on hold (pinning: its upstream changed its definition since it was approved) is returned with
 * its approved definition (the index holds that text, never the unreviewed one), marked `held` with the
 * reason, and after the callable matches of the page: its calls are refused until an operator approves
 * the change, so a model that takes the first match gets one it can call, and still learns the held
 * tool exists and why it cannot run (rather than a silent gap, or a blind pick that fails).
 * @param definition - search_tools as this caller's tools/list advertises it (its category enum).
 */
export async function searchTools(d: DispatchContext, visible: VisibleCatalog, definition: Tool, args: Record<string, unknown>): Promise<CallToolResult> {
  const { metrics, config } = d.runtime;
  const decided = performance.now();
  // The surface's own tool: counted in mcp_tool_calls_total and audited like any call (obs/outcomes.ts).
  const count = (outcome: 'ok' | 'invalid_arguments') =>
    recordDecision(d, {
      via: 'direct',
      name: SEARCH_TOOLS,
      outcome,
      arguments: args,
      started: decided,
      counted: { tool: SEARCH_TOOLS, outcome },
      own: true,
    });
  const check = d.runtime.inputs.check(SEARCH_TOOLS, definition.inputSchema, args);
  if (!check.ok) {
    count('invalid_arguments');
    return invalid(`Invalid arguments for search_tools: ${check.issues.join('; ')}.`, check.errors);
  }
  const query = args.query as string;
  const category = args.category as string | undefined;
  const upstream = args.upstream as string | undefined;
  const limit = (args.limit as number | undefined) ?? Math.min(config.compact.searchLimit, config.compact.maxSearchLimit);
  const brief = args.detail === 'brief';
  const index = await d.runtime.searchIndexes.get(visible.catalog);
  const resolve = (name: string) => resolveTool(visible.catalog, visible.access, name, d.surface.name, d.runtime.config.compact.codeMode.enabled);
  const started = performance.now();
  let page;
  try {
    // The query is an argument value: the span holds the result count only.
    page = await inSpan('search', { 'ai.cpz.gateway.search.limit': limit }, async (span) => {
      const found = await d.runtime.searchIndexes.searchPage(index, query, {
        limit,
        category,
        upstream,
        filter: (name) => findableByModel(resolve(name)),
        filterKey: visible.key,
      });
      span?.setAttribute('ai.cpz.gateway.search.results', found.hits.length);
      return found;
    });
  } catch (error) {
    if (!(error instanceof EmptyQueryError)) throw error;
    count('invalid_arguments');
    return invalid(`Invalid arguments for search_tools: /query is blank: ${error.message}.`, [{ path: '/query', message: 'is blank' }]);
  } finally {
    metrics.searchDuration.observe((performance.now() - started) / 1000);
  }
  const shape = brief ? briefMatch : args.detail === 'typescript' ? declaredMatch : match;
  const tools = callableFirst(
    page.hits.map((hit) => {
      const resolved = resolve(hit.name) as Resolved;
      return held(resolved, shape(resolved, hit.score, d));
    }),
  );
  d.runtime.audit.noteSearch({ credentialDigest: d.caller.credential.digest, requestId: d.caller.requestId, names: tools.map((t) => t.name) });
  const { matched, total } = page;
  const summary = `${matched} of ${total} tools matched${matched > tools.length ? `; showing the best ${tools.length}` : ''}.`;
  const structured: { tools: SearchMatch[]; matched: number; total: number; summary: string; hint?: string } = { tools, matched, total, summary };
  if (tools.length === 0) {
    // Within the upstream filter, its categories only (try-out: the hint listed every upstream's, and blamed the category alone).
    // Not the one already searched (try-out: "in category orders ... or a category: ..., orders, ...").
    const categories = visibleCategories(visible, upstream).filter((c) => c !== category);
    const within = `${category ? ` in category ${category}` : ''}${upstream ? ` of upstream ${upstream}` : ''}`;
    const other = category ? 'another category' : 'a category';
    structured.hint = `No tool matched${within}. Try other words${categories.length ? `, or ${other}${upstream ? ` of upstream ${upstream}` : ''}: ${categories.join(', ')}` : ''}.`;
    // A filter that leaves a few tools: their names, so a model picks by what they do (agent try-out: "add 17 and
    // 25" within upstream everything matched none of its 9 tools, get-sum among them, and the hint named none).
    if (upstream !== undefined || category !== undefined) {
      const names = visible.tools
        .filter((t) => (upstream === undefined || t.upstream === upstream) && (category === undefined || t.category === category))
        .filter((t) => findableByModel(resolve(t.name)))
        .map((t) => t.name);
      if (names.length > 0 && names.length <= FEW_TOOLS) structured.hint += ` The ${names.length} there: ${names.join(', ')}.`;
    }
  }
  count('ok');
  const result: CallToolResult = {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured as unknown as Record<string, unknown>,
  };
  return d.project(result, definition.outputSchema as Record<string, unknown> | undefined);
}

function match({ tool, advertised }: Resolved, score: number, d: DispatchContext): SearchMatch {
  const { title, description, inputSchema, outputSchema, annotations } = tool.definition;
  return {
    name: tool.name,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(tool.category !== undefined ? { category: tool.category } : {}),
    ...(d.runtime.config.upstreams.length > 1 ? { upstream: tool.upstream } : {}),
    input_schema: inputSchema,
    ...(outputSchema !== undefined ? { output_schema: outputSchema } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
    score,
    advertised,
    ...viewOf(tool.definition),
  };
}

function briefMatch({ tool, advertised }: Resolved, _score: number, d: DispatchContext): SearchMatch {
  const { title, description } = tool.definition;
  return {
    name: tool.name,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description: firstLine(description) } : {}),
    ...(d.runtime.config.upstreams.length > 1 ? { upstream: tool.upstream } : {}),
    advertised,
    ...viewOf(tool.definition),
  };
}

/** `match` with `held` and `held_reason` when the tool is on hold. */
function held({ pinned }: Resolved, match: SearchMatch): SearchMatch {
  return pinned.held ? { ...match, held: true, held_reason: heldReason(pinned) } : match;
}

/** `{ _meta: { ui } }` for a tool with an MCP Apps view (catalog/extensions.ts uiMeta), else nothing. */
function viewOf(definition: Tool): Pick<SearchMatch, '_meta'> {
  const ui = uiMeta(definition);
  return ui ? { _meta: { ui } } : {};
}

function declaredMatch({ tool, advertised }: Resolved): SearchMatch {
  return { name: tool.name, advertised, declaration: toolDeclaration(tool.definition).trim() };
}

/** The first sentence (or line) of a description, at most `BRIEF_DESCRIPTION` characters. */
function firstLine(text: string): string {
  const line = text.trim().split(/\n|(?<=[.!?])\s/u)[0] ?? '';
  return line.length > BRIEF_DESCRIPTION ? `${line.slice(0, BRIEF_DESCRIPTION - 1)}…` : line;
}

// No structuredContent on errors: v1 clients validate it against the outputSchema even when isError.
function invalid(message: string, errors: readonly ArgumentError[]): CallToolResult {
  const result = toolErrorResult('invalid_arguments', message);
  return { ...result, _meta: { ...result._meta, ...argumentErrorsMeta(errors) } };
}
