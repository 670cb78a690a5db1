import { LRUCache } from 'lru-cache';
import { createClient } from '@keyv/redis';

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

/** Redis (node-redis through @keyv/redis's re-export) at `url`; connects before resolving. */
export async function createRedisStore(url: string, connectTimeoutMs: number): Promise<OAuthStore> {
  const client = createClient({ url, socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: (retries: number) => Math.min(retries * 100, 2000) } });
  // Errors surface on the operations that meet them; the event only keeps node-redis from throwing globally.
  client.on('error', () => undefined);
  await client.connect();
  const ttl = (seconds?: number) => (seconds && seconds > 0 ? { EX: Math.ceil(seconds) } : {});
  return {
    kind: 'redis',
    get: async (key) => (await client.get(PREFIX + key)) ?? undefined,
    set: async (key, value, ttlSeconds) => void (await client.set(PREFIX + key, value, ttl(ttlSeconds))),
    setIfAbsent: async (key, value) => {
      await client.set(PREFIX + key, value, { NX: true });
      return (await client.get(PREFIX + key)) ?? value;
    },
    delete: async (key) => void (await client.del(PREFIX + key)),
    addToSet: async (key, member, ttlSeconds) => {
      await client.sAdd(PREFIX + key, member);
      // The set lives as long as its longest-lived member (EXPIRE GT treats "no expiry" as infinite, so compare here).
      if (ttlSeconds && ttlSeconds > 0 && (await client.ttl(PREFIX + key)) < Math.ceil(ttlSeconds)) await client.expire(PREFIX + key, Math.ceil(ttlSeconds));
    },
    members: async (key) => client.sMembers(PREFIX + key),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
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
