import { Keyv } from 'keyv';
import KeyvRedis from '@keyv/redis';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../config/types.ts';
import { outageLog, type Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { createRedisConnection } from './redis-connection.ts';
import { DeadlineExceeded, withinDeadline } from './deadline.ts';

/**
 * A keyv-backed store that never throws and never hangs: every operation has a time budget, and a
 * failed or late one resolves as a miss (get) or a no-op (set/delete), logged and counted in
 * `mcp_cache_store_errors_total`. Callers fall back to a direct lookup, so a store outage degrades to
 * extra upstream traffic, never to errors for callers (fail-open by design). After a failure the
 * store is bypassed for {@link BYPASS_AFTER_FAILURE_MS}, so an outage does not add the operation
 * budget to every request.
 */
export interface KvStore {
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Drops expired entries now (memory store; Redis expires keys itself). */
  sweep(): void;
  close(): Promise<void>;
}

export interface KvStoreOptions {
  /** Cache name: key namespace and metric label (`scopes`, `catalog`). */
  name: string;
  maxEntries: number;
  /** Longest TTL the store will be asked for; bounds the memory store's own expiry. */
  ttlMs: number;
  metrics: GatewayMetrics;
  log: Logger;
}

const BYPASS_AFTER_FAILURE_MS = 5000;

/** Builds the store selected by `cache.store`: a bounded in-memory LRU, or Redis via @keyv/redis (connection: redis-connection.ts). */
export function createKvStore(cache: GatewayConfig['cache'], options: KvStoreOptions): KvStore {
  const memory = cache.store === 'memory' ? new LRUCache<string, object>({ max: options.maxEntries, ttl: Math.max(options.ttlMs, 1) }) : undefined;
  const keyv: Keyv = memory ? new Keyv({ store: mapAdapter(memory), namespace: options.name }) : redisKeyv(cache, `mcp-gateway:${options.name}`);
  let bypassUntil = 0;
  const outage = outageLog(options.log, {
    failed: 'cache store operation failed; falling back to direct lookups',
    recovered: 'cache store answering again',
  });
  const failed = (op: string, error: unknown) => {
    options.metrics.cacheStoreErrors.inc({ cache: options.name, op });
    bypassUntil = Date.now() + BYPASS_AFTER_FAILURE_MS;
    outage.failed({ cache: options.name, op, err: (error as Error)?.message });
  };
  keyv.on('error', (error: unknown) => failed('connection', error));
  const bounded = async <T>(op: string, run: () => Promise<T>): Promise<T | undefined> => {
    if (Date.now() < bypassUntil) return undefined;
    const before = outage.count();
    try {
      const answer = await withinDeadline(run(), cache.operationTimeoutMs, () => new DeadlineExceeded(op, cache.operationTimeoutMs));
      // Answered by the store only when no error was reported meanwhile (an OOM or READONLY answer resolves too).
      if (outage.count() === before && op !== 'close') outage.recovered({ cache: options.name });
      return answer;
    } catch (error) {
      failed(op, error);
      return undefined;
    }
  };
  return {
    get: <T>(key: string) => bounded('get', () => keyv.get<T>(key)) as Promise<T | undefined>,
    set: async (key, value, ttlMs) => void (await bounded('set', () => keyv.set(key, value, ttlMs))),
    delete: async (key) => void (await bounded('delete', () => keyv.delete(key))),
    sweep: () => void memory?.purgeStale(),
    close: async () => {
      bypassUntil = 0;
      // A store that is down may never answer a disconnect: bound it like any other operation.
      await bounded('close', () => keyv.disconnect());
    },
  };
}

/** What @keyv/redis's createKeyv builds, over the gateway's own connection (TLS, Sentinel, Cluster, name). */
function redisKeyv(cache: GatewayConfig['cache'], namespace: string): Keyv {
  const connection = createRedisConnection(cache, { role: 'cache', connectTimeoutMs: Math.max(cache.operationTimeoutMs, 1000) });
  const adapter = new KeyvRedis(connection, { namespace, throwOnConnectError: false, connectionTimeout: cache.operationTimeoutMs });
  return new Keyv({ store: adapter, namespace, useKeyPrefix: false });
}

/** The Map face keyv expects (lru-cache's `set` takes an options object where keyv passes a TTL number). */
function mapAdapter(lru: LRUCache<string, object>) {
  return {
    get: (key: string) => lru.get(key),
    set: (key: string, value: object) => void lru.set(key, value),
    delete: (key: string) => lru.delete(key),
    has: (key: string) => lru.has(key),
    clear: () => lru.clear(),
  };
}
