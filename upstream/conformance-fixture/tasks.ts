import { randomUUID } from 'node:crypto';
import type { CallToolResult, JSONRPCRequest, McpServer, Result, ServerContext } from '@modelcontextprotocol/server';
import { acceptedContent, CLIENT_CAPABILITIES_META_KEY, inputRequired, ProtocolError } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/** SEP-2663's extension id. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

interface FixtureTask {
  taskId: string;
  status: Status;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  statusMessage?: string;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
  /** Outstanding input requests by key (SEP-2322 shape); answered keys leave. */
  inputRequests?: Record<string, unknown>;
  /** Called with each tasks/update's responses to the outstanding keys. */
  onInput?: (responses: Record<string, unknown>) => void;
  timer?: NodeJS.Timeout;
}

const TERMINAL: ReadonlySet<Status> = new Set(['completed', 'failed', 'cancelled']);
/** One store for every request: the fixture builds a server per request (createMcpHandler), tasks outlive them. */
const tasks = new Map<string, FixtureTask>();
const TTL_MS = 60_000;

const now = () => new Date().toISOString();
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

function create(): FixtureTask {
  const task: FixtureTask = { taskId: randomUUID(), status: 'working', createdAt: now(), lastUpdatedAt: now(), ttlMs: TTL_MS, pollIntervalMs: 100 };
  tasks.set(task.taskId, task);
  setTimeout(() => tasks.delete(task.taskId), TTL_MS).unref();
  return task;
}

function settle(task: FixtureTask, change: Partial<FixtureTask>): void {
  if (TERMINAL.has(task.status)) return;
  Object.assign(task, change, { lastUpdatedAt: now() });
  if (TERMINAL.has(task.status)) {
    clearTimeout(task.timer);
    task.inputRequests = undefined;
    task.onInput = undefined;
  }
}

/** The task as SEP-2663 puts it on the wire: a CreateTaskResult (`resultType: "task"`) or a DetailedTask. */
function wire(task: FixtureTask, created: boolean): Result {
  const { onInput: _input, timer: _timer, inputRequests, result, error, ...base } = task;
  if (created) return { resultType: 'task', ...base } as Result;
  return {
    ...base,
    ...(task.status === 'input_required' && inputRequests ? { inputRequests } : {}),
    ...(task.status === 'completed' && result ? { result } : {}),
    ...(task.status === 'failed' && error ? { error } : {}),
  } as Result;
}

function declared(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function missingExtension(): ProtocolError {
  return new ProtocolError(-32021, `Missing required client capability: ${TASKS_EXTENSION}`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

function known(taskId: string): FixtureTask {
  const task = tasks.get(taskId);
  if (!task) throw new ProtocolError(-32602, `Task not found: ${taskId}`);
  return task;
}

const elicit = (message: string) =>
  inputRequired.elicit({ message, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } });

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** Tools with task support `required`: without the extension, -32021 before the tool runs (SEP-2663). */
const REQUIRED: ReadonlySet<string> = new Set(['failing_job', 'protocol_error_job', 'confirm_delete', 'multi_input', 'test_tool_with_task']);

/**
 * The SDK (2.4) has no tasks runtime: its tools/call wrapper gives a CreateTaskResult an empty `content`,
 * and McpServer answers what a tool throws as an isError result. So, around the tools/call handler the
 * fixture's McpServer installed (call this after every registration): a task-only tool
 * ({@link REQUIRED}) called without the extension gets -32021 before it runs, and a CreateTaskResult
 * leaves without the `content` it was given.
 */
export function passTaskResults(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const call = handlers.get('tools/call');
  if (!call) throw new Error('passTaskResults: no tools/call handler yet');
  handlers.set('tools/call', async (request, ctx) => {
    if (REQUIRED.has(String((request.params as { name?: unknown } | undefined)?.name)) && !declared(ctx)) throw missingExtension();
    const result = await call(request, ctx);
    if (result.resultType !== 'task') return result;
    const { content: _added, ...task } = result as Result & { content?: unknown };
    return task as Result;
  });
}

/**
 * The tasks extension (SEP-2663) on the conformance fixture, for the suite's `tasks-*` scenarios
 * (0.2.0-alpha.12): server-directed tasks for a request that declares the extension in its
 * clientCapabilities, and at once otherwise; tasks/get (DetailedTask: result or error inlined,
 * outstanding inputRequests), tasks/update (inputResponses, partial fulfilment), tasks/cancel (an
 * idempotent empty ack); tasks/* without the declaration -32021 ({@link passTaskResults} completes it).
 * Tools, named by the scenarios:
 * - `greet {name}`: sync "Hello, {name}!";
 * - `slow_compute {seconds, label?}`: a task completing after `seconds` ("computed <label> in <s> s"),
 *   cancelled when cancelled while running; without the extension, the same result after the wait;
 * - `failing_job`: completes with isError (this and the tools below: task support required, so
 *   without the extension -32021 before the tool runs);
 * - `protocol_error_job`: a task that fails with a JSON-RPC error inlined;
 * - `confirm_delete`: parks on one form elicitation (`confirm`), completes with the answer;
 * - `multi_input`: parks on two elicitations at once, completes once both are answered;
 * - `test_tool_with_task`: one in-band (MRTR) round asking `user_name`, then a task whose result names it.
 */
export function registerTaskTools(server: McpServer): void {
  server.registerTool('greet', { description: 'Greets by name, at once (no task)', inputSchema: z.object({ name: z.string() }) }, async ({ name }) =>
    text(`Hello, ${name}!`),
  );

  server.registerTool(
    'slow_compute',
    {
      description: 'Computes for `seconds`, as a task when the client declares the tasks extension',
      inputSchema: z.object({ seconds: z.number().min(0).max(120), label: z.string().optional() }),
    },
    async ({ seconds, label }, ctx) => {
      const answer = text(`computed${label ? ` ${label}` : ''} in ${seconds} s`);
      if (!declared(ctx)) {
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        return answer;
      }
      const task = create();
      task.timer = setTimeout(() => settle(task, { status: 'completed', result: answer }), seconds * 1000);
      return wire(task, true) as CallToolResult;
    },
  );

  server.registerTool('failing_job', { description: 'A task (required) whose tool run fails', inputSchema: z.object({}) }, async () => {
    const task = create();
    task.timer = setTimeout(() => settle(task, { status: 'completed', result: { ...text('the job failed'), isError: true } }), 1000);
    return wire(task, true) as CallToolResult;
  });

  server.registerTool('protocol_error_job', { description: 'A task that fails with a protocol error', inputSchema: z.object({}) }, async () => {
    const task = create();
    task.timer = setTimeout(
      () => settle(task, { status: 'failed', statusMessage: 'internal failure', error: { code: -32603, message: 'Internal error: the job crashed' } }),
      500,
    );
    return wire(task, true) as CallToolResult;
  });

  const parked = (keys: string[]) => async (): Promise<CallToolResult> => {
    const task = create();
    const pending: Record<string, unknown> = Object.fromEntries(keys.map((key) => [key, elicit(`Confirm ${key}?`)]));
    const answers: Record<string, unknown> = {};
    settle(task, {
      status: 'input_required',
      inputRequests: pending,
      onInput: (responses) => {
        for (const key of Object.keys(responses)) {
          if (!(key in pending)) continue;
          answers[key] = responses[key];
          delete pending[key];
        }
        if (Object.keys(pending).length > 0) return settle(task, { inputRequests: { ...pending } });
        const summary = keys.map((key) => `${key}=${(answers[key] as { action?: string } | undefined)?.action ?? 'none'}`).join(', ');
        settle(task, { status: 'completed', result: text(`answered: ${summary}`) });
      },
    });
    return wire(task, true) as CallToolResult;
  };
  server.registerTool('confirm_delete', { description: 'A task parked on one elicitation', inputSchema: z.object({}).passthrough() }, parked(['confirm']));
  server.registerTool('multi_input', { description: 'A task parked on two elicitations at once', inputSchema: z.object({}) }, parked(['first', 'second']));

  server.registerTool(
    'test_tool_with_task',
    { description: 'Asks user_name in band (MRTR), then continues as a task', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const name = acceptedContent<{ name?: string; user_name?: string }>(ctx.mcpReq.inputResponses, 'user_name');
      if (name === undefined)
        return inputRequired({
          inputRequests: {
            user_name: inputRequired.elicit({
              message: 'What is your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            }),
          },
        });
      const task = create();
      const who = name.name ?? name.user_name ?? 'unknown';
      task.timer = setTimeout(() => settle(task, { status: 'completed', result: text(`Hello, ${who}! (gathered before the task)`) }), 200);
      return wire(task, true) as CallToolResult;
    },
  );

  const params = z.looseObject({ taskId: z.string() });
  const gated =
    <T>(answer: (p: z.infer<typeof params>, ctx: ServerContext) => T) =>
    async (p: z.infer<typeof params>, ctx: ServerContext) => {
      if (!declared(ctx)) throw missingExtension();
      return answer(p, ctx);
    };
  server.server.setRequestHandler(
    'tasks/get',
    { params },
    gated((p) => wire(known(p.taskId), false)),
  );
  server.server.setRequestHandler(
    'tasks/update',
    { params },
    gated((p, ctx) => {
      // The SDK lifts inputResponses (the MRTR field) out of params onto the request context.
      const responses = (p.inputResponses ?? ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
      known(p.taskId).onInput?.(responses);
      return {};
    }),
  );
  server.server.setRequestHandler(
    'tasks/cancel',
    { params },
    gated((p) => {
      settle(known(p.taskId), { status: 'cancelled', statusMessage: 'cancelled by request' });
      return {};
    }),
  );
}
