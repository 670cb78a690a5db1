import { argumentErrorsMeta } from '../checks/input-check.ts';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { VisibleCatalog } from '../policy/caller.ts';
import { CALL_TOOL, RUN_CODE, SEARCH_TOOLS, resolveTool, type ToolResolution } from '../policy/tool-resolution.ts';
import { RelayedUpstreamError, toolErrorResult, type ErrorKind } from '../errors.ts';
import { ERROR_CODE } from '../wire/jsonrpc.ts';
import type { DispatchContext } from '../ports.ts';
import { toolLabel } from '../obs/metrics.ts';
import { argumentsOverLimit, callCatalogTool, nearestNamesText, nearestVisibleNames, heldToolMessage, refuseHeld, type ToolCallAnswer } from './tool-call.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import { recordDecision } from './tool-decision.ts';
import { uiMeta } from '../catalog/extensions.ts';

/**
 * The `_meta` key of a call_tool result naming the tool it ran and the arguments it ran it with
 * (`{ name, arguments }`), on results of tools with an MCP Apps view: what a host sends the view as its
 * tool input (`ui/notifications/tool-input`) in place of call_tool's own arguments.
 */
export const CALLED_TOOL_META_KEY = 'ai.cpz.gateway/tool';

/**
 * call_tool: runs a visible, read-only, non-advertised tool and returns its result exactly as a direct
 * call would (same forwarding, same output check, same era projection: `callCatalogTool`). Everything
 * else is refused with an isError result and nothing reaches the upstream, checked in this order on the
 * target's resolution (policy/tool-resolution.ts):
 * 1. a name outside the caller's scopes, not in the catalogue, or an MCP Apps app-only tool (not
 *    `reachableByModel`): one and the same "unknown tool" answer
 *    with the nearest visible names (edit distance, then search), so a denied tool looks exactly like a
 *    missing one (and is never named, even by a "call it directly"); a tool the caller may see whose
 *    upstream is down (withheld from the catalogue) answers "upstream unavailable" instead, as a direct
 *    call of it does: the caller would see it, so saying it exists reveals nothing; one on hold (its
 *    definition changed since approved: `pinned`, catalog/pin-guard.ts) answers what changed and how an
 *    operator approves it;
 * 2. a state-changing tool, or 3. an advertised one: "call it directly", so approval stays on the name
 *    the client can see;
 * 4. arguments failing the tool's inputSchema: every offending path and the tool's input_schema.
 * A result of a tool with an MCP Apps view carries what a host needs to render it, which call_tool's own
 * definition cannot link: the tool's `_meta.ui` (its `resourceUri`) and {@link CALLED_TOOL_META_KEY}.
 * Refusals are tool execution errors (server/tools §Error Handling): the model reads them and retries.
 * Each refusal is recorded once as a tool decision (audit event, request span: {@link auditOutcome}).
 * run_code's inner calls (surfaces/run-code.ts) come through here too, `via: 'run_code'`, with one
 * difference: an advertised read-only tool (a read anchor) runs, since a read needs no approval and
 * "call it directly" means nothing inside a script; a state-changing one is refused all the same.
 * @param definition - call_tool as advertised (its own arguments are checked against it first).
 */
export async function callThroughDispatcher(
  d: DispatchContext,
  visible: VisibleCatalog,
  definition: Tool,
  args: Record<string, unknown>,
  via: 'call_tool' | 'run_code' = 'call_tool',
): Promise<ToolCallAnswer> {
  const started = performance.now();
  const resolve = (name: string) => resolveTool(visible.catalog, visible.access, name, d.surface.name, d.runtime.config.compact.codeMode.enabled);
  const refuse = (
    tool: string,
    target: ToolResolution,
    outcome: 'refused' | 'invalid_arguments' | 'is_error',
    kind: ErrorKind,
    message: string,
    meta: Record<string, unknown> = {},
  ): CallToolResult => {
    recordRefusal(d, via, tool, target, outcome, kind, args.arguments ?? {}, started);
    const result = toolErrorResult(kind, message);
    return { ...result, _meta: { ...result._meta, ...meta } };
  };

  const own = d.runtime.inputs.check(CALL_TOOL, definition.inputSchema, args);
  if (!own.ok) {
    const asked = typeof args.name === 'string' ? args.name : '';
    return refuse(
      asked,
      resolve(asked),
      'invalid_arguments',
      'invalid_arguments',
      `Invalid arguments for call_tool: ${own.issues.join('; ')}.`,
      argumentErrorsMeta(own.errors),
    );
  }
  const name = args.name as string;
  const targetArgs = (args.arguments as Record<string, unknown> | undefined) ?? {};

  // The edge's admission resolved this target already in the same catalogue (mcp/admission.ts): reused.
  const admitted = d.target?.via === 'call_tool' && d.target.name === name && d.target.catalog === visible.catalog ? d.target : undefined;
  const target = admitted ? admitted.resolution : resolve(name);
  // The surface's own tools: called by name, never through call_tool or from a script.
  if (name === SEARCH_TOOLS || name === CALL_TOOL || (name === RUN_CODE && d.runtime.config.compact.codeMode.enabled)) {
    const message =
      via === 'call_tool'
        ? `${name} is advertised: call it directly.`
        : `${name} cannot be called from run_code: ${name === SEARCH_TOOLS ? 'call search_tools before writing the script, then call' : 'call'} the tools by name in it (await tools.<name>(arguments)).`;
    return refuse(name, target, 'refused', 'call_directly', message);
  }
  if (!target.reachableByModel) {
    const nearest = await nearestVisibleNames(d, visible, name);
    const hint = nearest.length ? ` Nearest names: ${nearestNamesText(nearest)}.` : '';
    const held = nearest.filter((n) => n.held).map((n) => n.name);
    return refuse(name, target, 'refused', 'unknown_tool', `Unknown tool: ${name}.${hint} Use search_tools to find a tool for the task.`, {
      'ai.cpz.gateway/nearest': nearest.map((n) => n.name),
      ...(held.length ? { 'ai.cpz.gateway/nearest_held': held } : {}),
    });
  }
  const tool = target.tool;
  if (target.withheld) {
    return refuse(
      name,
      target,
      'is_error',
      'upstream_unavailable',
      `Tool "${name}" could not be executed: upstream ${tool.upstream} is unavailable. Try again later.`,
    );
  }
  if (target.pinned.held) {
    refuseHeld(d, name, target.pinned, via, targetArgs, started);
    const result = toolErrorResult('tool_held', heldToolMessage(name, target.pinned, d.runtime.config.console.adminToken !== undefined));
    return { ...result, _meta: { ...result._meta, 'ai.cpz.gateway/changes': target.pinned.changes } };
  }
  if (!target.readOnly) {
    return refuse(
      name,
      target,
      'refused',
      'call_directly',
      `${name} changes state, so ${via} will not run it; call it directly: it is advertised so your client can ask for approval.`,
    );
  }
  if (target.advertised && via === 'call_tool') return refuse(name, target, 'refused', 'call_directly', `${name} is advertised: call it directly.`);

  const overLimit = argumentsOverLimit(d, tool, targetArgs, via, started);
  if (overLimit) return overLimit;
  const check = d.runtime.inputs.check(tool.name, tool.definition.inputSchema, targetArgs);
  if (!check.ok) {
    const message = `Invalid arguments for ${name}: ${check.issues.join('; ')}. Its input_schema: ${JSON.stringify(tool.definition.inputSchema)}`;
    return refuse(name, target, 'invalid_arguments', 'invalid_arguments', message, {
      ...argumentErrorsMeta(check.errors),
      'ai.cpz.gateway/input_schema': tool.definition.inputSchema,
    });
  }
  let answer: ToolCallAnswer;
  try {
    answer = await callCatalogTool(d, tool, targetArgs, via);
  } catch (error) {
    // call_tool is the gateway's own tool: the JSON-RPC error its target's upstream answered (a direct call
    // relays it as it came) is call_tool's result, an isError the model reads (server/tools §Error Handling),
    // as an upstream timeout is; it was a protocol error many hosts never show the model (try-out).
    if (!(error instanceof RelayedUpstreamError)) throw error;
    const kind = error.code === ERROR_CODE.invalidParams ? 'invalid_arguments' : 'upstream_rejected';
    return toolErrorResult(kind, `Tool "${name}" could not be executed: upstream ${tool.upstream} answered JSON-RPC error ${error.code}: ${error.message}`);
  }
  return withView(answer, tool.definition, name, targetArgs);
}

/**
 * Records a script's `tools.<name>(x)` call refused before anything is dispatched (surfaces/run-code.ts), as
 * {@link callThroughDispatcher} records its own refusals: `via: run_code`, the run's id (`d.runId`), the tool `name`
 * resolves to, the kind as reason. `x` not one object (`invalid_arguments`) or its JSON over `limits.bodyBytes`
 * (`payload_too_large`, never parsed: `args` then a stand-in naming the bound) is audited `invalid_arguments`; a call
 * after a reload replaced the configuration the run was authorised under (`configuration_reloaded`,
 * runtime-state.ts `replacedByReload`) is a refusal.
 */
export function refuseScriptCall(
  d: DispatchContext,
  visible: VisibleCatalog,
  name: string,
  kind: 'invalid_arguments' | 'payload_too_large' | 'configuration_reloaded',
  args: unknown,
  started: number,
): void {
  const target = resolveTool(visible.catalog, visible.access, name, d.surface.name, d.runtime.config.compact.codeMode.enabled);
  recordRefusal(d, 'run_code', name, target, kind === 'configuration_reloaded' ? 'refused' : 'invalid_arguments', kind, args, started);
}

/** Logs and records one refusal of call_tool or of a script's call: nothing reached the upstream. */
function recordRefusal(
  d: DispatchContext,
  via: 'call_tool' | 'run_code',
  name: string,
  target: ToolResolution,
  outcome: 'refused' | 'invalid_arguments' | 'is_error',
  kind: ErrorKind,
  args: unknown,
  started: number,
): void {
  // A tool hidden from the caller is counted as a missing one is (`unknown`): /metrics answers anyone who reaches it,
  // and a hidden tool's own series told it apart (try-out). The log line and the audit event name it for operators.
  const label = kind === 'unknown_tool' ? 'unknown' : toolLabel(name, () => target.tool !== undefined);
  d.log.info({ tool: target.tool ? name : label, kind }, `${via} refused without contacting the upstream`);
  recordDecision(d, {
    via,
    name,
    tool: target.tool,
    outcome: auditOutcome(kind, target),
    reason: kind,
    arguments: args,
    started,
    counted: { tool: label, outcome },
  });
}

/**
 * A tool result of a tool with an MCP Apps view (MCP Apps 2026-01-26 §Resource Discovery: the host
 * renders a tool's result with the view its `_meta.ui.resourceUri` names), with that `_meta.ui` and the
 * call it answers in its `_meta`; an upstream's own `_meta.ui` on the result is kept. Anything else
 * (no view, an input_required answer) as it is.
 */
function withView(answer: ToolCallAnswer, definition: Tool, name: string, args: Record<string, unknown>): ToolCallAnswer {
  const ui = uiMeta(definition);
  if (!ui || !('content' in answer)) return answer;
  return { ...answer, _meta: { ui, [CALLED_TOOL_META_KEY]: { name, arguments: args }, ...answer._meta } };
}

/**
 * The audit outcome of a call_tool refusal. Operators are told what the caller is not: an "unknown
 * tool" answer about a catalogue tool is a refusal for scope, and "call it directly" says whether the
 * tool changes state or is simply advertised.
 */
function auditOutcome(kind: ErrorKind, target: ToolResolution): AuditOutcome {
  if (kind === 'invalid_arguments' || kind === 'payload_too_large') return 'invalid_arguments';
  if (kind === 'unknown_tool') return target.tool ? 'refused_scope' : 'unknown_tool';
  if (kind === 'call_directly') return target.tool && !target.readOnly ? 'refused_write_via_call_tool' : 'refused_advertised';
  if (kind === 'configuration_reloaded') return 'refused_reloaded';
  return 'error';
}
