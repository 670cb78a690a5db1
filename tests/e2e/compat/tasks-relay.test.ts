/**
 * The tasks relay (issue 18; surfaces/tasks.ts), end to end through the gateway over real HTTP:
 * - 2025-11-25 (basic/utilities/tasks): a v1 SDK client (its experimental tasks API) in front, a v1 SDK
 *   upstream with its tasks runtime behind; task-augmented tools/call, tasks/get, tasks/result,
 *   tasks/list, tasks/cancel;
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): no SDK client has a tasks
 *   runtime yet, so raw HTTP in front of the fake upstream serving the extension (`tasks: true`,
 *   fixtures/fake-tools.ts taskTools), which records every request; tools/call
 *   answered with a task, tasks/get, tasks/update, tasks/cancel, the -32021 gate.
 * Both upstreams keep ONE task store for everyone, so what keeps one credential's tasks from another
 * is the gateway: its task ids are bound to the credential digest, and a call or task of a tool the
 * credential may not call is answered exactly as an unknown tool or task, without contacting the upstream.
 */
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { connectV1 } from '../../helpers/clients.ts';
import { ACCEPT_BOTH, MODERN, messagesOf, post, type JsonRpcMessage } from '../../helpers/raw-mcp.ts';
import { startLegacyTasksUpstream } from '../../fixtures/legacy-tasks-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { taskTools } from '../../fixtures/fake-tools.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { startGatewayOver } from '../../helpers/stack.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
/** Same scopes, three credentials: the reader creates tasks, the twin may call the same tools, the outsider may not. */
const READER = { authorization: 'Bearer tasks-reader-token' };
const TWIN = { authorization: 'Bearer tasks-twin-token' };
const OUTSIDER = { authorization: 'Bearer tasks-outsider-token' };

/** The conformance gateway (one upstream, any credential forwarded) with config API keys and a scope on the task tools. */
function gatewayOver(upstreamUrl: string, scopeRules: Record<string, string[]>, audit?: LogCapture): Promise<RunningGateway> {
  return startGatewayOver(
    upstreamUrl,
    { scopeRules },
    {
      ...(audit ? { auditDestination: audit } : {}),
      env: { READER: 'tasks-reader-token', TWIN: 'tasks-twin-token', OUTSIDER: 'tasks-outsider-token' },
      overrides: {
        credentials: {
          apiKeys: [
            { name: 'reader', token: '${READER}', scopes: ['jobs:run'] },
            { name: 'twin', token: '${TWIN}', scopes: ['jobs:run'] },
            { name: 'outsider', token: '${OUTSIDER}', scopes: [] },
          ],
        },
      },
    },
  );
}

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: { code?: unknown }) => error.code,
  );

describe('2025-11-25 tasks: v1 client, v1 upstream', () => {
  let upstream: Awaited<ReturnType<typeof startLegacyTasksUpstream>>;
  let gateway: RunningGateway;
  const mcp = () => `${gateway.url}/mcp`;
  const tasksSent = () => upstream.received.filter((r) => r.method.startsWith('tasks/')).length;
  beforeAll(async () => {
    upstream = await startLegacyTasksUpstream();
    gateway = await gatewayOver(upstream.url, { slow_compute: ['jobs:run'], plain_echo: [] });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('advertises the tasks capability and relays the tools execution.taskSupport', async () => {
    const client = await connectV1(mcp(), READER);
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'slow_compute')?.execution).toEqual({ taskSupport: 'optional' });
    } finally {
      await client.close();
    }
  });

  it('creates a task, polls it, gets its result and lists it, under an id of its own', async () => {
    const client = await connectV1(mcp(), READER);
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.3 }, task: { ttl: 30_000 } } },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      expect(id).toMatch(/^gwt1\./);
      expect(created.task.status).toBe('working');
      // The upstream was asked with the task param and issued an id of its own, which the caller never sees.
      const call = upstream.received.findLast((r) => r.method === 'tools/call');
      expect(call?.params).toMatchObject({ name: 'slow_compute', task: { ttl: 30_000 } });
      const done = await until(
        () => client.experimental.tasks.getTask(id),
        (t) => t.status === 'completed',
      );
      expect(done.taskId).toBe(id);
      const statuses: { taskId: string; status: string }[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.push({ taskId: n.params.taskId, status: n.params.status }));
      const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'computed in 0.3 s' }]);
      expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: id });
      // The upstream's status notification on the tasks/result stream, under the caller's id.
      expect(statuses).toEqual([{ taskId: id, status: 'completed' }]);
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).toContain(id);
      expect(listed.tasks.find((t) => t.taskId === id)?.status).toBe('completed');
      const upstreamGets = upstream.received.filter((r) => r.method === 'tasks/get').map((r) => r.params.taskId);
      expect(upstreamGets.length).toBeGreaterThan(0);
      expect(upstreamGets).not.toContain(id);
    } finally {
      await client.close();
    }
  });

  it('cancels a running task', async () => {
    const client = await connectV1(mcp(), READER);
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: {} } },
        CreateTaskResultSchema,
      );
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: 'cancelled' });
      expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
      // The upstream's refusal of its result names the task as the caller knows it, never by the upstream's own id (protocol try-out).
      const noResult = await client.request({ method: 'tasks/result', params: { taskId: created.task.taskId } }, CallToolResultSchema).then(
        () => undefined,
        (error: Error) => error.message,
      );
      const upstreamId = upstream.received.find((r) => r.method === 'tasks/cancel')?.params?.taskId as string;
      expect(upstreamId).toEqual(expect.any(String));
      expect(noResult).toContain(created.task.taskId);
      expect(noResult).not.toContain(upstreamId);
    } finally {
      await client.close();
    }
  });

  it("refuses another credential's task as unknown, lists none of it, and asks the upstream nothing", async () => {
    const reader = await connectV1(mcp(), READER);
    const twin = await connectV1(mcp(), TWIN);
    const outsider = await connectV1(mcp(), OUTSIDER);
    try {
      const created = await reader.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: {} } },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      const before = tasksSent();
      for (const other of [twin, outsider]) {
        expect(await codeOf(other.experimental.tasks.getTask(id))).toBe(-32602);
        expect(await codeOf(other.experimental.tasks.getTaskResult(id, CallToolResultSchema))).toBe(-32602);
        expect(await codeOf(other.experimental.tasks.cancelTask(id))).toBe(-32602);
        expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
      }
      // An id altered by one character is nobody's.
      expect(await codeOf(reader.experimental.tasks.getTask(`${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`))).toBe(-32602);
      expect(tasksSent()).toBe(before);
      // The reader's task is untouched.
      expect((await reader.experimental.tasks.getTask(id)).status).toBe('working');
      await reader.experimental.tasks.cancelTask(id);
    } finally {
      await Promise.all([reader.close(), twin.close(), outsider.close()]);
    }
  });

  it('authorises a task-augmented call as a plain one, and refuses one of a tool without task support', async () => {
    const outsider = await connectV1(mcp(), OUTSIDER);
    const reader = await connectV1(mcp(), READER);
    try {
      const calls = () => upstream.received.filter((r) => r.method === 'tools/call').length;
      const before = calls();
      const hidden = await codeOf(
        outsider.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: {} } }, CreateTaskResultSchema),
      );
      const plain = await codeOf(outsider.callTool({ name: 'slow_compute', arguments: { seconds: 0 } }));
      expect([hidden, plain]).toEqual([-32602, -32602]);
      const unsupported = await codeOf(
        reader.request({ method: 'tools/call', params: { name: 'plain_echo', arguments: { text: 'x' }, task: {} } }, CreateTaskResultSchema),
      );
      expect(unsupported).toBe(-32601);
      expect(calls()).toBe(before);
    } finally {
      await Promise.all([outsider.close(), reader.close()]);
    }
  });

  it("refuses a task-augmented call of the compact surface's own tools -32601, as it declares tasks", async () => {
    const client = await connectV1(`${gateway.url}/mcp/compact`, READER);
    try {
      expect(client.getServerCapabilities()?.tasks).toBeDefined();
      for (const name of ['search_tools', 'call_tool']) {
        const code = await codeOf(
          client.request({ method: 'tools/call', params: { name, arguments: { query: 'x', name: 'plain_echo' }, task: {} } }, CreateTaskResultSchema),
        );
        expect(code).toBe(-32601);
      }
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28 tasks extension: raw HTTP, a recording upstream', () => {
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  let nextId = 1;
  const audit = new LogCapture();
  /** One 2026-07-28 request (envelope, Mcp-Method/Mcp-Name), declaring the tasks extension unless `declare` is false. */
  const send = async (
    credential: Record<string, string>,
    method: string,
    params: Record<string, unknown>,
    declare = true,
    capabilities: Record<string, unknown> = { elicitation: { form: {} } },
  ): Promise<JsonRpcMessage> => {
    const name = params.name ?? params.taskId;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: ACCEPT_BOTH,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...credential,
    };
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': declare ? { ...capabilities, extensions: { [TASKS]: {} } } : capabilities,
    };
    const messages = await messagesOf(await post(`${gateway.url}/mcp`, { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta } }, headers));
    return messages.findLast((m) => 'result' in m || 'error' in m)!;
  };
  const poll = (credential: Record<string, string>, taskId: string, done: (status: string) => boolean) =>
    until(
      () => send(credential, 'tasks/get', { taskId }),
      (m) => done(String(m.result?.status)),
    );
  beforeAll(async () => {
    upstream = await startFakeUpstream({ tools: taskTools(), tasks: true });
    gateway = await gatewayOver(
      upstream.url,
      { slow_compute: ['jobs:run'], confirm_job: ['jobs:run'], failing_job: ['jobs:run'], drifting_job: ['jobs:run'], malformed_job: ['jobs:run'] },
      audit,
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('advertises the extension to 2026-07-28 callers, and no 2025 tasks capability to 2025-era ones', async () => {
    const discover = await send(READER, 'server/discover', {});
    expect((discover.result?.capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS]).toEqual({});
    const legacy = await connectV1(`${gateway.url}/mcp`, READER);
    try {
      expect(legacy.getServerCapabilities()?.tasks).toBeUndefined();
    } finally {
      await legacy.close();
    }
  });

  it('relays a task created by tools/call, its polling and its inlined result, under an id of its own', async () => {
    const created = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.3 } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60_000, pollIntervalMs: 100 });
    const id = created.result!.taskId as string;
    expect(id).toMatch(/^gwt1\./);
    expect(created.result).not.toHaveProperty('content');
    const done = await poll(READER, id, (s) => s === 'completed');
    expect(done.result).toMatchObject({ resultType: 'complete', taskId: id, result: { content: [{ type: 'text', text: 'computed in 0.3 s' }] } });
    // SEP-2663 routing header toward the upstream: Mcp-Name is the upstream's own task id.
    const get = upstream.received.findLast((r) => r.method === 'tasks/get')!;
    expect(get.headers['mcp-name']).toBe(get.params.taskId);
    expect(get.params.taskId).not.toBe(id);
    // A tool error completes the task with an isError result (SEP-2663), relayed as such.
    const failing = await send(READER, 'tools/call', { name: 'failing_job', arguments: {} });
    const failed = await poll(READER, failing.result!.taskId as string, (s) => s === 'completed');
    expect(failed.result?.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the job failed' }] });
  });

  it("withholds a completed task's result that breaks the tool's outputSchema, with an audit line of its own", async () => {
    const created = await send(READER, 'tools/call', { name: 'drifting_job', arguments: {} });
    const id = created.result!.taskId as string;
    const done = await poll(READER, id, (s) => s === 'completed');
    // No readOnlyHint: a write, so "may have run", as a direct call's violation is answered.
    expect(done.result?.result).toMatchObject({ isError: true, _meta: { 'ai.cpz.gateway/outcome': 'unknown' } });
    expect(JSON.stringify(done.result?.result)).toContain('may have run');
    expect(JSON.stringify(done.result?.result)).not.toContain('many');
    // Polled again, it is answered alike and recorded once: one outcome event per task.
    expect((await send(READER, 'tasks/get', { taskId: id })).result?.result).toMatchObject({ isError: true });
    const lines = audit.records().filter((r) => r.tool === 'drifting_job');
    expect(lines.map((r) => [r.outcome, r.reason])).toEqual([
      ['ok', 'task_created'],
      ['output_schema_violation', 'output_schema_violation outcome_unknown task_result'],
    ]);
  });

  it('relays input_required and the tasks/update that answers it', async () => {
    const created = await send(READER, 'tools/call', { name: 'confirm_job', arguments: {} });
    const id = created.result!.taskId as string;
    const waiting = await poll(READER, id, (s) => s === 'input_required');
    expect(waiting.result?.inputRequests).toMatchObject({ confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Run the job?' } } });
    const ack = await send(READER, 'tasks/update', { taskId: id, inputResponses: { confirm: { action: 'accept', content: { ok: true } } } });
    expect(ack.result).toMatchObject({ resultType: 'complete' });
    expect(upstream.received.findLast((r) => r.method === 'tasks/update')?.params).toMatchObject({
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
    });
    const done = await poll(READER, id, (s) => s === 'completed');
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'confirmed: true' }] });
  });

  it("refuses a task's input request the caller's capabilities do not cover, as a call's (review: tasks/get was a way around it)", async () => {
    const created = await send(READER, 'tools/call', { name: 'confirm_job', arguments: {} }, true, {});
    const id = created.result!.taskId as string;
    const refused = await until(
      () => send(READER, 'tasks/get', { taskId: id }, true, {}),
      (m) => m.error !== undefined || String(m.result?.status) !== 'working',
    );
    expect(refused.result?.inputRequests).toBeUndefined();
    expect(refused.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { form: {} } } } });
  });

  it("answers a completed task's result that is no CallToolResult as an upstream error, without the upstream's gateway _meta keys", async () => {
    const created = await send(READER, 'tools/call', { name: 'malformed_job', arguments: {} });
    const done = await poll(READER, created.result!.taskId as string, (s) => s === 'completed');
    expect(done.result?.result).toMatchObject({ isError: true });
    expect(JSON.stringify(done.result?.result)).toContain('/content is not an array');
    expect(JSON.stringify(done.result?.result)).not.toContain('ai.cpz.gateway/outcome');
  });

  it('relays tasks/cancel as an empty ack, the task then cancelled', async () => {
    const created = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    const id = created.result!.taskId as string;
    const ack = await send(READER, 'tasks/cancel', { taskId: id });
    expect(Object.keys(ack.result ?? {}).filter((k) => k !== '_meta')).toEqual(['resultType']);
    expect((await send(READER, 'tasks/get', { taskId: id })).result?.status).toBe('cancelled');
  });

  it('answers tools/call at once to a caller that does not declare the extension, and its task methods -32021', async () => {
    const plain = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, false);
    expect(plain.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'computed in 0 s' }] });
    // A 2025-style `task` param on a 2026-07-28 call is tolerated and decides nothing (SEP-2663: the server does).
    const hinted = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 1000 } }, false);
    expect(hinted.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'computed in 0 s' }] });
    const created = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    const gated = await send(READER, 'tasks/get', { taskId: created.result!.taskId }, false);
    expect(gated.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    await send(READER, 'tasks/cancel', { taskId: created.result!.taskId });
  });

  it("refuses another credential's task as unknown without asking the upstream", async () => {
    const created = await send(READER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    const id = created.result!.taskId as string;
    const before = upstream.received.filter((r) => r.method.startsWith('tasks/')).length;
    for (const other of [TWIN, OUTSIDER]) {
      for (const [method, params] of [
        ['tasks/get', { taskId: id }],
        ['tasks/update', { taskId: id, inputResponses: {} }],
        ['tasks/cancel', { taskId: id }],
      ] as const) {
        expect((await send(other, method, params)).error?.code, `${method}`).toBe(-32602);
      }
    }
    expect(upstream.received.filter((r) => r.method.startsWith('tasks/')).length).toBe(before);
    // The outsider cannot create one either: the tool is hidden from it, as for a plain call.
    expect((await send(OUTSIDER, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).error?.code).toBe(-32602);
    await send(READER, 'tasks/cancel', { taskId: id });
  });
});
