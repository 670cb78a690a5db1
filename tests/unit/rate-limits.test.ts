/**
 * The budget rule (gateway/policy/rate-limits.ts) and the in-memory limiter (gateway/store/rate-limiter.ts):
 * which budgets a call spends, overrides per upstream and tool with counters of their own, and a
 * refusal that gives back what the earlier budgets of the same call spent.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { accountBudgets, anyBudget, requestCharge, toolCallCharges } from '../../gateway/policy/rate-limits.ts';
import { consoleSignInCharges, registrationCharges, signInCharges } from '../../gateway/auth/attempt-budgets.ts';
import { createRateLimiter } from '../../gateway/store/rate-limiter.ts';
import { freePort } from '../helpers/free-port.ts';
import { startRedis } from '../helpers/redis.ts';

const config = (overrides: Record<string, unknown> = {}) =>
  loadConfig({
    env: {},
    overrides: { upstreams: [{ name: 'cpzai', url: 'http://127.0.0.1:1/mcp', ...(overrides.upstream as object) }], rateLimits: overrides.rateLimits as never },
  });
const read = { upstream: 'cpzai', upstreamName: 'list_orders', readOnly: true };
const write = { upstream: 'cpzai', upstreamName: 'place_order', readOnly: false };

describe('rate budget rule', () => {
  it('spends nothing without budgets', () => {
    const c = config();
    expect(accountBudgets(c)).toBe(false);
    // Refused key pairs are counted (by default) where a key pair is checked: configured keys or a scope endpoint.
    const unchecked = { ...c, scopes: { ...c.scopes, endpoint: undefined } };
    expect(anyBudget({ ...unchecked, oauth: { ...c.oauth, mode: 'off' }, console: {} })).toBe(false);
    expect(anyBudget({ ...c, oauth: { ...c.oauth, mode: 'off' }, console: {} })).toBe(true);
    expect(anyBudget({ ...c, rateLimits: { ...c.rateLimits, refusedCredentials: {} }, oauth: { ...c.oauth, mode: 'off' }, console: {} })).toBe(false);
    // The built-in authorization server always counts sign-in attempts; the console counts admin tokens.
    expect(anyBudget({ ...c, oauth: { ...c.oauth, mode: 'builtin' }, console: {} })).toBe(true);
    expect(anyBudget({ ...c, oauth: { ...c.oauth, mode: 'off' }, console: { adminToken: 'x'.repeat(16) } })).toBe(true);
    expect(requestCharge(c.rateLimits, 'd')).toBeUndefined();
    expect(toolCallCharges(c.rateLimits, c.upstreams[0], write, 'd')).toEqual([]);
  });

  it('charges reads and writes to separate budgets, then the tool budget', () => {
    const c = config({
      rateLimits: {
        requests: { points: 100, durationMs: 60000 },
        reads: { points: 50, durationMs: 60000 },
        writes: { points: 2, durationMs: 60000 },
        tool: { points: 10, durationMs: 1000 },
      },
    });
    expect(requestCharge(c.rateLimits, 'd')).toEqual({ budget: 'requests', key: 'requests:d', limit: { points: 100, durationMs: 60000 }, points: 1 });
    // A batch spends one point per message.
    expect(requestCharge(c.rateLimits, 'd', 100)?.points).toBe(100);
    expect(toolCallCharges(c.rateLimits, c.upstreams[0], read, 'd').map((x) => [x.budget, x.key])).toEqual([
      ['reads', 'reads:d'],
      ['tool', 'tool:cpzai:list_orders:d'],
    ]);
    expect(toolCallCharges(c.rateLimits, c.upstreams[0], write, 'd').map((x) => [x.budget, x.key, x.limit.points])).toEqual([
      ['writes', 'writes:d', 2],
      ['tool', 'tool:cpzai:place_order:d', 10],
    ]);
  });

  it('lets an upstream and a tool override the budgets, with counters of their own', () => {
    const c = config({
      rateLimits: { writes: { points: 5, durationMs: 60000 }, tool: { points: 10, durationMs: 1000 } },
      upstream: { rateLimits: { writes: { points: 1, durationMs: 60000 }, tools: { place_order: { points: 3, durationMs: 10000 } } } },
    });
    expect(accountBudgets(c)).toBe(true);
    expect(toolCallCharges(c.rateLimits, c.upstreams[0], write, 'd').map((x) => [x.budget, x.key, x.limit.points])).toEqual([
      ['writes', 'writes:cpzai:d', 1],
      ['tool', 'tool:cpzai:place_order:d', 3],
    ]);
  });

  it('reads budgets from GATEWAY_* variables (JSON or one key at a time), and the store follows cache.store', () => {
    const c = loadConfig({
      env: {
        GATEWAY_RATE_LIMITS_REQUESTS: '{"points":5,"durationMs":1000}',
        GATEWAY_RATE_LIMITS_WRITES_POINTS: '2',
        GATEWAY_RATE_LIMITS_WRITES_DURATION_MS: '60000',
        REDIS_URL: 'redis://127.0.0.1:1',
      },
      overrides: { upstreams: [{ name: 'cpzai', url: 'http://127.0.0.1:1/mcp' }] },
    });
    expect(c.rateLimits).toMatchObject({ store: 'redis', requests: { points: 5, durationMs: 1000 }, writes: { points: 2, durationMs: 60000 } });
    expect(config().rateLimits.store).toBe('memory');
    expect(() =>
      loadConfig({ env: { GATEWAY_RATE_LIMITS_STORE: 'redis' }, overrides: { upstreams: [{ name: 'cpzai', url: 'http://127.0.0.1:1/mcp' }] } }),
    ).toThrow(/cache\.redisUrl: required when rateLimits\.store is redis/);
  });

  it('bounds registrations per address and in total, sign-in attempts per page, key, client and address, and console tokens per address', () => {
    const c = config();
    expect(registrationCharges(c.rateLimits, '10.0.0.1').map((x) => [x.budget, x.key, x.limit.points, x.limit.durationMs])).toEqual([
      ['registrations_per_address', 'registrations:address:10.0.0.1', 20, 3600000],
      ['registrations_total', 'registrations:total', 1000, 3600000],
    ]);
    const attempt = { account: 'acct_x', client: 'c1', address: '10.0.0.1', page: 'uid1', pageTtlMs: 600_000 };
    expect(signInCharges(c.rateLimits, attempt).map((x) => [x.budget, x.key, x.limit.points, x.limit.blockMs])).toEqual([
      ['sign_ins_per_page', 'sign-ins:page:uid1', 5, undefined],
      ['sign_ins_per_key', 'sign-ins:key:acct_x', 10, 1800000],
      ['sign_ins_per_client', 'sign-ins:client:c1', 300, undefined],
      ['sign_ins_per_address', 'sign-ins:address:10.0.0.1', 30, 1800000],
    ]);
    expect(consoleSignInCharges(c.rateLimits, '10.0.0.1').map((x) => [x.budget, x.limit.points])).toEqual([['console_sign_ins_per_address', 10]]);
  });

  it('refuses a window that is not whole seconds, naming the key', () => {
    expect(() => config({ rateLimits: { writes: { points: 1, durationMs: 1500 } } })).toThrow(/rateLimits\.writes\.durationMs: must be multiple of 1000/);
  });
});

describe('in-memory limiter', () => {
  const limiter = () => {
    const metrics = createMetrics();
    return {
      metrics,
      limiter: createRateLimiter({ store: 'memory', cache: config().cache, metrics, log: createLogger(config(), { write: () => {} } as never) }),
    };
  };

  it('refuses past the limit with the time until the window reopens, and counts it by budget', async () => {
    const { metrics, limiter: l } = limiter();
    const charge = { budget: 'writes' as const, key: 'writes:d', limit: { points: 2, durationMs: 60000 } };
    expect(await l.consume([charge])).toEqual({ ok: true, remaining: 1 });
    expect(await l.consume([charge])).toEqual({ ok: true, remaining: 0 });
    const refused = await l.consume([charge]);
    expect(refused).toMatchObject({ ok: false, budget: 'writes', limit: { points: 2 } });
    expect(refused.ok === false && refused.retryAfterMs).toBeGreaterThan(55000);
    expect(await metrics.registry.getSingleMetricAsString('mcp_rate_limited_total')).toMatch(/mcp_rate_limited_total\{budget="writes"\} 1/);
  });

  it('gives back what the earlier budgets of a refused call spent', async () => {
    const { limiter: l } = limiter();
    const reads = { budget: 'reads' as const, key: 'reads:d', limit: { points: 2, durationMs: 60000 } };
    const tool = { budget: 'tool' as const, key: 'tool:u:t:d', limit: { points: 1, durationMs: 60000 } };
    expect((await l.consume([reads, tool])).ok).toBe(true);
    expect(await l.consume([reads, tool])).toMatchObject({ ok: false, budget: 'tool' });
    // The refused call's read point came back: another tool can still spend the second one.
    expect((await l.consume([reads, { ...tool, key: 'tool:u:other:d' }])).ok).toBe(true);
    expect(await l.consume([reads])).toMatchObject({ ok: false, budget: 'reads' });
  });

  it("spends a charge's points at once, gives them back on refund, and blocks for blockMs once over", async () => {
    const { limiter: l } = limiter();
    const batch = { budget: 'requests' as const, key: 'requests:a', limit: { points: 10, durationMs: 60000 }, points: 8 };
    expect(await l.consume([batch])).toEqual({ ok: true, remaining: 2 });
    expect(await l.consume([batch])).toMatchObject({ ok: false, budget: 'requests' });
    const attempt = { budget: 'sign_ins_per_key' as const, key: 'k', limit: { points: 2, durationMs: 1000, blockMs: 60000 } };
    expect((await l.consume([attempt])).ok).toBe(true);
    await l.refund([attempt]);
    expect(await l.consume([attempt])).toEqual({ ok: true, remaining: 1 });
    expect((await l.consume([attempt])).ok).toBe(true);
    const blocked = await l.consume([attempt]);
    // Over the limit: refused for the block (60 s), not only until the 1 s window ends.
    expect(blocked.ok === false && blocked.retryAfterMs).toBeGreaterThan(55000);
  });
});

describe('a Redis limiter whose Redis is down', () => {
  it('waits for the first connection attempt only, then counts in memory at once (it waited 1 s per request before)', async () => {
    const port = await freePort();
    const c = config();
    const l = createRateLimiter({
      store: 'redis',
      cache: { ...c.cache, store: 'redis', redisUrl: `redis://127.0.0.1:${port}` },
      metrics: createMetrics(),
      log: createLogger(c, { write: () => {} } as never),
    });
    try {
      const charge = { budget: 'requests' as const, key: 'requests:d', limit: { points: 100, durationMs: 60000 } };
      expect((await l.consume([charge])).ok).toBe(true);
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect(await l.consume([charge])).toEqual({ ok: true, remaining: 98 - i });
      // Five requests that each waited for a connection that never comes took 5 s.
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await l.close();
    }
  });
});

describe('a Redis limiter whose Redis keeps the connection and answers nothing', () => {
  // A frozen redis-server (SIGSTOP): every request waited until it woke (robustness try-out: 40 s and more).
  it('counts a charge in memory once cache.operationTimeoutMs has passed, and counts the store failure', { timeout: 20_000 }, async () => {
    const redis = await startRedis();
    const c = config();
    const metrics = createMetrics();
    const l = createRateLimiter({
      store: 'redis',
      cache: { ...c.cache, store: 'redis', redisUrl: redis.url, operationTimeoutMs: 200 },
      metrics,
      log: createLogger(c, { write: () => {} } as never),
    });
    const charge = { budget: 'requests' as const, key: 'requests:frozen', limit: { points: 100, durationMs: 60000 } };
    try {
      expect(await l.consume([charge])).toEqual({ ok: true, remaining: 99 });
      redis.process.kill('SIGSTOP');
      expect(await l.consume([charge])).toMatchObject({ ok: true });
      expect(await metrics.registry.getSingleMetricAsString('mcp_cache_store_errors_total')).toMatch(/cache="rate_limits"[^\n]* [1-9]/);
      // The charges after it do not wait for the frozen Redis again for a while (multi-replica try-out: each waited).
      const started = performance.now();
      for (let i = 0; i < 5; i++) expect(await l.consume([charge])).toMatchObject({ ok: true });
      expect(performance.now() - started).toBeLessThan(800);
    } finally {
      redis.process.kill('SIGCONT');
      await l.close();
      await redis.kill();
    }
  });
});
