/**
 * `/readyz` calls an upstream's catalogue stale by the list's own lifetime: a list `upstreams[].catalog.ttlMs` says
 * lasts a second, whose refresh has failed for two minutes, is stale (`not_ready`: it is the only upstream) under a 10-minute `cache.ttlMs` (it was
 * `ready` for 20 minutes: the threshold read `cache.ttlMs` only). Time moves by `Date.now`, which the catalogue's
 * ages and expiries read.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';

let stack: InProcessGateway;
let listsFail = false;

beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: () => {
        if (listsFail) throw new Error('the catalogue backend is down');
        return [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } }];
      },
    },
    gateway: { cache: { ttlMs: 600_000 }, upstreams: [{ health: { intervalMs: 0 }, catalog: { ttlMs: 1000 } }] },
  });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await stack?.close();
});

const readyz = async () => (await stack.fetch(new Request(new URL('/readyz', stack.gatewayUrl)))).json() as Promise<{ status: string; reasons?: string[] }>;
const list = () =>
  stack.fetch(
    new Request(stack.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        'x-cpz-key': 'k',
        'x-cpz-secret': 's',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  );

describe('an upstream whose catalogue refresh fails', () => {
  it('is stale once the list is older than twice its own time to live, not cache.ttlMs', async () => {
    expect((await list()).status).toBe(200);
    expect((await readyz()).status).toBe('ready');
    listsFail = true;
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + 120_000);
    expect((await list()).status).toBe(200);
    const after = await readyz();
    expect(after.status).toBe('not_ready');
    expect(after.reasons?.join(' ')).toMatch(/catalogue is stale \(last fetched 1[12]\d s ago/);
  });
});
