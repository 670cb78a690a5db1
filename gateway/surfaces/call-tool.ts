import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { VisibleCatalog } from '../policy/caller.ts';
import { visibleTool } from './search-tools.ts';
import { isVisible } from '../policy/visibility.ts';
import { isAppOnlyTool } from '../catalog/extensions.ts';
import { CALL_TOOL, SEARCH_TOOLS, compactAdvertises } from './compact-tools.ts';
import { toolErrorResult, type ErrorKind } from '../errors.ts';
import type { DispatchContext } from '../mcp/types.ts';
import { toolLabel } from '../obs/metrics.ts';
import { NEAREST_LIMIT, callCatalogTool, type ToolCallAnswer } from './tool-call.ts';
import type { CatalogTool } from '../catalog/catalog.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import { recordDecision } from './tool-decision.ts';
import { inSpan } from '../obs/tracing.ts';

/**
 * call_tool: runs a visible, read-only, non-advertised tool and returns its result exactly as a direct
 * call would (same forwarding, same output check, same era projection: `callCatalogTool`). Everything
 * else is refused with an isError result and nothing reaches the upstream, checked in this order:
 * 1. a name outside the caller's scopes, not in the catalogue, or an MCP Apps app-only tool: one and the same "unknown tool" answer
 *    with the nearest visible names (edit distance, then search), so a denied tool looks exactly like a
 *    missing one (and is never named, even by a "call it directly"); a tool the caller may see whose
 *    upstream is down (withheld from the catalogue) answers "upstream unavailable" instead, as a direct
 *    call of it does: the caller would see it, so saying it exists reveals nothing;
 * 2. a state-changing tool, or 3. an advertised one: "call it directly", so approval stays on the name
 *    the client can see;
 * 4. arguments failing the tool's inputSchema: every offending path and the tool's input_schema.
 * Refusals are tool execution errors (server/tools §Error Handling): the model reads them and retries.
 * Each refusal is recorded once as a tool decision (audit event, request span: {@link auditOutcome}).
 * @param definition - call_tool as advertised (its own arguments are checked against it first).
 */
export async function callThroughDispatcher(
  d: DispatchContext,
  visible: VisibleCatalog,
  definition: Tool,
  args: Record<string, unknown>,
): Promise<ToolCallAnswer> {
  const started = performance.now();
  const refuse = (
    tool: string,
    outcome: 'refused' | 'invalid_arguments' | 'is_error',
    kind: ErrorKind,
    message: string,
    meta: Record<string, unknown> = {},
  ): CallToolResult => {
    // Operators see the catalogue name even for a denied tool; the caller never does. Bounded by the catalogue.
    const label = toolLabel(tool, (n) => visible.catalog.byName.has(n) || visible.catalog.withheld?.has(n) === true);
    d.runtime.metrics.toolCalls.inc({ endpoint: d.surface.name, tool: label, via: 'call_tool', outcome });
    d.log.info({ tool: label, kind }, 'call_tool refused without contacting the upstream');
    const known = visible.catalog.byName.get(tool) ?? visible.catalog.withheld?.get(tool);
    recordDecision(d, {
      via: 'call_tool',
      name: tool,
      tool: known,
      outcome: auditOutcome(kind, known),
      reason: kind,
      arguments: args.arguments ?? {},
      started,
    });
    const result = toolErrorResult(kind, message);
    return { ...result, _meta: { ...result._meta, ...meta } };
  };

  const own = d.runtime.inputs.check(CALL_TOOL, definition.inputSchema, args);
  if (!own.ok)
    return refuse(
      typeof args.name === 'string' ? args.name : '',
      'invalid_arguments',
      'invalid_arguments',
      `Invalid arguments for call_tool: ${own.issues.join('; ')}.`,
      { 'ai.cpz.gateway/paths': own.paths },
    );
  const name = args.name as string;
  const targetArgs = (args.arguments as Record<string, unknown> | undefined) ?? {};

  if (name === SEARCH_TOOLS || name === CALL_TOOL) return refuse(name, 'refused', 'call_directly', `${name} is advertised: call it directly.`);
  const tool = visibleTool(visible, name);
  const withheld = tool ? undefined : visible.catalog.withheld?.get(name);
  if (withheld && isVisible(withheld, visible.access) && !isAppOnlyTool(withheld.definition)) {
    return refuse(
      name,
      'is_error',
      'upstream_unavailable',
      `Tool "${name}" could not be executed: upstream ${withheld.upstream} is unavailable. Try again later.`,
    );
  }
  if (!tool) {
    const index = await d.runtime.searchIndexes.get(visible.catalog);
    const nearest = inSpan('search', { 'ai.cpz.gateway.search.kind': 'nearest_names' }, () =>
      index.nearestNames(name, { limit: NEAREST_LIMIT, filter: (n) => visibleTool(visible, n) !== undefined }),
    );
    const hint = nearest.length ? ` Nearest names: ${nearest.join(', ')}.` : '';
    return refuse(name, 'refused', 'unknown_tool', `Unknown tool: ${name}.${hint} Use search_tools to find a tool for the task.`, {
      'ai.cpz.gateway/nearest': nearest,
    });
  }
  if (!tool.readOnly) {
    return refuse(
      name,
      'refused',
      'call_directly',
      `${name} changes state, so call_tool will not run it; call it directly: it is advertised so your client can ask for approval.`,
    );
  }
  if (compactAdvertises(tool, d.runtime.config)) return refuse(name, 'refused', 'call_directly', `${name} is advertised: call it directly.`);

  const check = d.runtime.inputs.check(tool.name, tool.definition.inputSchema, targetArgs);
  if (!check.ok) {
    const message = `Invalid arguments for ${name}: ${check.issues.join('; ')}. Its input_schema: ${JSON.stringify(tool.definition.inputSchema)}`;
    return refuse(name, 'invalid_arguments', 'invalid_arguments', message, {
      'ai.cpz.gateway/paths': check.paths,
      'ai.cpz.gateway/input_schema': tool.definition.inputSchema,
    });
  }
  return callCatalogTool(d, tool, targetArgs, 'call_tool');
}

/**
 * The audit outcome of a call_tool refusal. Operators are told what the caller is not: an "unknown
 * tool" answer about a catalogue tool is a refusal for scope, and "call it directly" says whether the
 * tool changes state or is simply advertised.
 */
function auditOutcome(kind: ErrorKind, tool: CatalogTool | undefined): AuditOutcome {
  if (kind === 'invalid_arguments') return 'invalid_arguments';
  if (kind === 'unknown_tool') return tool ? 'refused_scope' : 'unknown_tool';
  if (kind === 'call_directly') return tool && !tool.readOnly ? 'refused_write_via_call_tool' : 'refused_advertised';
  return 'error';
}
