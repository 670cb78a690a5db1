/**
 * The OAuth store in front of a Redis that hangs rather than refuses (SIGSTOP: its connection stays open,
 * nothing answers; gateway/auth/oauth/store.ts): an operation that runs out of its budget makes the store
 * say it does not answer (what `/readyz` reads, builtin.ts `unready`), and it says so until Redis answers
 * again, which it asks by itself (a replica out of its load balancer gets no request). A two-replica
 * try-out found /readyz ready throughout while every bearer request got 503. Real redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { createRedisStore } from '../../gateway/auth/oauth/store.ts';
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.ts';
import { waitFor } from '../helpers/wait.ts';

let redis: RedisServer | undefined;
beforeAll(async () => void (hasRedis && (redis = await startRedis())));
afterAll(async () => {
  redis?.process.kill('SIGCONT');
  await redis?.kill();
});

describe.skipIf(!hasRedis)('the OAuth store, Redis hung', () => {
  it('is unready once an operation runs out of its budget, and ready again once Redis answers', async () => {
    const cache = loadConfig({ env: {}, overrides: { cache: { store: 'redis', redisUrl: redis!.url, operationTimeoutMs: 1000 } } }).cache;
    const store = await createRedisStore(cache);
    try {
      await store.set('probe', 'v', 60);
      expect(store.unreachable?.()).toBeUndefined();
      redis!.process.kill('SIGSTOP');
      await expect(store.get('probe')).rejects.toThrow(/exceeded 1000 ms/);
      expect(store.unreachable?.()).toMatch(/the OAuth store \(Redis at cache.redisUrl\) does not answer: an operation ran out of its 1000 ms budget/);
      redis!.process.kill('SIGCONT');
      await waitFor('the store to answer again', () => store.unreachable?.() === undefined, { timeoutMs: 5000, intervalMs: 100 });
      expect(await store.get('probe')).toBe('v');
      // Hung while nothing asks it: the readiness checks themselves find it (SRE try-out), after a quiet spell.
      redis!.process.kill('SIGSTOP');
      await waitFor('a readiness check to find Redis silent', () => store.unreachable?.() !== undefined, { timeoutMs: 12_000, intervalMs: 250 });
      expect(store.unreachable?.()).toMatch(/does not answer/);
    } finally {
      redis!.process.kill('SIGCONT');
      await store.close();
    }
  });
});
