import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { clip } from '../wire/clip.ts';
import type { CatalogTool, HeldTool } from '../catalog/catalog.ts';
import { GatewayError, failureOf, toolErrorResult, type UpstreamFailure } from '../errors.ts';
import { ERROR_CODE } from '../wire/jsonrpc.ts';
import { forward, forwardFailure, isInputRequired, relayedErrorResult } from '../upstream/forwarding.ts';
import type { DispatchContext, ToolCallAnswer } from '../ports.ts';
import { directCallAllowed, findableByModel, resolveTool } from '../policy/tool-resolution.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import { OUTCOME_META_KEY, outputViolationResult, recordDecision, spendToolBudgets, visibleForCall } from './tool-decision.ts';
import { breachProblem, describeBreach, findLimitBreach } from '../checks/input-limits.ts';
import { jsonPointer } from '../checks/json-pointer.ts';
import { argumentErrorsMeta } from '../checks/input-check.ts';
import { inSpan } from '../obs/tracing.ts';
import { createdTask, forwardedTask, relayCreatedTask, type TaskParam } from './tasks.ts';

/** How a call reached the upstream: advertised on the surface, through the compact `call_tool`, or from a `run_code` script. */
export type CallVia = 'direct' | 'call_tool' | 'run_code';

export type { ToolCallAnswer } from '../ports.ts';

/**
 * Calls one catalogue tool on the upstream that owns it (`tool.upstream`, under its own name
 * `tool.upstreamName`: the exposed name is looked up, never split) with the caller's credential,
 * `_meta`, progress, logs, cancellation, multi-round-trip fields and the tool's `Mcp-Param-*` headers
 * (forwarding.ts), then checks the result against the tool's outputSchema.
 * Arguments over an input limit (`limits.jsonDepth`/`stringLength`/`arrayLength`/`objectMembers`, counted from the
 * arguments object) are an isError "invalid arguments" result, and nothing is sent.
 * Execution failures (timeout, upstream down, 5xx, a refused credential) come back as isError results;
 * a JSON-RPC error the upstream answered (unknown tool, invalid params, -32021) is rethrown unchanged;
 * an `input_required` answer is relayed as it is (nothing to check yet). The caller's access to the
 * tool is decided before this (callToolDirect, call_tool). Before anything is forwarded the call
 * spends its rate budgets (a spent one answers isError `rate_limited`, tool-decision.ts); every
 * outcome is reported once as a tool decision (one outcome event: audit, metrics and span subscribe). A
 * 2025-era caller's `task` augmentation is forwarded where the tool takes it, dropped where its upstream
 * serves no tasks (surfaces/tasks.ts forwardedTask), and a
 * CreateTaskResult of either form is relayed under the caller's own task id (relayCreatedTask).
 * @returns the result projected for the caller's era (the SDK codec's `projectCallToolResult`).
 */
export async function callCatalogTool(
  d: DispatchContext,
  tool: CatalogTool,
  args: Record<string, unknown> | undefined,
  via: CallVia,
  task?: TaskParam,
): Promise<ToolCallAnswer> {
  const started = performance.now();
  // Each outcome is reported once, where it is decided: audit, mcp_tool_calls_total and the span subscribe (obs/outcomes.ts).
  const decided = (outcome: AuditOutcome, counted: string, reason?: string, budget?: string, forwarded?: boolean) =>
    recordDecision(d, {
      via,
      name: tool.name,
      tool,
      outcome,
      reason,
      arguments: args ?? {},
      started,
      budget,
      counted: { tool: tool.name, outcome: counted },
      forwarded,
    });
  const overLimit = argumentsOverLimit(d, tool, args, via, started);
  if (overLimit) return overLimit;
  // 2025-11-25 task augmentation: dropped for an upstream without tasks, -32601 for a tool that takes none (nothing sent).
  let taskSent: TaskParam | undefined;
  if (task !== undefined) {
    try {
      taskSent = await forwardedTask(d, tool, task);
    } catch (error) {
      decided('error', 'refused', 'task_not_supported');
      throw error;
    }
  }
  const limited = await spendToolBudgets(d, tool);
  if (limited) {
    decided('rate_limited', 'rate_limited', 'rate_limited', limited.budget);
    return limited.result;
  }
  let result: CallToolResult;
  try {
    const upstream = d.caller.upstream(tool.upstream).client;
    const raw = await forward(
      d,
      upstream,
      'tools/call',
      { name: tool.upstreamName, arguments: args ?? {}, ...(taskSent ? { task: taskSent } : {}) },
      tool.definition,
    );
    const created = createdTask(raw, taskSent !== undefined);
    if (created) {
      // A task, not a result yet: the output check runs on its result (tasks/result, tasks/get).
      decided('ok', 'task', 'task_created', undefined, true);
      return (await relayCreatedTask(d, tool, raw, created)) as unknown as ToolCallAnswer;
    }
    if (isInputRequired(raw)) {
      decided('input_required', 'input_required', undefined, undefined, true);
      return raw as InputRequiredResult;
    }
    result = relayedErrorResult(raw as CallToolResult, { own: tool.upstreamName, exposed: tool.name });
  } catch (error) {
    const failure = failureOf(error, tool.upstream);
    if (failure.kind === 'upstream_rejected') {
      const relayed = forwardFailure(d, 'tools/call', error, tool.upstream, { own: tool.upstreamName, exposed: tool.name });
      if ('result' in relayed) {
        decided('input_required', 'input_required', undefined, undefined, true);
        return relayed.result as unknown as InputRequiredResult;
      }
      const invalid = failure.code === ERROR_CODE.invalidParams;
      decided(invalid ? 'invalid_arguments' : 'error', invalid ? 'invalid_arguments' : 'is_error', `upstream_rejected ${failure.code}`, undefined, true);
      throw relayed.error;
    }
    // A write whose request reached the upstream and got no answer may have run: saying it did not would invite a second run.
    const unknown = !tool.readOnly && outcomeUnknown(failure);
    decided('error', 'is_error', unknown ? `${failure.kind} outcome_unknown` : failure.kind, undefined, true);
    if (failure.kind === 'cancelled')
      d.log.info({ tool: tool.name, upstream: tool.upstream, reason: failure.message, outcomeUnknown: unknown }, 'tools/call cancelled');
    // Once per failure in the runtime's interval (an upstream down made one line per call: 1,000 for 1,000
    // calls, observability try-out); each call keeps its audit line and its count in mcp_tool_calls_total.
    else
      d.runtime.repeatedWarnings(`tools/call\n${tool.upstream}\n${failure.kind}\n${failure.message}`, (notLogged) =>
        d.log.warn(
          {
            tool: tool.name,
            upstream: tool.upstream,
            kind: failure.kind,
            reason: failure.message,
            outcomeUnknown: unknown,
            ...(notLogged ? { notLogged } : {}),
          },
          'tools/call failed upstream; answering isError',
        ),
      );
    // It ran, and answered more than the gateway passes on: what the caller can change is how much it asks for.
    if (!unknown && failure.resultBytes !== undefined)
      return toolErrorResult(
        failure.kind,
        `Tool "${tool.name}" answered more than ${failure.resultBytes} bytes, more than this gateway passes on (limits.resultBytes): ask it for less (a narrower range, a smaller limit or page, fewer items).`,
      );
    // Cancelled once sent: it may have started (a read's effect is nothing to check; a write's outcome is unknown, below), so
    // not "could not be executed" (client try-out); one cancelled before it was sent could not be, and says so.
    if (!unknown && failure.kind === 'cancelled' && failure.delivery !== 'not_sent')
      return toolErrorResult(failure.kind, `Tool "${tool.name}" did not answer: ${failure.message}.`);
    if (!unknown) return toolErrorResult(failure.kind, `Tool "${tool.name}" could not be executed: ${failure.message}.`);
    const answer = toolErrorResult(
      failure.kind,
      `Tool "${tool.name}" may have run: the call was sent to upstream ${tool.upstream}, then ${howUnanswered(failure)}, so its outcome is unknown. ` +
        `Check its effect before calling it again, or it may be done twice.`,
    );
    return { ...answer, _meta: { ...answer._meta, [OUTCOME_META_KEY]: 'unknown' } };
  }
  const check = d.runtime.outputs.check(tool, result);
  if (!check.ok) {
    d.log.warn({ tool: tool.name, upstream: tool.upstream, paths: check.paths }, 'upstream result broke its outputSchema; answering isError');
    const reason = tool.readOnly ? 'output_schema_violation' : 'output_schema_violation outcome_unknown';
    decided('output_schema_violation', 'output_schema_violation', reason, undefined, true);
    return outputViolationResult(tool, check);
  }
  if (result.isError) {
    // The metric says what the audit line says (SRE try-out: invalid arguments audited so, counted is_error).
    const outcome = await directFailureOutcome(d, tool, args, via);
    // A hidden tool's refusal stays is_error under its name, as before: `refused` is counted as tool="unknown" (docs/operations.md).
    decided(outcome, outcome === 'invalid_arguments' ? 'invalid_arguments' : 'is_error', 'is_error', undefined, true);
  } else decided('ok', 'ok', undefined, undefined, true);
  return d.project(result, tool.definition.outputSchema as Record<string, unknown> | undefined);
}

/**
 * The isError answer to arguments over an input limit (`limits.jsonDepth`/`stringLength`/`arrayLength`/
 * `objectMembers`, counted from the arguments object), recorded as an `invalid_arguments` decision, or
 * undefined when they are within every limit. Checked before anything else reads them (call_tool's and
 * run_code's schema check included: one schema error per unknown member made 120,000 members cost
 * hundreds of ms); nothing is sent and no budget spent, and the model can correct them.
 */
export function argumentsOverLimit(
  d: DispatchContext,
  tool: CatalogTool,
  args: Record<string, unknown> | undefined,
  via: CallVia,
  started: number,
): CallToolResult | undefined {
  // A script's call names the script's own path (`/symbols/0`): call_tool's envelope is no part of what it wrote.
  const base = via === 'direct' ? DIRECT_ARGUMENTS : via === 'call_tool' ? DISPATCHED_ARGUMENTS : SCRIPT_ARGUMENTS;
  const breach = args ? findLimitBreach(args, d.runtime.config.limits, base) : undefined;
  if (!breach) return undefined;
  recordDecision(d, {
    via,
    name: tool.name,
    tool,
    outcome: 'invalid_arguments',
    reason: `limits.${breach.limit}`,
    arguments: args ?? {},
    started,
    counted: { tool: tool.name, outcome: 'invalid_arguments' },
  });
  const result = toolErrorResult('invalid_arguments', `Invalid arguments for ${tool.name}: ${describeBreach(breach)}.`);
  // Listed as the schema checks list theirs: a JSON Pointer into the arguments.
  const errors = [{ path: jsonPointer(breach.path.slice(base.length)), message: breachProblem(breach) }];
  return { ...result, _meta: { ...result._meta, ...argumentErrorsMeta(errors) } };
}

/** Where a call's arguments sit in its request: `params.arguments`, or call_tool's `params.arguments.arguments`. */
const DIRECT_ARGUMENTS: readonly string[] = ['arguments'];
const DISPATCHED_ARGUMENTS: readonly string[] = ['arguments', 'arguments'];
/** A run_code script's `tools.<name>(args)`: the path within `args`. */
const SCRIPT_ARGUMENTS: readonly string[] = [];

/**
 * Whether a failed call may have run upstream: its request had been written to the upstream (or, where
 * that is not known, it timed out, which happens only once it was sent) and no answer says what became
 * of it: a lost connection, a timeout, a 5xx, an answer that is no MCP response. A JSON-RPC error, a 4xx
 * or a 401 is the upstream's answer; a request never sent (refused at connect, queued, the upstream
 * known down) did not run.
 */
function outcomeUnknown(failure: UpstreamFailure): boolean {
  if (failure.delivery === 'not_sent') return false;
  switch (failure.kind) {
    case 'upstream_timeout':
      return true;
    // Given up by the caller (or the gateway's shutdown) once under way: the upstream may have run it. Only the
    // HTTP hop knows whether it was sent; elsewhere (stdio, the SDK client) it may have been (review).
    case 'cancelled':
      return true;
    case 'upstream_unavailable':
      return failure.delivery === 'sent';
    case 'upstream_error':
      return failure.status === undefined || failure.status >= 500;
    default:
      return false;
  }
}

/** How a call that reached its upstream went unanswered, for the caller (the failure's own message in brackets). */
function howUnanswered(failure: UpstreamFailure): string {
  if (failure.kind === 'upstream_timeout')
    return `it did not answer in time${failure.timeoutMs === undefined ? '' : ` (its timeoutMs, ${failure.timeoutMs} ms)`}`;
  if (failure.kind === 'upstream_unavailable') return `the connection closed before the answer (${failure.message})`;
  if (failure.kind === 'cancelled') return `it was given up before its answer (${failure.message})`;
  return `its answer said nothing of the outcome (${failure.message})`;
}

/** Most names an unknown-tool answer suggests (direct calls and call_tool alike). */
export const NEAREST_LIMIT = 5;
/** Characters of an unknown tool name echoed in the refusal (twice the 128 MCP 2025-11-25 recommends). */
const MAX_ECHOED_NAME = 256;

/**
 * The direct tools/call path of a surface: the tool must be in the caller's merged catalogue under its
 * exposed name and, under `policy.hiddenToolCalls: refuse` (the default), visible to the caller
 * (policy/tool-resolution.ts `directCallAllowed`); anything else is -32602 "Unknown tool", the same answer for a tool that does
 * not exist and one the caller may not see, with the nearest names the caller may see
 * ({@link nearestVisibleNames}), before any upstream is contacted. The caller's access was resolved at
 * the edge: no scope lookup here. A visible tool of an upstream that is down answers isError. Arguments
 * are checked (by the upstream) only once the tool is allowed, so no validation message can describe a
 * hidden tool. `forward` sends hidden tools on anyway, for an upstream that checks every call itself.
 * A tool on hold (its definition changed since approved: catalog/pin-guard.ts) that the caller may call
 * is refused with `tool_held` (-32000) naming the change and how to approve it, never forwarded.
 */
export async function callToolDirect(d: DispatchContext, name: string, args: Record<string, unknown> | undefined, task?: TaskParam): Promise<ToolCallAnswer> {
  const started = performance.now();
  // The edge's admission resolved this call's name already (mcp/admission.ts): the caller's catalogue is read only without it.
  const admitted = d.target?.via === 'direct' && d.target.name === name ? d.target : undefined;
  // A catalogue that cannot be read is this call's decision too: recorded there (the name is no catalogue's: label `unknown`).
  const visible = admitted ? undefined : await visibleForCall(d, { via: 'direct', name, arguments: args ?? {}, started, label: 'unknown' });
  const target = admitted
    ? admitted.resolution
    : resolveTool(visible!.catalog, visible!.access, name, d.surface.name, d.runtime.config.compact.codeMode.enabled);
  if (!directCallAllowed(target, d.caller.hiddenToolCalls)) {
    // A hidden tool refused looks unknown to the caller, not to the operator.
    recordDecision(d, {
      via: 'direct',
      name,
      tool: target.tool,
      outcome: target.tool ? 'refused_scope' : 'unknown_tool',
      reason: 'unknown_tool',
      arguments: args ?? {},
      started,
      counted: { tool: 'unknown', outcome: 'refused' },
    });
    const nearest = await nearestVisibleNames(d, visible ?? (await d.caller.visible()), name);
    const hint = nearest.length ? `. Nearest names: ${nearestNamesText(nearest)}` : '';
    const names = nearest.map((n) => n.name);
    const held = nearest.filter((n) => n.held).map((n) => n.name);
    // The name echoed bounded, as call_tool's schema bounds its own (a direct call's name is any string).
    throw new GatewayError(
      'unknown_tool',
      `Unknown tool: ${clip(name, MAX_ECHOED_NAME)}${hint}`,
      nearest.length ? { nearest: names, ...(held.length ? { held } : {}) } : {},
    );
  }
  if (target.pinned.held) {
    refuseHeld(d, name, target.pinned, 'direct', args, started);
    throw new GatewayError('tool_held', heldToolMessage(name, target.pinned, d.runtime.config.console.adminToken !== undefined), heldToolData(target.pinned));
  }
  return callCatalogTool(d, target.tool, args, 'direct', task);
}

/**
 * Counts and records the refusal of a call of a held tool (catalog/pin-guard.ts): `held` in
 * `mcp_tool_calls_total`, `refused_held` in the audit trail. Nothing is sent upstream.
 */
export function refuseHeld(d: DispatchContext, name: string, held: HeldTool, via: CallVia, args: unknown, started: number): void {
  d.log.info({ tool: held.tool.name, upstream: held.tool.upstream, reason: held.reason }, 'call of a held tool refused without contacting the upstream');
  recordDecision(d, {
    via,
    name,
    tool: held.tool,
    outcome: 'refused_held',
    reason: `held_${held.reason}`,
    arguments: args ?? {},
    started,
    counted: { tool: held.tool.name, outcome: 'held' },
  });
}

/**
 * What the caller of a held tool reads: that the gateway did not run it and why (the change, in the words
 * of catalog/pinning.ts describeChanges), and how an operator approves it. Only a caller who may see the
 * tool gets here, and its definitions are what the upstream lists publicly: nothing is revealed. `consoleOn`:
 * whether the console (`console.adminToken`) is mounted, which both ways of approving go through.
 */
export function heldToolMessage(name: string, held: HeldTool, consoleOn: boolean): string {
  // The commands name the tool as upstream/name: a bare name (an alias, a single upstream's) may name several (pinning try-out).
  const tool = `${held.tool.upstream}/${held.tool.upstreamName}`;
  const approve =
    held.reason === 'unverified'
      ? ''
      : consoleOn
        ? ` An operator reviews the change and approves it: \`pins diff ${tool}\`, then \`pins approve ${tool} --digest <the digest it shows>\` (gateway/main.ts), or Approve on the console's Definition changes page.`
        : // Both ways go through the console: without it, naming the commands sent the operator to an error (try-out).
          ` An operator reviews the change and approves it on the gateway's console, which this gateway does not serve yet: set console.adminToken (a reload applies it), then the console's Definition changes page, or \`pins diff ${tool}\` and \`pins approve ${tool} --digest <the digest it shows>\`.`;
  return `Tool "${name}" is on hold: ${heldReason(held)}. The gateway did not run it; nothing was sent to the upstream.${approve}`;
}

/**
 * Why a tool is on hold, in the words its refusal uses ({@link heldToolMessage}): the change since it was
 * approved (catalog/pinning.ts describeChanges), or the lint findings, that wait for an operator's approval.
 */
export function heldReason(held: HeldTool): string {
  const changes = held.changes.length ? ` (${held.changes.join('; ')})` : '';
  return held.reason === 'changed'
    ? `upstream ${held.tool.upstream} changed its definition since it was approved${changes}`
    : held.reason === 'new'
      ? `upstream ${held.tool.upstream} listed it after its tools were approved, and new tools wait for approval (pinning.newTools: hold)`
      : held.reason === 'lint'
        ? `its definition has description lint findings that wait for approval${changes}`
        : 'the gateway cannot read its pinned definition now (pin store unavailable); try again later';
}

/** The JSON-RPC error's `data` for a held tool: what changed, in a form a client can read. */
export function heldToolData(held: HeldTool): Record<string, unknown> {
  return { upstream: held.tool.upstream, reason: held.reason, changes: held.changes };
}

/** One name an unknown tool's refusal suggests, with the hold it is under (its calls are refused then). */
export interface NearestName {
  readonly name: string;
  readonly held?: HeldTool;
}

/**
 * The catalogue names nearest to `name` (search/index.ts `nearestNames`) among the tools the caller's
 * model may find (policy/tool-resolution.ts `findableByModel`), for an unknown tool's refusal (a direct
 * call, call_tool, a script's tools.* call): a suggestion never names a hidden tool, an MCP Apps
 * app-only one or a withheld one (search_tools never returns one either). Asked of an index of those
 * tools alone, or of their names alone from 1,000 findable tools (catalog/search-index-cache.ts
 * `nearestFindableNames`), so the answer is a function of what the
 * caller may find and `name` only: a hidden tool's name gets the suggestions a name that exists nowhere
 * would. A tool on hold (served with its pinned definition) comes after the callable ones, with its hold,
 * as search_tools ranks it ({@link nearestNamesText} says so). A failure to suggest suggests nothing.
 */
export async function nearestVisibleNames(d: DispatchContext, visible: VisibleCatalog, name: string): Promise<NearestName[]> {
  try {
    const resolve = (tool: string) => resolveTool(visible.catalog, visible.access, tool, d.surface.name, d.runtime.config.compact.codeMode.enabled);
    const findable = visible.tools.filter((t) => findableByModel(resolve(t.name)));
    const names = await inSpan('search', { 'ai.cpz.gateway.search.kind': 'nearest_names' }, () =>
      d.runtime.searchIndexes.nearestFindableNames(visible.catalog, findable, name, NEAREST_LIMIT),
    );
    return callableFirst(
      names.map((nearest) => {
        const pinned = resolve(nearest).pinned;
        return pinned.held ? { name: nearest, held: pinned } : { name: nearest };
      }),
    );
  } catch (error) {
    d.log.warn({ err: (error as Error).message }, 'no nearest names for an unknown tool');
    return [];
  }
}

/**
 * `items` in their order, those on hold (`held` set) moved after the others: a hold's calls are refused
 * until an operator approves the change, so a model that takes the first suggestion or match should get
 * one it can call. Stable.
 */
export function callableFirst<T extends { readonly held?: unknown }>(items: readonly T[]): T[] {
  return [...items.filter((item) => !item.held), ...items.filter((item) => item.held)];
}

/** `a, b, c (on hold: <why>; its calls are refused until an operator approves it)`: the suggestions as a refusal's text reads them. */
export function nearestNamesText(nearest: readonly NearestName[]): string {
  return nearest
    .map(({ name, held }) => (held ? `${name} (on hold: ${heldReason(held)}; its calls are refused until an operator approves it)` : name))
    .join(', ');
}

/**
 * The audit outcome of an isError answer. A direct call is forwarded unchecked, so the upstream's
 * refusal is named by what the gateway knows: arguments breaking the tool's inputSchema are the
 * caller's invalid arguments (as call_tool would have said), a tool outside the caller's access
 * (resolved at the edge) was refused for scope; anything else is an error. The arguments are checked for
 * the metric too, audit or not (only isError answers pay for it); the scope, for the audit line only.
 */
async function directFailureOutcome(d: DispatchContext, tool: CatalogTool, args: Record<string, unknown> | undefined, via: CallVia): Promise<AuditOutcome> {
  if (via !== 'direct') return 'error';
  if (!d.runtime.inputs.check(tool.name, tool.definition.inputSchema, args ?? {}).ok) return 'invalid_arguments';
  // refused_scope is the audit line's alone (the metric counts it is_error): no visibility read without an audit.
  if (!d.runtime.audit.enabled) return 'error';
  const visible = await d.caller.visible().catch(() => undefined);
  return visible && !resolveTool(visible.catalog, visible.access, tool.name, d.surface.name, d.runtime.config.compact.codeMode.enabled).visible
    ? 'refused_scope'
    : 'error';
}
