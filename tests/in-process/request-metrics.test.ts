/**
 * `mcp_requests_total` counts every MCP message the gateway handles, once, read back from GET /metrics:
 * the lifecycle methods the SDK answers (initialize, ping, server/discover), notifications, unknown
 * methods (under the bounded label `unknown`), messages refused before dispatch (the SDK's -32022, the
 * edge's batch refusal) and the gateway's own methods, per endpoint and era.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc } from '../helpers/raw-mcp.ts';
import { inProcessStack, routedFetch, type InProcessGateway as Stack } from '../helpers/in-process.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await inProcessStack({ upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] } });
});
afterAll(async () => {
  await stack?.close();
});

type Labels = { endpoint: 'full' | 'compact'; era: 'modern' | 'legacy'; method: string; outcome: 'ok' | 'error' };

async function scrape(): Promise<string> {
  return (await routedFetch(`${stack.gatewayUrl}/metrics`)).text();
}

function valueOf(text: string, l: Labels): number {
  const line = `mcp_requests_total{endpoint="${l.endpoint}",era="${l.era}",method="${l.method}",outcome="${l.outcome}"} `;
  const found = text.split('\n').find((row) => row.startsWith(line));
  return found ? Number(found.slice(line.length)) : 0;
}

/** Sends one message and returns the HTTP status (the body is drained). */
async function send(
  path: string,
  era: 'modern' | 'legacy',
  id: number | undefined,
  method: string,
  params: Record<string, unknown> = {},
  tweak?: (h: Record<string, string>, b: Record<string, unknown>) => void,
): Promise<number> {
  const { headers, body } = rpc(era, id, method, params);
  tweak?.(headers, body as unknown as Record<string, unknown>);
  const response = await routedFetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  await response.text();
  return response.status;
}

/** Asserts `act` added exactly 1 to the series `l` and nothing to any other mcp_requests_total series. */
async function expectCounted(l: Labels, act: () => Promise<unknown>): Promise<void> {
  const before = await scrape();
  await act();
  const after = await scrape();
  expect(valueOf(after, l) - valueOf(before, l)).toBe(1);
  const total = (text: string) =>
    text
      .split('\n')
      .filter((row) => row.startsWith('mcp_requests_total{'))
      .reduce((sum, row) => sum + Number(row.split(' ').pop()), 0);
  expect(total(after) - total(before)).toBe(1);
}

const INITIALIZE = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'metrics-test', version: '1.0.0' } };

describe.each([
  ['/mcp', 'full'],
  ['/mcp/compact', 'compact'],
] as const)('mcp_requests_total on %s', (path, endpoint) => {
  it('counts initialize, ping, notifications/initialized and tools/list of a 2025-era caller', async () => {
    await expectCounted({ endpoint, era: 'legacy', method: 'initialize', outcome: 'ok' }, () => send(path, 'legacy', 1, 'initialize', INITIALIZE));
    await expectCounted({ endpoint, era: 'legacy', method: 'ping', outcome: 'ok' }, () => send(path, 'legacy', 2, 'ping'));
    await expectCounted({ endpoint, era: 'legacy', method: 'notifications/initialized', outcome: 'ok' }, () =>
      send(path, 'legacy', undefined, 'notifications/initialized'),
    );
    await expectCounted({ endpoint, era: 'legacy', method: 'tools/list', outcome: 'ok' }, () => send(path, 'legacy', 3, 'tools/list'));
  });

  it('counts server/discover, tools/list and a notification of a 2026-07-28 caller', async () => {
    await expectCounted({ endpoint, era: 'modern', method: 'server/discover', outcome: 'ok' }, () => send(path, 'modern', 1, 'server/discover'));
    await expectCounted({ endpoint, era: 'modern', method: 'tools/list', outcome: 'ok' }, () => send(path, 'modern', 2, 'tools/list'));
    await expectCounted({ endpoint, era: 'modern', method: 'notifications/cancelled', outcome: 'ok' }, async () =>
      expect(await send(path, 'modern', undefined, 'notifications/cancelled', { requestId: 42 })).toBe(202),
    );
  });

  it('counts an unknown method as method="unknown" outcome="error", never under its own name', async () => {
    const odd = `odd/${'x'.repeat(40)}`;
    await expectCounted({ endpoint, era: 'legacy', method: 'unknown', outcome: 'error' }, () => send(path, 'legacy', 4, odd));
    // SEP-2575: a 2026-07-28 method nobody serves is HTTP 404 with -32601, not an in-band 200.
    await expectCounted({ endpoint, era: 'modern', method: 'unknown', outcome: 'error' }, async () => expect(await send(path, 'modern', 5, odd)).toBe(404));
    // A tasks-extension method not served (no upstream here serves tasks) is one as well, counted once, with its Mcp-Name or without.
    await expectCounted({ endpoint, era: 'modern', method: 'tasks/get', outcome: 'error' }, async () =>
      expect(await send(path, 'modern', 5, 'tasks/get', { taskId: 't-1' }, (headers) => (headers['mcp-name'] = 't-1'))).toBe(404),
    );
    await expectCounted({ endpoint, era: 'modern', method: 'tasks/cancel', outcome: 'error' }, async () =>
      expect(await send(path, 'modern', 5, 'tasks/cancel', { taskId: 't-1' })).toBe(404),
    );
    // ping is gone from 2026-07-28: the SDK answers -32601, counted as a ping that failed.
    await expectCounted({ endpoint, era: 'modern', method: 'ping', outcome: 'error' }, () => send(path, 'modern', 6, 'ping'));
    expect(await scrape()).not.toContain(odd);
  });

  it('counts messages refused before dispatch: an unsupported revision (-32022) and a batch under 2025-11-25', async () => {
    await expectCounted({ endpoint, era: 'modern', method: 'tools/list', outcome: 'error' }, async () => {
      const status = await send(path, 'modern', 7, 'tools/list', {}, (headers, body) => {
        headers['mcp-protocol-version'] = '2099-01-01';
        ((body.params as Record<string, unknown>)._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
      });
      expect(status).toBe(400);
    });
    const before = await scrape();
    const { headers, body } = rpc('legacy', 8, 'tools/list');
    const response = await routedFetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify([body, { ...body, id: 9 }]) });
    expect(response.status).toBe(400);
    const after = await scrape();
    expect(
      valueOf(after, { endpoint, era: 'legacy', method: 'tools/list', outcome: 'error' }) -
        valueOf(before, { endpoint, era: 'legacy', method: 'tools/list', outcome: 'error' }),
    ).toBe(2);
  });

  it('counts no message of a batch refused whole for its length (past 100 messages, past limits.arrayLength)', async () => {
    const { headers } = rpc('legacy', 1, 'tools/list');
    // No MCP-Protocol-Version: a 2025-03-26 client, which may batch.
    const { 'mcp-protocol-version': _revision, ...batchHeaders } = headers;
    const labels = { endpoint, era: 'legacy', method: 'tools/list', outcome: 'error' } as const;
    for (const length of [101, 10_001]) {
      const before = await scrape();
      const body = Array.from({ length }, (_, i) => rpc('legacy', i + 1, 'tools/list').body);
      const response = await routedFetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: batchHeaders, body: JSON.stringify(body) });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
      expect(valueOf(await scrape(), labels) - valueOf(before, labels)).toBe(0);
    }
  });
});
