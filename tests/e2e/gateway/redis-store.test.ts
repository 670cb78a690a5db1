/**
 * The keyv store on Redis (cache.redisUrl): two gateways share caller scopes, so a credential is
 * looked up once; when Redis goes away, both degrade to direct lookups (logged, counted), never to
 * errors for callers. Needs `redis-server` on PATH (installed by .ci/run).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { DATA_KEY_TOOLS, DEMO_KEYS, connectV2, namesOf } from '../../helpers/clients.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';

/** cache.operationTimeoutMs of both gateways. */
const STORE_BUDGET_MS = 5_000;

describe.skipIf(!hasRedis)('scopes shared through Redis', () => {
  let redis: RedisServer;
  let stack: Stack;
  let endpoint: ScopeEndpoint;
  let second: RunningGateway;
  let secondLogs: LogCapture;

  // A Redis, scope endpoint and two gateways of each test's own: one test stops Redis.
  beforeEach(async () => {
    secondLogs = new LogCapture();
    redis = await startRedis();
    endpoint = await startScopeEndpoint({
      cpz_demo_data: ['accounts:read', 'positions:read', 'orders:read', 'market-data:read', 'files:read', 'backtests:read'],
    });
    const redisUrl = redis.url;
    // A store budget a loaded 2-core machine meets: at the default 500 ms a write was abandoned there, so
    // the second gateway looked the credential up again.
    const cache = { redisUrl, operationTimeoutMs: STORE_BUDGET_MS };
    stack = await startStack({ scopeEndpoint: endpoint.url, gateway: { cache } });
    second = await startGateway(
      loadConfig({
        env: {},
        overrides: { listen: { port: 0 }, upstreams: [{ url: stack.upstreamUrl }], scopes: { endpoint: endpoint.url }, cache },
      }),
      { logDestination: secondLogs },
    );
  });
  afterEach(async () => {
    await second?.close();
    await stack?.close();
    await endpoint?.close();
    await redis?.kill();
  });

  const dataTools = async (base: string) => {
    const client = await connectV2(`${base}/mcp`, DEMO_KEYS.data);
    try {
      return namesOf(await client.listTools());
    } finally {
      await client.close();
    }
  };

  it('looks a credential up once and serves the second gateway from Redis', async () => {
    expect(await dataTools(stack.gatewayUrl)).toEqual(DATA_KEY_TOOLS);
    expect(await dataTools(second.url)).toEqual(DATA_KEY_TOOLS);
    expect(endpoint.hits).toBe(1);
  });

  it('keeps answering when Redis goes away: direct lookups, logged and counted', async () => {
    // Served once while Redis is up: the tools' pinned definitions are read (a pin the gateway cannot read holds its tool).
    expect(await dataTools(second.url)).toEqual(DATA_KEY_TOOLS);
    await redis.kill();
    endpoint.mode = 'ok';
    const client = await connectV2(`${second.url}/mcp`, { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'other-secret' });
    try {
      expect(namesOf(await client.listTools())).toEqual(DATA_KEY_TOOLS);
    } finally {
      await client.close();
    }
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    expect(metrics).toMatch(/^mcp_cache_store_errors_total\{cache="scopes",op="[a-z]+"\} [1-9]/m);
    expect(secondLogs.records('cache store operation failed').length).toBeGreaterThan(0);
  }, 60_000);
});
