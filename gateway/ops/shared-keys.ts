import { scrypt } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt);
import type { GatewayConfig } from '../../config/types.ts';
import type { Logger } from '../obs/log.ts';
import { createRedisConnection } from '../store/redis-connection.ts';
import { DeadlineExceeded, withinDeadline } from '../store/deadline.ts';

/** The Redis hash of one setting's fingerprints in use (field: fingerprint, value: when last seen, ms), a Cluster hash tag of its own. */
export const fingerprintsKey = (setting: string) => `{mcp-gateway:keys}:fingerprints:${setting}`;

/** How often a replica says which fingerprints it holds, and how long one not said again still counts as in use (ms). */
export const SHARED_KEY_CHECK = { intervalMs: 60_000, inUseMs: 180_000, forgetMs: 86_400_000 };

/**
 * The keys a replica uses where a setting is not configured (ids only, a digest of each, never the key): its
 * process's random `cache.key` digest key, the built-in authorization server's token sealing key (kept in Redis,
 * or its process's own), its generated audit digest key.
 */
export interface GeneratedKeys {
  cacheKey?: string;
  tokenKey?: string;
  auditKey?: string;
}

/** What replicas holding different values of a setting lose: said in the error. */
const SHARED: readonly {
  setting: string;
  variable: string;
  value(c: GatewayConfig, generated: GeneratedKeys): string | undefined;
  previous(c: GatewayConfig): string | undefined;
  lost: string;
}[] = [
  {
    setting: 'cache.key',
    variable: 'GATEWAY_CACHE_KEY',
    value: (c, generated) => c.cache.key ?? generated.cacheKey,
    previous: (c) => c.cache.keyPrevious,
    lost: 'each keys Redis by its own digests, so rate budgets, scope and catalogue caches are counted and kept per replica',
  },
  {
    setting: 'oauth.tokenSecret',
    variable: 'GATEWAY_TOKEN_SECRET',
    value: (c, generated) => (c.oauth.mode === 'builtin' ? (c.oauth.tokenSecret ?? generated.tokenKey) : undefined),
    previous: (c) => c.oauth.tokenSecretPrevious,
    lost: 'a token one issued is refused by the other (401) and its refresh fails, so users behind a load balancer are signed out at random',
  },
  {
    setting: 'audit.digestKey',
    variable: 'GATEWAY_AUDIT_DIGEST_KEY',
    value: (c, generated) => c.audit.digestKey ?? generated.auditKey,
    previous: () => undefined,
    lost: 'their audit lines digest one credential differently and cannot be joined',
  },
];

/**
 * A fingerprint of `secret` as the value of `setting`: scrypt (RFC 7914) salted with the setting, so one read
 * of Redis gives no fast test of guesses at a weak secret, and one secret used for two settings gives two
 * unrelated fingerprints (review). Equal for equal values of one setting; about 50 ms of a pool thread each.
 */
export async function keyFingerprint(setting: string, secret: string): Promise<string> {
  // On the thread pool, not the event loop: requests arriving at start do not wait for it.
  return ((await scryptAsync(secret, `mcp-gateway shared key fingerprint v1: ${setting}`, 16)) as Buffer).toString('hex');
}

/** What a replica notes beside its fingerprint: when (ms), and the fingerprint of its `...Previous` value, if any. */
interface Noted {
  at: number;
  previous?: string;
}

function readNoted(value: string): Noted {
  try {
    const parsed = JSON.parse(value) as Noted;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.at === 'number' ? parsed : { at: Number.NaN };
  } catch {
    return { at: Number.NaN };
  }
}

/**
 * Whether the replicas sharing this Redis hold the same secrets where they must (`cache.key`, the built-in
 * authorization server's `oauth.tokenSecret`, `audit.digestKey`). Each replica notes the fingerprint of each
 * value it holds ({@link keyFingerprint}, never the value), with the time and its `...Previous` value's
 * fingerprint, at start and every {@link SHARED_KEY_CHECK}.intervalMs, from the configuration in force then
 * (`config()`: a live reload may change them). A fingerprint other than its own noted within `inUseMs` is
 * another replica holding another value: an error naming the setting and what the difference breaks, once
 * per fingerprint; not when one of the two is the other's previous value (a rotation under way, on either
 * side of it). A value changed on every replica leaves the old fingerprint unnoted, and it stops counting
 * after `inUseMs`. Replicas started with different values failed in silence before: rate budgets multiplied
 * per replica, users signed out at random (two-replica try-out). A setting not configured counts with the key the
 * replica uses instead (`generated`: a random one of its own, or the token sealing key kept in Redis), so a
 * replica without it beside replicas with it is found too (multi-replica try-out: one without
 * GATEWAY_TOKEN_SECRET sealed tokens the others refused, and nothing was said). Best effort, bounded by
 * `cache.operationTimeoutMs` (at least 1 s) a check; a Redis that does not answer is logged at debug (the
 * stores report an outage), one whose ACL refuses the keys once at warn.
 * @returns a function that stops the checks, and the first check (resolving with the settings found to differ: tests).
 */
export function checkSharedKeys(
  config: () => GatewayConfig,
  log: Logger,
  now: () => number = Date.now,
  generated: () => GeneratedKeys = () => ({}),
): { stop(): void; first: Promise<string[]> } {
  const reported = new Set<string>();
  /** A replica with a setting not configured compares only with fingerprints noted since it started: the one its own
   *  previous run noted with a key of that run's (a restart of a lone replica) is no other replica. */
  const startedAt = now();
  /** Fingerprints by setting and value: scrypt is worked out once per value, not every minute. */
  const fingerprints = new Map<string, Promise<string>>();
  const fingerprint = (setting: string, secret: string) => {
    const key = `${setting}\u0000${secret}`;
    let made = fingerprints.get(key);
    if (made === undefined) fingerprints.set(key, (made = keyFingerprint(setting, secret)));
    return made;
  };
  const check = async (): Promise<string[]> => {
    const current = config();
    if (current.cache.store !== 'redis') return [];
    const ours = generated();
    const settings = SHARED.map((s) => ({ ...s, own: s.value(current, ours), generated: s.value(current, {}) === undefined })).filter(
      (s): s is typeof s & { own: string } => s.own !== undefined,
    );
    if (settings.length === 0) return [];
    const budget = Math.max(current.cache.operationTimeoutMs, 1000);
    const client = createRedisConnection(current.cache, { role: 'keys', connectTimeoutMs: budget, disableOfflineQueue: true });
    client.on('error', () => {});
    const differing: string[] = [];
    try {
      await withinDeadline(
        (async () => {
          await client.connect();
          for (const s of settings) {
            const key = fingerprintsKey(s.setting);
            const mine = await fingerprint(s.setting, s.own);
            const previousValue = s.previous(current);
            const previous = previousValue === undefined ? undefined : await fingerprint(s.setting, previousValue);
            await client.hSet(key, mine, JSON.stringify({ at: now(), ...(previous ? { previous } : {}) } satisfies Noted));
            const seen = await client.hGetAll(key);
            for (const [other, value] of Object.entries(seen)) {
              if (other === mine || other === previous) continue;
              const noted = readNoted(value);
              const age = now() - noted.at;
              if (!(age <= SHARED_KEY_CHECK.inUseMs)) {
                if (!(age <= SHARED_KEY_CHECK.forgetMs)) await client.hDel(key, other);
                continue;
              }
              // A replica already moved to a new value, whose previous is this one's: the rotation under way.
              if (noted.previous === mine) continue;
              if (s.generated && !(noted.at >= startedAt)) continue;
              differing.push(s.setting);
              if (reported.has(`${s.setting} ${other}`)) continue;
              reported.add(`${s.setting} ${other}`);
              log.error(
                { setting: s.setting },
                `${s.setting} (${s.variable}) differs from the value another replica sharing this Redis holds${s.generated ? ' (this replica has none set and uses a key of its own)' : ''}: ${s.lost}. Set the same value on every replica (to rotate it, the old value as the ...PREVIOUS setting)`,
              );
            }
          }
        })(),
        budget,
        () => new DeadlineExceeded('the shared key check', budget),
      );
    } catch (error) {
      const message = (error as Error).message;
      // Refused by an ACL (NOPERM on {mcp-gateway:keys}:*): the check cannot run on this Redis, which an operator can change; once.
      if (/\bNOPERM\b/.test(message) && !reported.has('NOPERM')) {
        reported.add('NOPERM');
        log.warn({ err: message }, 'shared key check: Redis refused it (allow the {mcp-gateway:keys}:* keys); replicas holding different keys are not found');
      } else log.debug({ err: message }, 'shared key check: Redis did not answer; not checked');
    } finally {
      client.destroy();
    }
    return [...new Set(differing)];
  };
  const first = check();
  const interval = setInterval(() => void check(), SHARED_KEY_CHECK.intervalMs);
  interval.unref();
  return { stop: () => clearInterval(interval), first };
}
