import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../../config/types.ts';
import { createRedisConnection } from '../../store/redis-connection.ts';

/**
 * The authorization server's state: string values with a TTL, and sets (the index of every artifact
 * issued from one grant, RFC 6749 §10.5/OAuth 2.1 §4.3.1 "revoke the family"). Redis when the gateway
 * has one (every replica sees every grant, code and refresh token), else a bounded in-process LRU.
 * Unlike the gateway's cache store this one is not fail-open: an unreachable Redis makes a lookup
 * throw, which the callers turn into "token not valid" (401), never into access.
 */
export interface OAuthStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | undefined>;
  /** `ttlSeconds` undefined: no expiry (registered clients). */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Stores `value` unless the key exists; returns what the key holds afterwards (first writer wins across replicas). */
  setIfAbsent(key: string, value: string): Promise<string>;
  delete(key: string): Promise<void>;
  addToSet(key: string, member: string, ttlSeconds?: number): Promise<void>;
  members(key: string): Promise<string[]>;
  close(): Promise<void>;
}

const PREFIX = 'mcp-gateway:oauth:';

/**
 * Redis at `cache.redisUrl`, connected as `cache.redis` says (gateway/store/redis-connection.ts: TLS,
 * Sentinel, Cluster, connection name). Connecting is bounded by
 * `operationTimeoutMs` x 10 (at least 5 s) and throws when Redis cannot be reached: the gateway does not
 * start an authorization server it cannot keep state for. Every later operation has the
 * `operationTimeoutMs` budget (at least 1 s) and throws past it, which callers answer as "token not
 * valid right now" (fail closed), never as access; node-redis keeps reconnecting meanwhile.
 */
export async function createRedisStore(cache: GatewayConfig['cache']): Promise<OAuthStore> {
  const budget = Math.max(cache.operationTimeoutMs, 1000);
  const client = createRedisConnection(cache, { role: 'oauth', connectTimeoutMs: budget, disableOfflineQueue: true });
  // Errors surface on the operations that meet them; the event only keeps node-redis from throwing globally.
  client.on('error', () => undefined);
  const bounded = async <T>(run: () => Promise<T>, ms = budget): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        run(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Redis operation exceeded ${ms} ms`)), ms))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    await bounded(async () => void (await client.connect()), Math.max(budget * 10, 5000));
  } catch (error) {
    client.destroy();
    throw new Error(`oauth: cannot reach Redis at cache.redisUrl (${(error as Error).message})`);
  }
  const ttl = (seconds?: number) => (seconds && seconds > 0 ? { EX: Math.ceil(seconds) } : {});
  return {
    kind: 'redis',
    get: async (key) => (await bounded(() => client.get(PREFIX + key))) ?? undefined,
    set: async (key, value, ttlSeconds) => void (await bounded(() => client.set(PREFIX + key, value, ttl(ttlSeconds)))),
    setIfAbsent: async (key, value) => {
      await bounded(() => client.set(PREFIX + key, value, { NX: true }));
      return (await bounded(() => client.get(PREFIX + key))) ?? value;
    },
    delete: async (key) => void (await bounded(() => client.del(PREFIX + key))),
    addToSet: async (key, member, ttlSeconds) => {
      await bounded(() => client.sAdd(PREFIX + key, member));
      // The set lives as long as its longest-lived member (EXPIRE GT treats "no expiry" as infinite, so compare here).
      if (ttlSeconds && ttlSeconds > 0 && (await bounded(() => client.ttl(PREFIX + key))) < Math.ceil(ttlSeconds))
        await bounded(() => client.expire(PREFIX + key, Math.ceil(ttlSeconds)));
    },
    members: async (key) => bounded(() => client.sMembers(PREFIX + key)),
    close: async () => {
      // close() waits for Redis to answer; a Redis that went away never does. destroy() throws once closed.
      try {
        await bounded(() => client.close());
      } catch {
        try {
          client.destroy();
        } catch {
          // already closed
        }
      }
    },
  };
}

/** The in-process store: at most `maxEntries` keys (least recently used evicted), per-key TTLs. */
export function createMemoryStore(maxEntries: number): OAuthStore {
  const values = new LRUCache<string, string>({ max: maxEntries, ttlAutopurge: false });
  const sets = new LRUCache<string, Set<string>>({ max: maxEntries });
  const ttl = (seconds?: number) => (seconds && seconds > 0 ? { ttl: Math.ceil(seconds * 1000) } : {});
  return {
    kind: 'memory',
    get: async (key) => values.get(key),
    set: async (key, value, ttlSeconds) => void values.set(key, value, ttl(ttlSeconds)),
    setIfAbsent: async (key, value) => {
      if (!values.has(key)) values.set(key, value);
      return values.get(key)!;
    },
    delete: async (key) => void values.delete(key),
    addToSet: async (key, member, ttlSeconds) => {
      const set = sets.get(key) ?? new Set<string>();
      set.add(member);
      sets.set(key, set, ttl(ttlSeconds));
    },
    members: async (key) => [...(sets.get(key) ?? [])],
    close: async () => {
      values.clear();
      sets.clear();
    },
  };
}
