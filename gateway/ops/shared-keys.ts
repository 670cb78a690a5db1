import { createHmac } from 'node:crypto';
import type { GatewayConfig } from '../../config/types.ts';
import type { Logger } from '../obs/log.ts';
import { createRedisConnection } from '../store/redis-connection.ts';

/** The Redis hash of one setting's fingerprints in use (field: fingerprint, value: when last seen, ms), a Cluster hash tag of its own. */
export const fingerprintsKey = (setting: string) => `{mcp-gateway:keys}:fingerprints:${setting}`;

/** How often a replica says which fingerprints it holds, and how long one not said again still counts as in use (ms). */
export const SHARED_KEY_CHECK = { intervalMs: 60_000, inUseMs: 180_000, forgetMs: 86_400_000 };

/** What replicas holding different values of a setting lose: said in the error. */
const SHARED: readonly {
  setting: string;
  variable: string;
  value(c: GatewayConfig): string | undefined;
  previous(c: GatewayConfig): string | undefined;
  lost: string;
}[] = [
  {
    setting: 'cache.key',
    variable: 'GATEWAY_CACHE_KEY',
    value: (c) => c.cache.key,
    previous: (c) => c.cache.keyPrevious,
    lost: 'each keys Redis by its own digests, so rate budgets, scope and catalogue caches are counted and kept per replica',
  },
  {
    setting: 'oauth.tokenSecret',
    variable: 'GATEWAY_TOKEN_SECRET',
    value: (c) => (c.oauth.mode === 'builtin' ? c.oauth.tokenSecret : undefined),
    previous: (c) => c.oauth.tokenSecretPrevious,
    lost: 'a token one issued is refused by the other (401) and its refresh fails, so users behind a load balancer are signed out at random',
  },
  {
    setting: 'audit.digestKey',
    variable: 'GATEWAY_AUDIT_DIGEST_KEY',
    value: (c) => c.audit.digestKey,
    previous: () => undefined,
    lost: 'their audit lines digest one credential differently and cannot be joined',
  },
];

/** A keyed digest of a constant under `secret`: equal for equal secrets, and nothing about the secret. */
export function keyFingerprint(secret: string): string {
  return createHmac('sha256', secret).update('mcp-gateway shared key fingerprint v1').digest('hex').slice(0, 32);
}

/**
 * Whether the replicas sharing this Redis hold the same secrets where they must (`cache.key`, the built-in
 * authorization server's `oauth.tokenSecret`, `audit.digestKey`). Each replica notes the fingerprint of each
 * value it holds ({@link keyFingerprint}, never the value) with the time, at start and every
 * {@link SHARED_KEY_CHECK}.intervalMs; a fingerprint other than its own noted within `inUseMs` is another
 * replica holding another value: an error naming the setting and what the difference breaks, once per
 * fingerprint. The fingerprint of this replica's `...Previous` value is a rotation under way, not an error;
 * a value changed on every replica leaves the old fingerprint unnoted, and it stops counting after
 * `inUseMs`. Replicas started with different values failed in silence before: rate budgets multiplied
 * per replica, users signed out at random (two-replica try-out). Best effort, bounded by
 * `cache.operationTimeoutMs` (at least 1 s) a check: a Redis that does not answer is the stores' outage to report.
 * @returns a function that stops the checks, and the first check (resolving with the settings found to differ: tests).
 */
export function checkSharedKeys(config: GatewayConfig, log: Logger, now: () => number = Date.now): { stop(): void; first: Promise<string[]> } {
  if (config.cache.store !== 'redis') return { stop: () => undefined, first: Promise.resolve([]) };
  const settings = SHARED.map((s) => ({ ...s, own: s.value(config) })).filter((s): s is typeof s & { own: string } => s.own !== undefined);
  if (settings.length === 0) return { stop: () => undefined, first: Promise.resolve([]) };
  const budget = Math.max(config.cache.operationTimeoutMs, 1000);
  const reported = new Set<string>();
  const check = async (): Promise<string[]> => {
    const client = createRedisConnection(config.cache, { role: 'keys', connectTimeoutMs: budget, disableOfflineQueue: true });
    client.on('error', () => {});
    const differing: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        (async () => {
          await client.connect();
          for (const s of settings) {
            const key = fingerprintsKey(s.setting);
            const mine = keyFingerprint(s.own);
            const previous = s.previous(config);
            const rotated = previous === undefined ? undefined : keyFingerprint(previous);
            await client.hSet(key, mine, String(now()));
            const seen = await client.hGetAll(key);
            for (const [fingerprint, at] of Object.entries(seen)) {
              const age = now() - Number(at);
              if (fingerprint === mine || fingerprint === rotated) continue;
              if (!(age <= SHARED_KEY_CHECK.inUseMs)) {
                if (!(age <= SHARED_KEY_CHECK.forgetMs)) await client.hDel(key, fingerprint);
                continue;
              }
              differing.push(s.setting);
              if (reported.has(`${s.setting} ${fingerprint}`)) continue;
              reported.add(`${s.setting} ${fingerprint}`);
              log.error(
                { setting: s.setting },
                `${s.setting} (${s.variable}) differs from the value another replica sharing this Redis holds: ${s.lost}. Set the same value on every replica (to rotate it, the old value as the ...PREVIOUS setting)`,
              );
            }
          }
        })(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${budget} ms`)), budget))),
      ]);
    } catch (error) {
      log.debug({ err: (error as Error).message }, 'shared key check: Redis did not answer; not checked');
    } finally {
      clearTimeout(timer);
      client.destroy();
    }
    return [...new Set(differing)];
  };
  const first = check();
  const interval = setInterval(() => void check(), SHARED_KEY_CHECK.intervalMs);
  interval.unref();
  return { stop: () => clearInterval(interval), first };
}
