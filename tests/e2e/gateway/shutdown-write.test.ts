/**
 * A write still waiting for its upstream when the gateway's shutdown ends its grace (`shutdown.graceMs`) is
 * answered "may have run" (outcome unknown) before its connection closes, and audited `cancelled outcome_unknown`, as README Operations says: the shutdown gave up on it, whichever
 * closed first, the caller's connection or the upstream's. Before, the upstream's connection closed by the
 * shutdown was seen first and the write was audited `upstream_unavailable outcome_unknown` (try-out).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { fakeUpstream, startInterceptedUpstream, type InterceptedUpstream } from '../../fixtures/fake-upstream.ts';
import { loadConfig } from '../../../config/load.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { rpc } from '../../helpers/raw-mcp.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { waitFor } from '../../helpers/wait.ts';

const CONFORMANCE_CONFIG = new URL('../../../config/conformance.yaml', import.meta.url).pathname;
const schema = { type: 'object', properties: {} } as Tool['inputSchema'];
const tools = [
  {
    definition: { name: 'place', inputSchema: schema, annotations: { readOnlyHint: false } } as Tool,
    call: () => ({ content: [{ type: 'text' as const, text: 'placed' }] }),
  },
];

let upstream: InterceptedUpstream;
let stall = false;
/** Pings, handshakes and calls unanswered from here on: a process stopped (`kill -STOP`), as the probe sees it. */
let stallAll = false;
let reached = 0;
beforeAll(async () => {
  upstream = await startInterceptedUpstream(fakeUpstream({ era: 'modern', tools }), (body) => {
    // tools/list still answered: each call lists the tools again under this configuration's cache.
    if (stallAll && !body.includes('"tools/list"')) {
      if (body.includes('"tools/call"')) reached++;
      return true;
    }
    if (!stall || !body.includes('"tools/call"')) return false;
    reached++;
    return true; // never answered
  });
});
afterAll(async () => {
  await upstream?.close();
});

it('audits a write cut by the shutdown as cancelled outcome_unknown', async () => {
  const audit = new LogCapture();
  const config = loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ url: upstream.url, timeoutMs: 30_000 }],
      shutdown: { graceMs: 100 },
      log: { level: 'silent' },
    },
  });
  const gateway = await startGateway(config, { auditDestination: audit });
  const send = (id: number) => {
    const { headers, body } = rpc('modern', id, 'tools/call', { name: 'place', arguments: {} });
    return fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { ...headers, 'x-request-id': `shutdown-${id}` }, body: JSON.stringify(body) });
  };
  await (await send(1)).text();
  stall = true;
  const cut = send(2).then(
    (answer) => answer.text(),
    () => 'no answer',
  );
  await waitFor('the write to reach the upstream', () => reached === 1);
  await gateway.close({ reason: 'SIGTERM' });
  // Answered before its connection closed (an empty reply left the caller free to retry elsewhere: try-out).
  const answer = JSON.parse(await cut) as { result: { isError: boolean; content: { text: string }[]; _meta: Record<string, unknown> } };
  expect(answer.result).toMatchObject({ isError: true, _meta: { 'ai.cpz.gateway/outcome': 'unknown' } });
  expect(answer.result.content[0]!.text).toMatch(/may have run/);
  const line = await waitFor('the audit line of the cut write', () => audit.records().find((r) => r.requestId === 'shutdown-2'));
  expect(line).toMatchObject({ event: 'tool_decision', outcome: 'error', reason: 'cancelled outcome_unknown' });
});

it('answers a write "may have run" at the end of the grace when the health probe marked its stopped upstream down meanwhile (SRE try-out)', async () => {
  // The probe's reconnect attempt, hung on the stopped upstream, held the upstream's close (and so the call's
  // answer) past the shutdown's last second: the caller got an empty reply, and might retry the write elsewhere.
  stall = false;
  reached = 0;
  const config = loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ url: upstream.url, timeoutMs: 30_000, health: { intervalMs: 100, timeoutMs: 100 } }],
      shutdown: { graceMs: 1500 },
      log: { level: 'warn' },
    },
  });
  const logs = new LogCapture();
  const gateway = await startGateway(config, { auditDestination: new LogCapture(), logDestination: logs });
  const { headers, body } = rpc('modern', 3, 'tools/call', { name: 'place', arguments: {} });
  const call = () => fetch(`${gateway.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  await (await call()).text();
  stallAll = true;
  try {
    const cut = call().then(
      (answer) => answer.text(),
      () => 'no answer',
    );
    await waitFor('the write to reach the upstream', () => reached === 1);
    await waitFor('the probe to mark the upstream down', () => logs.records().some((r) => /upstream connection lost/.test(String(r.msg))));
    const closing = performance.now();
    await gateway.close({ reason: 'SIGTERM' });
    // Nor does the hung reconnect hold the exit for its 10 s handshake bound (review): the grace, the last second
    // for answers, a second for the attempt, and slack for a loaded machine.
    expect(performance.now() - closing).toBeLessThan(8000);
    const answer = JSON.parse(await cut) as { result: { isError: boolean; content: { text: string }[]; _meta: Record<string, unknown> } };
    expect(answer.result).toMatchObject({ isError: true, _meta: { 'ai.cpz.gateway/outcome': 'unknown' } });
    expect(answer.result.content[0]!.text).toMatch(/may have run/);
  } finally {
    stallAll = false;
  }
});
