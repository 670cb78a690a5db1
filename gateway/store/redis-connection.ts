import { readFileSync } from 'node:fs';
import { createClient, createCluster, createSentinel, type RedisClientOptions } from '@redis/client';
import type { GatewayConfig } from '../../config/types.ts';
import { DeadlineExceeded, withinDeadline } from './deadline.ts';

/** A node-redis connection of any topology: one server, a Cluster, or a master found through Sentinel. */
export type RedisConnection = ReturnType<typeof createClient> | ReturnType<typeof createCluster> | ReturnType<typeof createSentinel>;

export interface RedisConnectionOptions {
  /** What the connection is for, appended to `cache.redis.clientName` (`mcp-gateway:cache`): CLIENT LIST tells the users apart. */
  role: string;
  /** Budget of one connection attempt, ms. */
  connectTimeoutMs: number;
  /** Commands issued while disconnected fail at once instead of queueing (node-redis's offline queue). */
  disableOfflineQueue?: boolean;
}

/** Reconnect backoff of every gateway connection: 100 ms doubling, at most 2 s between attempts. */
const reconnectStrategy = (retries: number) => Math.min(100 * 2 ** retries, 2000);

/**
 * The one place the gateway's Redis connections are made (the cache store, rate-limit counters, the
 * OAuth store), so each gets what `cache.redisUrl` and `cache.redis` say, through node-redis's own
 * support: `rediss://` for TLS, with `cache.redis.tls` files (CA bundle, client certificate and key, read
 * once here) and server name; `cache.redis.sentinel` (the master `masterName` found through the
 * sentinels `nodes`) or `cache.redis.cluster` (seed `nodes`, besides the URL); a connection name
 * (CLIENT SETNAME). Credentials come from the URL (`rediss://user:password@host:port/db`), and in
 * Sentinel mode serve the master and the sentinels alike. Not connected yet: the caller connects.
 * @throws Error naming the key when a TLS file cannot be read.
 */
export function createRedisConnection(cache: GatewayConfig['cache'], options: RedisConnectionOptions): RedisConnection {
  const url = new URL(cache.redisUrl!);
  const { tls, sentinel, cluster, clientName } = cache.redis;
  const secure = url.protocol === 'rediss:';
  const socket = {
    connectTimeout: options.connectTimeoutMs,
    reconnectStrategy,
    ...(secure
      ? {
          tls: true as const,
          ...(tls.caFile ? { ca: readTlsFile(tls.caFile, 'cache.redis.tls.caFile') } : {}),
          ...(tls.certFile ? { cert: readTlsFile(tls.certFile, 'cache.redis.tls.certFile') } : {}),
          ...(tls.keyFile ? { key: readTlsFile(tls.keyFile, 'cache.redis.tls.keyFile') } : {}),
          ...(tls.serverName ? { servername: tls.serverName } : {}),
        }
      : {}),
  };
  const identity = {
    name: `${clientName}:${options.role}`,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(options.disableOfflineQueue ? { disableOfflineQueue: true } : {}),
  };
  if (sentinel) {
    const database = url.pathname.length > 1 ? { database: Number(url.pathname.slice(1)) } : {};
    const clientOptions = { ...identity, ...database, socket } as RedisClientOptions;
    return createSentinel({
      name: sentinel.masterName,
      sentinelRootNodes: sentinel.nodes.map(hostPort),
      nodeClientOptions: clientOptions as never,
      sentinelClientOptions: { ...identity, socket } as never,
    });
  }
  if (cluster) {
    // Cluster mode has one database (0): a path in the URL is refused by Redis itself at SELECT.
    return createCluster({ rootNodes: [cache.redisUrl!, ...cluster.nodes].map((node) => ({ url: node })), defaults: { ...identity, socket } as never });
  }
  return createClient({ url: cache.redisUrl, ...identity, socket });
}

/**
 * Replies of a Redis that was reached and refused what the configuration asks of it: its credentials or
 * rights, or the database the URL names. A configuration error waiting cannot fix, not an outage.
 */
export const REFUSED_BY_REDIS =
  /\b(WRONGPASS|NOAUTH|NOPERM)\b|invalid username-password|invalid password|called without any password configured|DB index is out of range|invalid DB index/i;

/**
 * One connection attempt to Redis as `cache` says, within `budgetMs`: what Redis said if it was reached
 * and refused the connection ({@link REFUSED_BY_REDIS}), else undefined (connected, or not reached: an
 * outage the stores ride out with their reconnects). Nothing is kept open.
 */
export async function redisRefusal(cache: GatewayConfig['cache'], budgetMs: number): Promise<string | undefined> {
  const client = createRedisConnection(cache, { role: 'probe', connectTimeoutMs: budgetMs, disableOfflineQueue: true });
  let refusal: string | undefined;
  client.on('error', (error: unknown) => {
    const message = (error as Error)?.message ?? String(error);
    if (REFUSED_BY_REDIS.test(message)) refusal ??= message;
  });
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, budgetMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      client.on('error', () => {
        if (refusal) done();
      });
      client.connect().then(done, done);
    });
  } finally {
    client.destroy();
  }
  return refusal;
}

/**
 * Closes `client` within `ms`: its pending commands answered first when Redis answers in time, then the
 * connection dropped (`destroy()`), in any case. close() waits for Redis, and a Redis that accepts the
 * connection but never answers never does (operator try-out: SIGTERM never finished, the rate limiter's
 * close waiting). Never throws.
 */
export async function closeRedisConnection(client: RedisConnection, ms: number): Promise<void> {
  if (!client.isOpen) return;
  // Not close() then destroy(): close() marks the socket closed at once, and destroy() then throws before it drops the
  // socket (review: a silent Redis kept it open). A PING answered means every command before it was: nothing is lost.
  await withinDeadline(drained(client), ms, () => new DeadlineExceeded('closing the Redis connection', ms)).catch(() => undefined);
  try {
    client.destroy();
  } catch {
    // already closed
  }
}

/** Resolves once Redis has answered every command sent on `client` before it (a PING, in order on one connection). */
function drained(client: RedisConnection): Promise<unknown> {
  return 'ping' in client && typeof client.ping === 'function' ? (client.ping as () => Promise<unknown>)() : Promise.resolve();
}

function readTlsFile(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${key}: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** `host:port` (a bracketed IPv6 host too) as node-redis's `{ host, port }`; the port defaults to Sentinel's 26379. */
function hostPort(node: string): { host: string; port: number } {
  const { hostname, port } = new URL(`redis://${node}`);
  return { host: hostname.replace(/^\[(.*)\]$/, '$1'), port: port ? Number(port) : 26379 };
}
