/**
 * A live reload keeps the refused-credentials guard, with the blocks it knows, when it counts alike (same
 * limiter, budget and digest key): a block forgotten by a reload let a cached right secret through, unchecked
 * by the budget (review). A changed budget or digest key builds a new guard.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { RefusedCredentials } from '../../gateway/auth/refused-credentials.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { createRateLimiter } from '../../gateway/store/rate-limiter.ts';

const config = (points: number) =>
  loadConfig({
    env: {},
    overrides: {
      upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }],
      rateLimits: { refusedCredentials: { perKey: { points, durationMs: 60_000, blockMs: 60_000 } } },
    },
  });

describe('RefusedCredentials across a reload', () => {
  it('keeps the guard and its blocks when it counts alike; builds a new one when the budget or the key changes', async () => {
    const limiter = createRateLimiter({
      store: 'memory',
      cache: config(1).cache,
      metrics: createMetrics(),
      log: createLogger(config(1), { write: () => {} } as never),
    });
    const key = Buffer.from('k'.repeat(32));
    const first = RefusedCredentials.of(config(1), limiter, key)!;
    expect(await first.spend('198.51.100.1', 'cpz_demo_full')).toBeUndefined();
    expect(await first.spend('198.51.100.1', 'cpz_demo_full')).toBeDefined();
    expect(first.blockedFor('198.51.100.1', 'cpz_demo_full')).toBeGreaterThan(0);
    const kept = RefusedCredentials.of(config(1), limiter, key, first)!;
    expect(kept).toBe(first);
    expect(kept.blockedFor('198.51.100.1', 'cpz_demo_full')).toBeGreaterThan(0);
    expect(RefusedCredentials.of(config(2), limiter, key, first)).not.toBe(first);
    expect(RefusedCredentials.of(config(1), limiter, Buffer.from('j'.repeat(32)), first)).not.toBe(first);
    await limiter.close();
  });
});
