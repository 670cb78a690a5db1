/**
 * Fail-open that still authenticates (issue 28): with `scopes.failureMode: open`, while the scope
 * endpoint fails, a credential is served the scopes of its last good answer (RFC 5861 stale-if-error,
 * at most `scopes.staleIfErrorMs` old), never the whole catalogue; a credential never seen valid (an
 * unknown key, `Bearer garbage`), one whose last good answer is too old, and one the endpoint refused
 * since, get 503 with Retry-After and nothing is forwarded. Time is the fake `Date` the cache reads.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const T0 = Date.UTC(2026, 6, 28, 9, 0, 0);
const SCOPE_TTL_MS = 10_000;
const STALE_MS = 60_000;
const at = (ms: number) => vi.setSystemTime(T0 + ms);
const key = (name: string) => ({ 'x-cpz-key': name, 'x-cpz-secret': 'any' });

const tool = (name: string, scope: string): { definition: Tool } => ({
  definition: {
    name,
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    _meta: { 'ai.cpz/tool': { requiredScopes: [scope] } },
  } as Tool,
});
const TOOLS = [tool('read_ledger', 'ledger:read'), tool('read_vault', 'vault:read')];

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
  endpoint = await startScopeEndpoint({ reader: ['ledger:read'], revoked: ['ledger:read'], late: ['ledger:read'] });
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url, ttlMs: SCOPE_TTL_MS, staleIfErrorMs: STALE_MS, failureMode: 'open', unauthorizedTtlMs: 0 },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: TOOLS } },
  );
});
afterEach(() => {
  endpoint.mode = 'ok';
});
afterAll(async () => {
  vi.useRealTimers();
  await gateway?.close();
  await endpoint?.close();
});

async function post(credential: Record<string, string>, method: string, params: Record<string, unknown> = {}) {
  const { headers, body } = rpc('modern', 1, method, params);
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  return gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body) }));
}
const toolNames = async (response: Response) => ((await messagesOf(response))[0]!.result!.tools as { name: string }[]).map((t) => t.name);
const forwardedCalls = () => gateway.fake!.received.filter((m) => m.method === 'tools/call').length;

async function expectUnavailable(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect((await messagesOf(response))[0]!.error).toMatchObject({ data: { kind: 'scopes_unavailable' } });
}

describe('failureMode open while the scope endpoint fails', () => {
  it('serves a credential seen valid the scopes of its last good answer, not the whole catalogue, and forwards only what they allow', async () => {
    at(0);
    expect(await toolNames(await post(key('reader'), 'tools/list'))).toEqual(['read_ledger']);
    at(SCOPE_TTL_MS + 1000);
    endpoint.mode = 'error';
    expect(await toolNames(await post(key('reader'), 'tools/list'))).toEqual(['read_ledger']);
    const before = forwardedCalls();
    const ran = await messagesOf(await post(key('reader'), 'tools/call', { name: 'read_ledger', arguments: {} }));
    expect(ran[0]!.error).toBeUndefined();
    expect(forwardedCalls()).toBe(before + 1);
    const hidden = await messagesOf(await post(key('reader'), 'tools/call', { name: 'read_vault', arguments: {} }));
    expect(hidden[0]!.error?.message).toMatch(/Unknown tool: read_vault/);
    expect(forwardedCalls()).toBe(before + 1);
  });

  it('refuses a credential never seen valid with 503 and Retry-After, whatever string it is, and forwards nothing', async () => {
    at(SCOPE_TTL_MS + 2000);
    endpoint.mode = 'error';
    const before = forwardedCalls();
    await expectUnavailable(await post(key('stranger'), 'tools/list'));
    await expectUnavailable(await post({ authorization: 'Bearer garbage' }, 'tools/list'));
    await expectUnavailable(await post({ authorization: 'Bearer garbage' }, 'tools/call', { name: 'read_ledger', arguments: {} }));
    expect(forwardedCalls()).toBe(before);
  });

  it('refuses a credential whose last good answer is older than scopes.staleIfErrorMs', async () => {
    at(0);
    expect(await toolNames(await post(key('late'), 'tools/list'))).toEqual(['read_ledger']);
    at(STALE_MS + 1000);
    endpoint.mode = 'error';
    await expectUnavailable(await post(key('late'), 'tools/list'));
  });

  it('refuses a credential the endpoint refused since its last good answer (a revoked key is not served from the past)', async () => {
    at(100_000);
    expect(await toolNames(await post(key('revoked'), 'tools/list'))).toEqual(['read_ledger']);
    at(100_000 + SCOPE_TTL_MS + 1000);
    endpoint.mode = 'unauthorized';
    expect((await post(key('revoked'), 'tools/list')).status).toBe(401);
    endpoint.mode = 'error';
    await expectUnavailable(await post(key('revoked'), 'tools/list'));
  });
});
