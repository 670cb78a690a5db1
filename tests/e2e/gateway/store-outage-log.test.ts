/**
 * A shared store's outage as the log tells it (gateway/obs/log.ts outageLog), against a real redis-server: the
 * cache store says it answers again only when Redis answered an operation itself (Keyv reports a store's error as
 * an event and resolves the operation anyway, so a Redis refusing every write, OOM, read as a recovery after each
 * failure: review), and the rate limit store says so after a Redis that froze (SIGSTOP) wakes, which gives no
 * reconnect event (review).
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { createMetrics } from '../../../gateway/obs/metrics.ts';
import { createKvStore } from '../../../gateway/store/kv-store.ts';
import { createRateLimiter } from '../../../gateway/store/rate-limiter.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { waitFor } from '../../helpers/wait.ts';

let redis: RedisServer | undefined;
beforeAll(async () => void (hasRedis && (redis = await startRedis())));
afterAll(async () => {
  redis?.process.kill('SIGCONT');
  await redis?.kill();
});

const cacheOf = () => loadConfig({ env: {}, overrides: { cache: { store: 'redis', redisUrl: redis!.url, operationTimeoutMs: 500 } } }).cache;

describe.skipIf(!hasRedis)('store outages in the log', () => {
  it('the cache store: a Redis that refuses every write is no recovery', async () => {
    const lines = new LogCapture();
    const store = createKvStore(cacheOf(), { name: 'scopes', maxEntries: 100, ttlMs: 60_000, metrics: createMetrics(), log: pino({ level: 'info' }, lines) });
    try {
      await store.set('a', { v: 1 }, 60_000);
      expect(await store.get('a')).toEqual({ v: 1 });
      redis!.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      redis!.cli('CONFIG', 'SET', 'maxmemory', '1');
      await store.set('b', { v: 2 }, 60_000);
      await waitFor('the failed write in the log', () => lines.records('cache store operation failed').length > 0, { timeoutMs: 5000 });
      expect(lines.records('cache store answering again')).toEqual([]);
    } finally {
      redis!.cli('CONFIG', 'SET', 'maxmemory', '0');
      await store.close();
    }
  });

  it('the rate limit store: says it answers again after a frozen Redis wakes', async () => {
    const lines = new LogCapture();
    const limiter = createRateLimiter({
      store: 'redis',
      cache: cacheOf(),
      metrics: createMetrics(),
      log: pino({ level: 'info' }, lines),
      keyPrefix: 'outage-log',
    });
    const charge = [{ budget: 'requests', key: 'k', limit: { points: 1000, durationMs: 60_000 } }] as const;
    try {
      expect((await limiter.consume(charge)).ok).toBe(true);
      redis!.process.kill('SIGSTOP');
      expect((await limiter.consume(charge)).ok).toBe(true);
      expect(lines.records('rate limit store failed').length).toBeGreaterThan(0);
      redis!.process.kill('SIGCONT');
      await waitFor('the store to answer again', async () => (await limiter.consume(charge), lines.records('rate limit store answering again').length === 1), {
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      expect(lines.records('rate limit store answering again')[0]).toMatchObject({ failures: expect.any(Number), downMs: expect.any(Number) });
    } finally {
      redis!.process.kill('SIGCONT');
      await limiter.close();
    }
  });
});
