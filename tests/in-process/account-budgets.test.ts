/**
 * Rate budgets per account (issue 28): the `requests` budget counts the account behind a credential
 * (the scope endpoint's `scopes.accountField`, else the key id), so a key pair, a bearer token and both
 * at once of one account spend one budget instead of three; and a 2025-03-26 batch spends one point per
 * message, so a batch of 100 costs what 100 POSTs do.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const BUDGET = 4;
const PAIR = { 'x-cpz-key': 'k_alice', 'x-cpz-secret': 'alice-secret' };
const TOKEN = { authorization: 'Bearer tok_alice' };

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;

beforeAll(async () => {
  endpoint = await startScopeEndpoint(
    { k_alice: ['ledger:read'], tok_alice: ['ledger:read'], k_bob: ['ledger:read'], k_carol: ['ledger:read'] },
    { accounts: { k_alice: 'alice', tok_alice: 'alice', k_bob: 'bob', k_carol: 'carol' } },
  );
});
// Each test spends the budgets of a gateway of its own.
beforeEach(() => {
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url, accountField: 'key_id' },
      rateLimits: { requests: { points: BUDGET, durationMs: 60_000 } },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool }] } },
  );
});
afterEach(async () => {
  await gateway?.close();
});
afterAll(async () => {
  await endpoint?.close();
});

function list(credential: Record<string, string>): Promise<Response> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  return gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body) }));
}

/** A 2025-03-26 batch (the revision that has batches) of `size` tools/list requests, or of `method`. */
function batch(credential: Record<string, string>, size: number, method = 'tools/list'): Promise<Response> {
  const body = Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method }));
  return gateway.fetch(
    new Request(gateway.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26', ...credential },
      body: JSON.stringify(body),
    }),
  );
}

describe('the requests budget per account', () => {
  it('is one budget for every credential form of an account: key pair, bearer, and both', async () => {
    const statuses = [];
    for (const credential of [PAIR, TOKEN, { ...PAIR, ...TOKEN }, PAIR]) statuses.push((await list(credential)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const refused = await list(TOKEN);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/this account's requests budget \(4 per 60 s\) is spent/);
    // Another account has its own.
    expect((await list({ 'x-cpz-key': 'k_bob', 'x-cpz-secret': 'x' })).status).toBe(200);
  });

  it('spends one point per message of a batch', async () => {
    const carol = { 'x-cpz-key': 'k_carol', 'x-cpz-secret': 'x' };
    expect((await batch(carol, BUDGET + 1)).status).toBe(429);
    expect((await batch(carol, BUDGET - 1)).status).toBe(200);
    expect((await list(carol)).status).toBe(200);
    expect((await list(carol)).status).toBe(429);
  });

  it('spends nothing on ping or server/discover, so a spent budget never reads as a failed negotiation; a 429 names the request id', async () => {
    const alice = { 'x-cpz-key': 'k_alice', 'x-cpz-secret': 'x' };
    for (let i = 0; i < BUDGET; i++) expect((await list(alice)).status).toBe(200);
    // Alice's budget is spent: a batch of pings and a discovery still answer.
    expect((await batch(alice, 3, 'ping')).status).toBe(200);
    const { headers, body } = rpc('modern', 'discover-1', 'server/discover');
    delete headers['x-cpz-key'];
    delete headers['x-cpz-secret'];
    const discovered = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...alice }, body: JSON.stringify(body) }));
    expect(discovered.status).toBe(200);
    const { headers: h, body: b } = rpc('modern', 'call-7', 'tools/list');
    delete h['x-cpz-key'];
    delete h['x-cpz-secret'];
    const refused = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...h, ...alice }, body: JSON.stringify(b) }));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { id: unknown }).id).toBe('call-7');
  });
});
