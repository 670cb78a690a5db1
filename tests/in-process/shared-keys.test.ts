/**
 * Replicas sharing one Redis with different secrets where they must hold the same (gateway/ops/shared-keys.ts):
 * a two-replica try-out started one with another `cache.key` (rate budgets were spent per replica, twice the
 * budget in all) and one with another `oauth.tokenSecret` (tokens refused at random), and neither said a word.
 * Each replica notes its values' fingerprints in Redis; a differing one in use is an error naming the
 * setting, never a value; a rotation (the other's value is this one's `...Previous`) is none. Real redis-server.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { checkSharedKeys, fingerprintsKey, keyFingerprint, SHARED_KEY_CHECK, type GeneratedKeys } from '../../gateway/ops/shared-keys.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.ts';

let redis: RedisServer | undefined;
beforeAll(async () => void (hasRedis && (redis = await startRedis())));
afterAll(async () => void (await redis?.kill()));

const SECRET_A = 'cache-key-of-replica-a-0123456789';
const SECRET_B = 'cache-key-of-replica-b-0123456789';
const replica = (cache: { key: string; keyPrevious?: string }, oauth: Record<string, unknown> = {}) =>
  loadConfig({ env: {}, overrides: { cache: { store: 'redis', redisUrl: redis!.url, ...cache }, oauth } });

async function check(config: ReturnType<typeof replica>, now?: () => number, generated: GeneratedKeys = {}) {
  const logs = new LogCapture();
  const run = checkSharedKeys(
    () => config,
    pino({ level: 'debug' }, logs),
    now,
    () => generated,
  );
  const differing = await run.first;
  run.stop();
  return { differing, errors: logs.records().filter((r) => r.level === 50) };
}

describe.skipIf(!hasRedis)('the shared key check', () => {
  it('says nothing for replicas holding the same values, and names the setting (not the value) of one that differs', async () => {
    redis!.cli('FLUSHALL');
    expect(await check(replica({ key: SECRET_A }))).toEqual({ differing: [], errors: [] });
    expect(await check(replica({ key: SECRET_A }))).toEqual({ differing: [], errors: [] });
    const other = await check(replica({ key: SECRET_B }));
    expect(other.differing).toEqual(['cache.key']);
    expect(other.errors).toHaveLength(1);
    expect(other.errors[0]!.msg).toMatch(/^cache\.key \(GATEWAY_CACHE_KEY\) differs from the value another replica sharing this Redis holds: .*rate budgets/);
    expect(JSON.stringify(other.errors)).not.toContain(SECRET_A);
    expect(JSON.stringify(other.errors)).not.toContain(SECRET_B);
    // One fingerprint per value noted, none of them a value.
    expect(redis!.cli('HKEYS', fingerprintsKey('cache.key')).trim().split('\n').sort()).toEqual(
      [await keyFingerprint('cache.key', SECRET_A), await keyFingerprint('cache.key', SECRET_B)].sort(),
    );
  });

  it("takes a rotation (the other value is this one's previous) and a value no replica noted for a while as no difference", async () => {
    redis!.cli('FLUSHALL');
    await check(replica({ key: SECRET_A }));
    expect((await check(replica({ key: SECRET_B, keyPrevious: SECRET_A }))).differing).toEqual([]);
    // ...on both sides of it: a replica not yet moved sees the new value's previous is its own (review).
    expect(await check(replica({ key: SECRET_A }))).toEqual({ differing: [], errors: [] });
    redis!.cli('FLUSHALL');
    await check(replica({ key: SECRET_A }));
    const later = Date.now() + SHARED_KEY_CHECK.inUseMs + 1000;
    expect((await check(replica({ key: SECRET_B }), () => later)).differing).toEqual([]);
  });

  it('says once, at warn, that an ACL refusing its keys keeps the check from running (review)', async () => {
    redis!.cli('ACL', 'SETUSER', 'limited', 'on', '>limited-password', '~other:*', '+@all');
    try {
      const logs = new LogCapture();
      const config = loadConfig({
        env: {},
        overrides: { cache: { store: 'redis', redisUrl: redis!.url.replace('redis://', 'redis://limited:limited-password@'), key: SECRET_A } },
      });
      const run = checkSharedKeys(() => config, pino({ level: 'debug' }, logs));
      expect(await run.first).toEqual([]);
      run.stop();
      expect(logs.records('shared key check: Redis refused it')).toEqual([expect.objectContaining({ level: 40 })]);
    } finally {
      redis!.cli('ACL', 'DELUSER', 'limited');
    }
  });

  it('names the authorization server secret of a replica that seals tokens with another', async () => {
    redis!.cli('FLUSHALL');
    const oauth = (tokenSecret: string) => ({ mode: 'builtin', tokenSecret });
    await check(replica({ key: SECRET_A }, oauth('token-secret-of-replica-a-0123456789')));
    const other = await check(replica({ key: SECRET_A }, oauth('token-secret-of-replica-b-0123456789')));
    expect(other.differing).toEqual(['oauth.tokenSecret']);
    expect(await keyFingerprint('cache.key', 'x')).not.toBe(await keyFingerprint('oauth.tokenSecret', 'x'));
  });

  // Multi-replica try-out: a replica without GATEWAY_TOKEN_SECRET sealed tokens with the key kept in Redis, which
  // the replicas with the secret refused, and no replica said a word (only configured values were compared).
  it('counts a setting not configured by the key the replica uses instead, and says it has none set', async () => {
    redis!.cli('FLUSHALL');
    const withSecret = replica({ key: SECRET_A }, { mode: 'builtin', tokenSecret: 'token-secret-of-replica-a-0123456789' });
    const without = replica({ key: SECRET_A }, { mode: 'builtin' });
    // Started before the other noted its value (a replica without the setting compares with notes made since it started).
    const earlier = () => Date.now() - 10_000;
    expect((await check(withSecret)).differing).toEqual([]);
    const other = await check(without, earlier, { tokenKey: 'id-of-the-root-key-kept-in-redis' });
    expect(other.differing).toEqual(['oauth.tokenSecret']);
    expect(other.errors[0]!.msg).toContain('(this replica has none set and uses a key of its own)');
    // And the replica with the secret, at its next check, names it too.
    expect((await check(withSecret)).differing).toEqual(['oauth.tokenSecret']);
    // A lone replica without it, restarted with a new key of its own: its previous run's note is no other replica.
    redis!.cli('FLUSHALL');
    expect((await check(without, undefined, { tokenKey: 'key-of-the-run-before' })).differing).toEqual([]);
    expect((await check(without, undefined, { tokenKey: 'key-of-this-run' })).differing).toEqual([]);
    // Replicas without it that share the key kept in Redis agree.
    redis!.cli('FLUSHALL');
    expect((await check(without, undefined, { tokenKey: 'id-1' })).differing).toEqual([]);
    expect((await check(without, undefined, { tokenKey: 'id-1' })).differing).toEqual([]);
    // No cache.key: each replica's own random key, so two such replicas split their budgets: said.
    redis!.cli('FLUSHALL');
    const noKey = loadConfig({ env: {}, overrides: { cache: { store: 'redis', redisUrl: redis!.url } } });
    await check(noKey, undefined, { cacheKey: 'process-key-id-of-replica-1' });
    expect((await check(noKey, earlier, { cacheKey: 'process-key-id-of-replica-2' })).differing).toEqual(['cache.key']);
  });
});
