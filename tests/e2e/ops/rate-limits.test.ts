/**
 * Rate budgets end to end on two gateway replicas sharing one real Redis (issue 17, Done when):
 * an account's request budget is shared (N+5 requests split across both replicas: exactly 5 are
 * refused with HTTP 429 and Retry-After, never a spec-reserved JSON-RPC code), the budget of
 * state-changing calls is separate from the read budget, and every credential form of one account
 * (key pair, bearer, both) spends the same budgets; each refusal an isError result saying when to
 * retry, counted in mcp_rate_limited_total{budget}. Needs `redis-server` on PATH
 * (installed by .ci/run).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { FULL_KEY, IDENTITY_KEY, messagesOf, post, rpc } from '../../helpers/raw-mcp.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { startGatewayWith, startStack, type Stack } from '../../helpers/stack.ts';

const N = 20;
const rateLimits = {
  requests: { points: N, durationMs: 60_000 },
  reads: { points: 3, durationMs: 60_000 },
  writes: { points: 2, durationMs: 60_000 },
};
const BEARER = { authorization: 'Bearer cpz_tok_full_demo' };

describe.skipIf(!hasRedis)('rate limits shared through Redis', () => {
  let redis: RedisServer;
  let stack: Stack;
  let second: RunningGateway;
  let replicas: string[];

  // A Redis and two replicas of each test's own: the tests spend budgets, and one stops Redis.
  beforeEach(async () => {
    redis = await startRedis();
    // A store budget a loaded 2-core machine meets (as redis-store.test.ts): at the default, an OAuth
    // store operation passed its 1 s floor there while a gateway started.
    const cache = { redisUrl: redis.url, operationTimeoutMs: 5_000 };
    stack = await startStack({ gateway: { cache, rateLimits } });
    second = await startGatewayWith({
      overrides: { upstreams: [{ url: stack.upstreamUrl }], scopes: { endpoint: `${stack.platformUrl}/v1/me` }, cache, rateLimits },
    });
    replicas = [stack.gatewayUrl, second.url];
  });
  afterEach(async () => {
    await second?.close();
    await stack?.close();
    await redis?.kill();
  });

  const rateLimited = async (base: string, budget: string) => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(text.match(new RegExp(`^mcp_rate_limited_total\\{budget="${budget}"\\} (\\d+)$`, 'm'))?.[1] ?? 0);
  };

  const callTool = async (base: string, key: Record<string, string>, name: string, args: Record<string, unknown>) => {
    const { headers, body } = rpc('modern', 1, 'tools/call', { name, arguments: args });
    const response = await post(`${base}/mcp`, body, { ...headers, ...key });
    expect(response.status).toBe(200);
    return (await messagesOf(response))[0]!.result as { isError?: boolean; content: { text: string }[]; _meta?: Record<string, unknown> };
  };

  function orderArgs() {
    const account = stack.platform!.store.accounts.find((a) => a.environment === 'paper') ?? stack.platform!.store.accounts[0]!;
    return { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 };
  }

  it(`shares a credential's request budget: ${N}+5 requests across both replicas, exactly 5 refused with 429 and Retry-After`, async () => {
    const statuses: number[] = [];
    const refusals: { replica: number; retryAfter: string | null; body: { error?: { code: number; data?: { kind?: string } } } }[] = [];
    for (let i = 0; i < N + 5; i++) {
      const { headers, body } = rpc('modern', i, 'tools/list');
      const response = await post(`${replicas[i % 2]}/mcp`, body, { ...headers, ...IDENTITY_KEY });
      statuses.push(response.status);
      if (response.status === 429) refusals.push({ replica: i % 2, retryAfter: response.headers.get('retry-after'), body: await response.json() });
      else await response.text();
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(statuses.slice(0, N).every((s) => s === 200)).toBe(true);
    expect(new Set(refusals.map((r) => r.replica))).toEqual(new Set([0, 1]));
    for (const { retryAfter, body } of refusals) {
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      expect(body.error?.data?.kind).toBe('rate_limited');
      expect(body.error!.code).toBe(-32000);
    }
    expect((await rateLimited(replicas[0]!, 'requests')) + (await rateLimited(replicas[1]!, 'requests'))).toBe(5);
  });

  it('keeps the write budget apart from the read budget, shared by both replicas, refusing with an isError that says when to retry', async () => {
    const orders = stack.platform!.store.orders.length;
    expect((await callTool(replicas[0]!, FULL_KEY, 'place_order', orderArgs())).isError).toBeFalsy();
    expect((await callTool(replicas[1]!, FULL_KEY, 'place_order', orderArgs())).isError).toBeFalsy();
    const refused = await callTool(replicas[0]!, FULL_KEY, 'place_order', orderArgs());
    expect(refused.isError).toBe(true);
    expect(refused._meta).toMatchObject({ 'ai.cpz.gateway/error': 'rate_limited', 'ai.cpz.gateway/budget': 'writes' });
    expect(refused._meta!['ai.cpz.gateway/retryAfterMs']).toBeGreaterThan(0);
    expect(refused.content[0]!.text).toMatch(
      /state-changing tool calls for this account are limited to 2 per 60 s\. Nothing was executed\. Retry after \d+ s\./,
    );
    expect(stack.platform!.store.orders.length).toBe(orders + 2);

    // Writes spent: reads still run, on their own budget, until it too is spent.
    for (const replica of [1, 0, 1]) expect((await callTool(replicas[replica]!, FULL_KEY, 'list_accounts', {})).isError).toBeFalsy();
    const readRefused = await callTool(replicas[0]!, FULL_KEY, 'list_accounts', {});
    expect(readRefused._meta).toMatchObject({ 'ai.cpz.gateway/error': 'rate_limited', 'ai.cpz.gateway/budget': 'reads' });
  });

  it('counts the bearer token of the same account in the same budgets (per account, not per credential form)', async () => {
    // The full key's writes and reads spent with its key pair: its bearer token finds them spent too.
    for (const replica of [0, 1]) expect((await callTool(replicas[replica]!, FULL_KEY, 'place_order', orderArgs())).isError).toBeFalsy();
    for (const replica of [1, 0, 1]) expect((await callTool(replicas[replica]!, FULL_KEY, 'list_accounts', {})).isError).toBeFalsy();
    const orders = stack.platform!.store.orders.length;
    expect((await callTool(replicas[1]!, BEARER, 'list_accounts', {}))._meta?.['ai.cpz.gateway/budget']).toBe('reads');
    expect((await callTool(replicas[0]!, BEARER, 'place_order', orderArgs()))._meta?.['ai.cpz.gateway/budget']).toBe('writes');
    expect((await callTool(replicas[1]!, { ...FULL_KEY, ...BEARER }, 'place_order', orderArgs()))._meta?.['ai.cpz.gateway/budget']).toBe('writes');
    expect(stack.platform!.store.orders.length).toBe(orders);
    const counted = async (budget: string) => (await rateLimited(replicas[0]!, budget)) + (await rateLimited(replicas[1]!, budget));
    expect(await counted('writes')).toBe(2);
    expect(await counted('reads')).toBe(1);
  });

  it('keeps answering when Redis goes away: each replica counts in memory, logged and counted', async () => {
    const key = { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' };
    // Served once while Redis is up: the tool's pinned definition is read (a pin the gateway cannot read holds its tool).
    expect((await callTool(replicas[1]!, key, 'list_accounts', {})).isError).toBeFalsy();
    await redis.kill();
    const result = await callTool(replicas[1]!, key, 'list_accounts', {});
    expect(result.isError).toBeFalsy();
    const text = await (await fetch(`${replicas[1]}/metrics`)).text();
    expect(text).toMatch(/^mcp_cache_store_errors_total\{cache="rate_limits",op="consume"\} [1-9]/m);
  });
});
