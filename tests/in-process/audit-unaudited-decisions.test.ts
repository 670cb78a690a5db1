/**
 * Three tools/call paths that decided a call and left no audit line (a review found them; the rule: one
 * `tool_decision` line per decision, obs/audit.ts):
 * - the only upstream down since the start, so the caller's catalogue cannot be read: the call is answered
 *   -32603 `upstream_unavailable`, both eras, on /mcp and /mcp/compact (a catalogue tool's name, and the
 *   compact surface's own search_tools, call_tool and run_code); the line is an `error` with the failure's
 *   kind as reason and the name as asked, bounded as every caller string in a line is;
 * - a run_code script's `tools.<name>(x)` whose argument is not one object: an `invalid_arguments` line of
 *   `via: run_code` under the run's id, beside the run's own line that counts the call;
 * - a 2025-era task-augmented call of the compact surface's own tools where the gateway declares tasks
 *   (-32601): an `error` line with reason `task_not_supported`, as the same refusal of a catalogue tool
 *   (that upstream, a v1 SDK server with the tasks runtime, on loopback HTTP: no in-memory fake declares 2025 tasks).
 * Each request leaves exactly that one line per decision (none twice).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc, type JsonRpcMessage } from '../helpers/raw-mcp.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { startLegacyTasksUpstream } from '../fixtures/legacy-tasks-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const TOOLS = [
  {
    definition: { name: 'get_profile', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } as Tool,
    call: () => ({ content: [{ type: 'text' as const, text: '{"name":"ada"}' }] }),
  },
];
const DIGEST_KEY = 'unaudited-decisions-key-0123456789';

let sent = 0;
/** One tools/call with its own X-Request-Id: the answer's single message, and the audit lines of that request (after a pause, so a second line would be there too). */
async function call(gateway: InProcessGateway, audit: LogCapture, era: 'modern' | 'legacy', path: string, params: Record<string, unknown>) {
  const requestId = `unaudited-${++sent}`;
  const { headers, body } = rpc(era, 1, 'tools/call', params);
  const [message] = await messagesOf(await post(`${gateway.gatewayUrl}${path}`, body, { ...headers, 'x-request-id': requestId }));
  const lines = () => audit.records().filter((line) => line.requestId === requestId);
  await waitFor(`an audit line of ${requestId}`, () => lines().length > 0, { timeoutMs: 2000 }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { message: message as JsonRpcMessage, lines: lines() };
}

/** An anonymous gateway with code mode in front of the fake upstream's TOOLS, its audit lines captured in `audit`. */
const auditedGateway = (audit: LogCapture): InProcessGateway =>
  inProcessGateway({ anonymous: true, audit: { digestKey: DIGEST_KEY }, compact: { codeMode: { enabled: true } } }, { fake: { tools: TOOLS }, audit });

describe('a tools/call while the only upstream has been down since the start', () => {
  const audit = new LogCapture();
  let gateway: InProcessGateway;
  beforeAll(() => {
    gateway = auditedGateway(audit);
    gateway.fake!.failWith(503);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const cases = [
    ['/mcp', 'full', 'get_profile', {}],
    ['/mcp/compact', 'compact', 'get_profile', {}],
    ['/mcp/compact', 'compact', 'search_tools', { query: 'profile' }],
    ['/mcp/compact', 'compact', 'call_tool', { name: 'get_profile', arguments: {} }],
    ['/mcp/compact', 'compact', 'run_code', { code: 'return await tools.get_profile({});' }],
  ] as const;
  for (const era of ['modern', 'legacy'] as const)
    it.each(cases)(`${era}: %s (%s) %s is answered upstream_unavailable and audited once as an error`, async (path, surface, name, args) => {
      const { message, lines } = await call(gateway, audit, era, path, { name, arguments: args });
      expect(message.error).toMatchObject({ code: -32603, data: { kind: 'upstream_unavailable' } });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ event: 'tool_decision', surface, via: 'direct', tool: name, outcome: 'error', reason: 'upstream_unavailable' });
    });

  it('names a tool asked for by a 1,000-character name bounded, as every caller string in a line is', async () => {
    const name = `t${'x'.repeat(999)}`;
    const { message, lines } = await call(gateway, audit, 'legacy', '/mcp', { name, arguments: {} });
    expect(message.error).toMatchObject({ data: { kind: 'upstream_unavailable' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ outcome: 'error', reason: 'upstream_unavailable', tool: `${name.slice(0, 256)}…` });
  });
});

describe("a run_code script's tools.<name>(x) call whose argument is not one object", () => {
  const audit = new LogCapture();
  let gateway: InProcessGateway;
  beforeAll(() => {
    gateway = auditedGateway(audit);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it.each(['modern', 'legacy'] as const)('%s: is audited as an invalid_arguments inner call of the run, once, and nothing is sent', async (era) => {
    const code = 'try { await tools.get_profile(5); } catch (e) { return String(e.message); }';
    const calls = () => gateway.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = calls();
    const { message, lines } = await call(gateway, audit, era, '/mcp/compact', { name: 'run_code', arguments: { code } });
    const result = message.result as { structuredContent?: { result: string; calls: number }; content: { text: string }[] };
    expect(JSON.stringify(result.content)).toContain('tools.get_profile: arguments must be one object (got 5)');
    expect(calls()).toBe(before);
    const run = lines.filter((line) => line.via === 'direct');
    const inner = lines.filter((line) => line.via === 'run_code');
    expect(run).toHaveLength(1);
    expect(run[0]).toMatchObject({ tool: 'run_code', outcome: 'ok', calls: 1 });
    expect(inner).toHaveLength(1);
    expect(inner[0]).toMatchObject({
      event: 'tool_decision',
      surface: 'compact',
      via: 'run_code',
      runId: run[0]!.runId,
      upstream: 'fake',
      tool: 'get_profile',
      readOnly: true,
      outcome: 'invalid_arguments',
      reason: 'invalid_arguments',
    });
  });
});

describe("a 2025-era task-augmented call of the compact surface's own tools where the gateway declares tasks", () => {
  const audit = new LogCapture();
  let upstream: Awaited<ReturnType<typeof startLegacyTasksUpstream>>;
  let gateway: InProcessGateway;
  beforeAll(async () => {
    upstream = await startLegacyTasksUpstream();
    gateway = inProcessGateway(
      {
        anonymous: true,
        audit: { digestKey: DIGEST_KEY },
        compact: { codeMode: { enabled: true } },
        upstreams: [{ name: 'tasks', url: upstream.url, forwardCredentials: false }],
      },
      { audit },
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it.each([
    ['search_tools', { query: 'compute' }],
    ['call_tool', { name: 'slow_compute', arguments: { seconds: 0 } }],
    ['run_code', { code: 'return 1;' }],
    // The catalogue tool's refusal, audited before: the line the surface's own tools now match.
    ['plain_echo', { text: 'hi' }],
  ] as const)('%s is refused -32601 and audited once as task_not_supported', async (name, args) => {
    const { message, lines } = await call(gateway, audit, 'legacy', '/mcp/compact', { name, arguments: args, task: { ttl: 60_000 } });
    expect(message.error).toMatchObject({ code: -32601 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'tool_decision', surface: 'compact', via: 'direct', tool: name, outcome: 'error', reason: 'task_not_supported' });
  });
});
