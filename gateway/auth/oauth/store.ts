import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../../config/types.ts';
import { closeRedisConnection, createRedisConnection, REFUSED_BY_REDIS } from '../../store/redis-connection.ts';
import { DeadlineExceeded, withinDeadline } from '../../store/deadline.ts';

/**
 * How a record may leave the in-process store before its TTL:
 * - `kept`: never (grants, codes, refresh tokens, consumed markers, revocation marks, the index of a
 *   grant's artifacts, clients that completed an authorization): a flood of anything else cannot evict
 *   them, and they are bounded by the number of live tokens, since each expires with what it guards;
 * - `bounded`: under `oauth.memoryStoreBytes`, least recently used first (registrations not used yet,
 *   sign-in pages and their sessions): losing one means "start again from the application".
 * Redis keeps both until their TTL.
 */
export type Tier = 'kept' | 'bounded';

/**
 * The authorization server's state: string values and sets (the index of every artifact issued from
 * one grant, RFC 6749 §10.5/OAuth 2.1 §4.3.1 "revoke the family"), every one with a TTL (seconds,
 * at least 1: nothing is stored for ever). Redis when the gateway has one (every replica sees every
 * grant, code and refresh token), else in process. Unlike the gateway's cache store this one is not
 * fail-open: an unreachable Redis makes an operation throw, which callers answer as "cannot be checked
 * right now" (503), never as access.
 */
export interface OAuthStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | undefined>;
  /** Stores `value` for `ttlSeconds`; `tier` (default `kept`) as {@link Tier}. */
  set(key: string, value: string, ttlSeconds: number, tier?: Tier): Promise<void>;
  /**
   * Stores `value` for `ttlSeconds` unless the key exists, atomically on every store (Redis `SET NX`):
   * true when this call stored it. Two replicas claiming one key at once: exactly one gets true.
   */
  claim(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  /** What the key holds, storing `value` first when it holds nothing (first writer wins); its TTL restarts at `ttlSeconds` either way. */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<string>;
  delete(key: string): Promise<void>;
  /** Adds `member`; the set lives at least `ttlSeconds` from now (as long as its longest-lived member). */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  members(key: string): Promise<string[]>;
  /** Removes `member` from the set (nothing when it is not there). */
  removeFromSet(key: string, member: string): Promise<void>;
  /** Why the store cannot be used now (Redis not connected), for `/readyz`; undefined while it can. */
  unreachable?(): string | undefined;
  close(): Promise<void>;
}

/**
 * The store could not be reached, or did not answer within its budget (Redis down or slow): nothing was
 * decided from it. The endpoints answer it as a pause, never as a refusal: 503 with Retry-After and the
 * RFC 6749 code `temporarily_unavailable` (provider.ts), a sign-in page saying to try again (interaction.ts).
 */
export class OAuthStoreUnavailable extends Error {
  constructor(
    cause: unknown,
    /** When to ask again: the store's operation budget, in whole seconds (at least 1). */
    readonly retryAfterSeconds: number,
  ) {
    super((cause as Error)?.message ?? String(cause), { cause });
    this.name = 'OAuthStoreUnavailable';
  }
}

/** The {@link OAuthStoreUnavailable} behind `error` (itself or one of its causes), if any. */
export function storeUnavailable(error: unknown): OAuthStoreUnavailable | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof OAuthStoreUnavailable) return e;
  return undefined;
}

const PREFIX = 'mcp-gateway:oauth:';
/** How long the store may go without an answered operation before a readiness check pings Redis (ms). */
const QUIET_PROBE_MS = 5000;
const ttlOf = (seconds: number) => Math.max(1, Math.ceil(seconds));

/**
 * Redis at `cache.redisUrl`, connected as `cache.redis` says (gateway/store/redis-connection.ts: TLS,
 * Sentinel, Cluster, connection name). Resolves after the first connection attempt (bounded by the
 * budget), connected or not: a Redis that is down when the gateway starts is an outage like any later
 * one (node-redis reconnects with backoff; {@link OAuthStore.unreachable} says so to `/readyz`), not a
 * reason to exit (an orchestrator would restart the process for as long as the outage lasts).
 * Every operation has the `operationTimeoutMs` budget (at least 1 s) and throws
 * {@link OAuthStoreUnavailable} past it, or at once while Redis is not connected.
 * Every key is written with an expiry (`EX`), so Redis holds nothing the gateway would not.
 * @throws Error when Redis answered and refused the credentials or rights (WRONGPASS, NOAUTH, NOPERM).
 */
export async function createRedisStore(cache: GatewayConfig['cache']): Promise<OAuthStore> {
  const budget = Math.max(cache.operationTimeoutMs, 1000);
  const client = createRedisConnection(cache, { role: 'oauth', connectTimeoutMs: budget, disableOfflineQueue: true });
  let lastError: string | undefined;
  // Errors surface on the operations that meet them; the event also keeps node-redis from throwing globally.
  client.on('error', (error: unknown) => void (lastError = (error as Error)?.message ?? String(error)));
  client.on('ready', () => void (lastError = undefined));
  const retryAfterSeconds = Math.ceil(budget / 1000);
  /**
   * Set when an operation ran out of its budget on a connection node-redis still counts as ready (a Redis
   * that hangs, SIGSTOP or a stalled network, rather than refusing): cleared by the next operation that
   * answers. A hung Redis kept `/readyz` ready while every token was answered 503 (two-replica try-out).
   */
  let silentSince: number | undefined;
  /** When an operation last got an answer: readiness asks Redis itself once none has for {@link QUIET_PROBE_MS}. */
  let answeredAt = Date.now();
  let pinging = false;
  /** Asks Redis again in the background after a timeout: the next /readyz reads the answer (one stall is no outage). */
  const recheck = () => {
    if (pinging) return;
    pinging = true;
    bounded(() => client.ping())
      .catch(() => undefined)
      .finally(() => (pinging = false));
  };
  const bounded = async <T>(run: () => Promise<T>, ms = budget): Promise<T> => {
    try {
      const answer = await withinDeadline(run(), ms, () => new DeadlineExceeded('Redis operation', ms));
      silentSince = undefined;
      answeredAt = Date.now();
      return answer;
    } catch (error) {
      if (error instanceof DeadlineExceeded) {
        silentSince ??= Date.now();
        recheck();
      }
      throw new OAuthStoreUnavailable(error, retryAfterSeconds);
    }
  };
  // node-redis's connect() resolves only once Redis answers (it retries for ever): wait for the first attempt.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, budget);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('error', done);
    client.connect().then(done, done);
  });
  if (lastError && REFUSED_BY_REDIS.test(lastError)) {
    client.destroy();
    throw new Error(`oauth: Redis at cache.redisUrl refused the connection (${lastError})`);
  }
  return {
    kind: 'redis',
    get: async (key) => (await bounded(() => client.get(PREFIX + key))) ?? undefined,
    set: async (key, value, ttlSeconds) => void (await bounded(() => client.set(PREFIX + key, value, { EX: ttlOf(ttlSeconds) }))),
    claim: async (key, value, ttlSeconds) => (await bounded(() => client.set(PREFIX + key, value, { NX: true, EX: ttlOf(ttlSeconds) }))) === 'OK',
    setIfAbsent: async (key, value, ttlSeconds) => {
      await bounded(() => client.set(PREFIX + key, value, { NX: true, EX: ttlOf(ttlSeconds) }));
      await bounded(() => client.expire(PREFIX + key, ttlOf(ttlSeconds)));
      return (await bounded(() => client.get(PREFIX + key))) ?? value;
    },
    delete: async (key) => void (await bounded(() => client.del(PREFIX + key))),
    addToSet: async (key, member, ttlSeconds) => {
      await bounded(() => client.sAdd(PREFIX + key, member));
      // The set lives as long as its longest-lived member (a new set has no expiry yet: TTL -1).
      const ttl = await bounded(() => client.ttl(PREFIX + key));
      if (ttl < ttlOf(ttlSeconds)) await bounded(() => client.expire(PREFIX + key, ttlOf(ttlSeconds)));
    },
    members: async (key) => bounded(() => client.sMembers(PREFIX + key)),
    removeFromSet: async (key, member) => void (await bounded(() => client.sRem(PREFIX + key, member))),
    unreachable: () => {
      if (!('isReady' in client ? client.isReady : client.isOpen))
        return `the OAuth store (Redis at cache.redisUrl) cannot be reached${lastError ? ` (${lastError})` : ''}`;
      if (silentSince === undefined) {
        // A Redis that hangs without OAuth traffic was seen only when the next sign-in met it (SRE try-out): a readiness
        // check after a quiet spell pings it in the background, and the check after that reads the answer.
        if (Date.now() - answeredAt > QUIET_PROBE_MS) recheck();
        return undefined;
      }
      // Asked again in the background (a replica out of its load balancer gets no request to clear it): the next check reads the answer.
      recheck();
      return `the OAuth store (Redis at cache.redisUrl) does not answer: an operation ran out of its ${budget} ms budget ${Math.round((Date.now() - silentSince) / 1000)} s ago`;
    },
    close: () => closeRedisConnection(client, budget),
  };
}

/** How often the in-process store drops expired `kept` records. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The in-process store: `kept` records and sets in maps emptied of expired entries every
 * {@link SWEEP_INTERVAL_MS} (and ignored once expired); `bounded` records in an LRU of at most
 * `maxBytes` (key and value length, plus an estimate of the entry's overhead).
 */
export function createMemoryStore(maxBytes: number): OAuthStore {
  const kept = new Map<string, { value: string; expires: number }>();
  const sets = new Map<string, { members: Set<string>; expires: number }>();
  const bounded = new LRUCache<string, string>({ maxSize: maxBytes, sizeCalculation: (value, key) => key.length + value.length + 64 });
  const expiry = (seconds: number) => Date.now() + ttlOf(seconds) * 1000;
  const live = <T extends { expires: number }>(entry: T | undefined) => (entry && entry.expires > Date.now() ? entry : undefined);
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [key, entry] of kept) if (entry.expires <= now) kept.delete(key);
    for (const [key, entry] of sets) if (entry.expires <= now) sets.delete(key);
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  const get = (key: string) => live(kept.get(key))?.value ?? bounded.get(key);
  const set = (key: string, value: string, ttlSeconds: number, tier: Tier = 'kept') => {
    if (tier === 'kept') {
      bounded.delete(key);
      kept.set(key, { value, expires: expiry(ttlSeconds) });
    } else {
      kept.delete(key);
      bounded.set(key, value, { ttl: ttlOf(ttlSeconds) * 1000 });
    }
  };
  return {
    kind: 'memory',
    get: async (key) => get(key),
    set: async (key, value, ttlSeconds, tier) => set(key, value, ttlSeconds, tier),
    claim: async (key, value, ttlSeconds) => {
      if (get(key) !== undefined) return false;
      set(key, value, ttlSeconds);
      return true;
    },
    setIfAbsent: async (key, value, ttlSeconds) => {
      const held = get(key) ?? value;
      set(key, held, ttlSeconds);
      return held;
    },
    delete: async (key) => {
      kept.delete(key);
      bounded.delete(key);
      sets.delete(key);
    },
    addToSet: async (key, member, ttlSeconds) => {
      const entry = live(sets.get(key)) ?? { members: new Set<string>(), expires: 0 };
      entry.members.add(member);
      entry.expires = Math.max(entry.expires, expiry(ttlSeconds));
      sets.set(key, entry);
    },
    members: async (key) => [...(live(sets.get(key))?.members ?? [])],
    removeFromSet: async (key, member) => void sets.get(key)?.members.delete(member),
    close: async () => {
      clearInterval(sweeper);
      kept.clear();
      sets.clear();
      bounded.clear();
    },
  };
}
