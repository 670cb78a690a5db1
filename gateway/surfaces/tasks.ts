import { RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import type { CatalogTool } from '../catalog/catalog.ts';
import { GatewayError, toolErrorResult } from '../errors.ts';
import { callToolResultProblems } from '../wire/client-codec.ts';
import type { DispatchContext } from '../ports.ts';
import { mintTaskId, openTaskId, type TaskRef } from '../policy/task-ids.ts';
import { directCallAllowed, resolveTool } from '../policy/tool-resolution.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { TaskMethod } from '../upstream/types.ts';
import { outputViolationResult, recordDecision } from './tool-decision.ts';
import { callerCapabilities, callerDeclaresTasks, forward, forwardError, refuseUndeclaredInput, relayedResult } from '../upstream/forwarding.ts';

/**
 * The tasks relay (issue 18): MCP tasks created upstream by a tools/call through the gateway, in both
 * forms, each relayed to callers of its own era:
 * - 2025-11-25 basic/utilities/tasks (2025-era callers, 2025-era upstreams declaring
 *   `capabilities.tasks.requests.tools.call`): tools/call with a `task` param answers a CreateTaskResult
 *   (`{ task }`), then tasks/get, tasks/result (blocks until the task is terminal), tasks/list,
 *   tasks/cancel; `notifications/tasks/status` arriving on a relayed request's stream is relayed;
 * - the `io.modelcontextprotocol/tasks` extension (SEP-2663; 2026-07-28 callers declaring it per
 *   request, 2026-07-28 upstreams declaring it): the upstream may answer any tools/call with a flat
 *   CreateTaskResult (`resultType: "task"`), then tasks/get (the result or error inlined), tasks/update
 *   (`inputResponses`), tasks/cancel (an empty ack).
 * The gateway holds no task state: the id a caller sees is the upstream's, namespaced by upstream and
 * tool and bound to the caller's credential digest (policy/task-ids.ts), so a task is reachable by the
 * credential that created it only, and only while that credential may still call the tool (the one
 * access rule, policy/visibility.ts, as for a direct call): anything else is answered exactly as an
 * unknown task (-32602), before any upstream is contacted. tasks/list is the gateway's own (the
 * credential's tasks, store/task-index.ts), each task's state asked of its upstream.
 */

/** 2025-11-25 `task` param of a task-augmented request (`ttl` in ms, optional). */
export type TaskParam = Record<string, unknown>;

/** Tasks whose state one tasks/list asks the upstreams for, at most (newest first). */
const LIST_LIMIT = 100;

/**
 * The upstream task a tools/call created: a SEP-2663 CreateTaskResult (`resultType: "task"`, flat), or
 * for a task-augmented 2025-era call (`augmented`) a 2025-11-25 one (`{ task }`); else undefined.
 */
export function createdTask(result: Record<string, unknown>, augmented: boolean): { upstreamTaskId: string; ttlMs: number | null | undefined } | undefined {
  if (result.resultType === 'task')
    return typeof result.taskId === 'string' ? { upstreamTaskId: result.taskId, ttlMs: result.ttlMs as number | null | undefined } : undefined;
  const task = result.task as Record<string, unknown> | undefined;
  if (augmented && task !== null && typeof task === 'object' && typeof task.taskId === 'string')
    return { upstreamTaskId: task.taskId, ttlMs: task.ttl as number | null | undefined };
  return undefined;
}

/**
 * The `task` a 2025-era caller's task-augmented call of `tool` is forwarded with (2025-11-25
 * basic/utilities/tasks):
 * - its upstream does not declare the tasks capability: none, and the call is processed normally
 *   (§Behavior Requirements, Task Support and Handling 1: a receiver that does not declare it "MUST
 *   process requests of that type normally, ignoring any task-augmentation metadata");
 * - it does, and the tool says `execution.taskSupport` "optional" or "required": the caller's `task`;
 * - it does, and the tool says "forbidden" or nothing: -32601, as §Tool-Level Negotiation says a server
 *   SHOULD answer, nothing sent.
 * @throws GatewayError method_not_found
 */
export async function forwardedTask(d: DispatchContext, tool: CatalogTool, task: TaskParam): Promise<TaskParam | undefined> {
  if (d.caller.era !== 'legacy') return undefined;
  const info = await d.caller
    .upstream(tool.upstream)
    .client.describe(d.caller.onBehalfOf)
    .catch(() => undefined);
  if (!info?.tasks?.legacy) return undefined;
  const support = (tool.definition as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  if (support === 'optional' || support === 'required') return task;
  throw new GatewayError('method_not_found', `Method not found: ${tool.name} does not support task-augmented calls`);
}

/**
 * Whether the gateway declares the 2025-11-25 `tasks` capability to this caller (mcp/server.ts
 * capabilitiesFor): a 2025-era caller, and some upstream serves that form. Its own tools (search_tools,
 * call_tool) take no task, so a task-augmented call of one is -32601 where it declares the capability
 * and is processed normally where it does not (2025-11-25 §Tool-Level Negotiation, §Task Support and Handling).
 */
export async function declaresTasks(d: DispatchContext): Promise<boolean> {
  if (d.caller.era !== 'legacy') return false;
  const infos = await Promise.all(
    d.runtime.config.upstreams.map((u) =>
      d.caller
        .upstream(u.name)
        .client.describe(d.caller.onBehalfOf)
        .catch(() => undefined),
    ),
  );
  return infos.some((info) => info?.tasks?.legacy !== undefined);
}

/**
 * The CreateTaskResult the caller receives for one an upstream answered: the caller's own task id in
 * place of the upstream's (recorded for tasks/list), everything else as the upstream sent it.
 */
export async function relayCreatedTask(
  d: DispatchContext,
  tool: CatalogTool,
  result: Record<string, unknown>,
  created: { upstreamTaskId: string; ttlMs: number | null | undefined },
): Promise<Record<string, unknown>> {
  const id = mintTaskId({ upstream: tool.upstream, upstreamTaskId: created.upstreamTaskId, tool: tool.name }, owner(d), d.runtime.digestKey);
  const relayed = relayedResult(result, d.caller.era);
  if (relayed.resultType === 'task') return { ...relayed, taskId: id };
  await d.runtime.taskIndex.add(owner(d), id, created.ttlMs);
  return { ...relayed, task: { ...(relayed.task as Record<string, unknown>), taskId: id } };
}

/** tasks/get: the task's state, the caller's id in it; a SEP-2663 completed task's inlined result checked as a call's. */
export async function getTask(d: DispatchContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const task = await resolve(d, params.taskId);
  const answer = await relay(d, task, 'tasks/get', { taskId: task.ref.upstreamTaskId });
  try {
    return taskState(d, task, answer);
  } catch (error) {
    throw forwardError(error, task.client.name, { d, method: 'tasks/get' });
  }
}

/**
 * tasks/result (2025-11-25): what the tools/call would have returned, once the task is terminal (the
 * upstream blocks until then), with its output checked and projected as a direct call's, and the
 * related-task `_meta` naming the caller's id.
 */
export async function taskResult(d: DispatchContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const task = await resolve(d, params.taskId);
  const result = await relay(d, task, 'tasks/result', { taskId: task.ref.upstreamTaskId });
  const meta = result._meta as Record<string, unknown> | undefined;
  const related = meta?.[RELATED_TASK_META_KEY] !== undefined ? { _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: task.id } } } : {};
  return checkedToolResult(d, task, { ...result, ...related });
}

/** tasks/cancel: the upstream's answer (2025-11-25: the cancelled Task; SEP-2663: an empty ack), the caller's id in it. */
export async function cancelTask(d: DispatchContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const task = await resolve(d, params.taskId);
  const answer = await relay(d, task, 'tasks/cancel', { taskId: task.ref.upstreamTaskId });
  return typeof answer.taskId === 'string' ? { ...answer, taskId: task.id } : answer;
}

/** tasks/update (SEP-2663): the caller's `inputResponses` for the task's outstanding input requests; an empty ack. */
export async function updateTask(d: DispatchContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const task = await resolve(d, params.taskId);
  // The SDK lifts a request's inputResponses out of its params (the MRTR fields); forward() puts them back for tasks/update.
  return relay(d, task, 'tasks/update', {
    taskId: task.ref.upstreamTaskId,
    ...(params.inputResponses !== undefined ? { inputResponses: params.inputResponses } : {}),
  });
}

/**
 * tasks/list (2025-11-25): the caller's own tasks created through the gateway (newest first, at most
 * {@link LIST_LIMIT}, one page: the gateway issues no cursors), each one's state from its upstream; a
 * task its upstream no longer knows (-32602) is dropped from the index, one it cannot reach right now
 * is left out of this answer.
 */
export async function listTasks(d: DispatchContext, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  if (params?.cursor !== undefined)
    throw new GatewayError('invalid_arguments', 'Invalid cursor: this server lists every task in one page and issues no cursors');
  const previous = previousOwner(d);
  const ids = [...(await d.runtime.taskIndex.list(owner(d))), ...(previous ? await d.runtime.taskIndex.list(previous) : [])].slice(0, LIST_LIMIT);
  const gone: string[] = [];
  const states = await Promise.all(
    ids.map(async (id) => {
      try {
        const task = await resolve(d, id);
        return taskState(d, task, await relay(d, task, 'tasks/get', { taskId: task.ref.upstreamTaskId }));
      } catch (error) {
        if ((error as { code?: unknown }).code === -32602) gone.push(id);
        return undefined;
      }
    }),
  );
  await d.runtime.taskIndex.remove(owner(d), gone);
  if (previous) await d.runtime.taskIndex.remove(previous, gone);
  return { tasks: states.filter((s): s is Record<string, unknown> => s !== undefined) };
}

/**
 * Answers a SEP-2663 task method of a 2026-07-28 caller that did not declare the extension on this
 * request: -32021 naming it (SEP-2663 §Capability Negotiation; SEP-2575 Missing Required Capabilities).
 * @throws GatewayError missing_client_capability
 */
export function requireTasksDeclared(d: DispatchContext): void {
  if (d.caller.era !== 'modern' || callerDeclaresTasks(d.request)) return;
  throw new GatewayError('missing_client_capability', 'Missing required client capability: io.modelcontextprotocol/tasks', {
    requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  });
}

interface ResolvedTask {
  /** The caller's id. */
  id: string;
  ref: TaskRef;
  tool: CatalogTool;
  client: UpstreamClient;
}

/**
 * The task a caller's id stands for, when it was minted for this credential and the caller may still
 * call its tool (the direct-call rule: callToolDirect); anything else is an unknown task, answered
 * before any upstream is contacted.
 * @throws GatewayError invalid_arguments (-32602 "Task not found", 2025-11-25 §Error Handling)
 */
async function resolve(d: DispatchContext, id: unknown): Promise<ResolvedTask> {
  const previous = previousOwner(d);
  // During a cache.key rotation, an id minted under the previous key (for the previous digest) still opens.
  const ref = openTaskId(id, owner(d), d.runtime.digestKey) ?? (previous ? openTaskId(id, previous, d.runtime.previousDigestKey!) : undefined);
  if (!ref) throw unknownTask();
  const visible = await d.caller.visible();
  const target = resolveTool(visible.catalog, visible.access, ref.tool, d.surface.name, d.runtime.config.compact.codeMode.enabled);
  if (!directCallAllowed(target, d.caller.hiddenToolCalls) || target.tool.upstream !== ref.upstream) throw unknownTask();
  return { id: id as string, ref, tool: target.tool, client: d.caller.upstream(ref.upstream).client };
}

/** One task method at the task's upstream, its status notifications relayed under the caller's id; its failure as the caller's error. */
async function relay(d: DispatchContext, task: ResolvedTask, method: TaskMethod, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const ontaskstatus = (status: Record<string, unknown>) => {
    if (status.taskId !== task.ref.upstreamTaskId || d.caller.era !== 'legacy') return;
    const notification = { method: 'notifications/tasks/status', params: { ...status, taskId: task.id } };
    void d.request.notify(notification as Parameters<typeof d.request.notify>[0]).catch(() => {});
  };
  try {
    return relayedResult(await forward(d, task.client, method, params, undefined, { ontaskstatus }), d.caller.era);
  } catch (error) {
    // The upstream's error names its own task id ("Task 3e58... has no result stored"): the caller knows the task by its own (protocol try-out).
    // Only an id that cannot be an ordinary word of the message ("error 1 of 1" with a task id "1": review).
    const id = task.ref.upstreamTaskId;
    throw forwardError(error, task.client.name, { d, method, ...(id.length >= 8 ? { name: { own: id, exposed: task.id } } : {}) });
  }
}

/**
 * A task's state as the caller sees it: its id; (SEP-2663) a completed task's inlined result relayed and checked
 * as a call's; an `input_required` task's input requests held to the caller's capabilities as a call's are
 * (forwarding.ts refuseUndeclaredInput: review, tasks/get was a way around it).
 * @throws SdkError INVALID_RESULT for input the caller did not declare.
 */
function taskState(d: DispatchContext, task: ResolvedTask, state: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...state, taskId: task.id };
  if (state.status === 'completed' && state.result !== null && typeof state.result === 'object')
    out.result = checkedToolResult(d, task, relayedResult(state.result as Record<string, unknown>, d.caller.era));
  if (state.status === 'input_required' && state.inputRequests !== undefined)
    refuseUndeclaredInput(state, d.caller.era === 'modern' ? callerCapabilities(d.request) : undefined);
  return out;
}

/**
 * A task's tool result held to the tool's outputSchema and projected for the caller's era, as a direct
 * call's is (tool-call.ts callCatalogTool): a violation answers the same isError result.
 */
function checkedToolResult(d: DispatchContext, task: ResolvedTask, result: Record<string, unknown>): Record<string, unknown> {
  const { tool } = task;
  // No CallToolResult at all: as a direct call's is answered (upstream/client.ts), before any schema is read.
  const problems = callToolResultProblems(result);
  if (problems.length)
    return toolErrorResult(
      'upstream_error',
      `Tool "${tool.name}" could not be executed: upstream ${tool.upstream} answered Invalid result: ${problems.join('; ')}.`,
    );
  const check = d.runtime.outputs.check(tool, result as CallToolResult);
  if (!check.ok) {
    // The call's outcome, decided now (its tools/call was recorded as `task_created`): audited and counted as a
    // direct call's violation is, once per task however often a client polls it (review).
    // The caller's own task id: sealed for its credential, so no upstream's reuse of its ids collides (second review).
    const key = task.id;
    if (!violationsRecorded.has(key)) {
      violationsRecorded.set(key, true);
      recordDecision(d, {
        via: 'direct',
        name: tool.name,
        tool,
        outcome: 'output_schema_violation',
        reason: tool.readOnly ? 'output_schema_violation task_result' : 'output_schema_violation outcome_unknown task_result',
        arguments: undefined,
        started: performance.now(),
        counted: { tool: tool.name, outcome: 'output_schema_violation' },
      });
    }
    d.log.warn({ tool: tool.name, upstream: tool.upstream, paths: check.paths }, 'task result broke its outputSchema; answering isError');
    const failed = outputViolationResult(tool, check);
    return { ...failed, _meta: { ...(result._meta as object), ...failed._meta } };
  }
  return d.project(result as CallToolResult, tool.definition.outputSchema as Record<string, unknown> | undefined) as Record<string, unknown>;
}

/** The tasks (the caller's task ids) whose result's violation has been recorded, bounded: one outcome event per task. */
const violationsRecorded = new LRUCache<string, true>({ max: 10_000 });

function owner(d: DispatchContext): string {
  return d.caller.credential.digest;
}

/** The caller's owner digest under the previous `cache.key`, during a rotation. */
function previousOwner(d: DispatchContext): string | undefined {
  return d.runtime.previousDigestKey ? d.caller.credential.previousDigest : undefined;
}

function unknownTask(): GatewayError {
  return new GatewayError('invalid_arguments', 'Failed to retrieve task: Task not found');
}
