/**
 * What a live reload does with each part of the running gateway, decided from the old and the new
 * configuration alone (pure). The new configuration has been validated by loadConfig already.
 *
 * - Keys bound to a socket (`listen.*`, `metrics.port`, and the Node server options the listeners were
 *   created with: `server.*`, `limits.headerBytes`, http/node-server.ts) cannot change without a
 *   restart: the reload is refused, naming the key, and the old configuration keeps serving.
 * - Each upstream of the new configuration is matched by name with the old one: `keep` when nothing of
 *   it changed (connection and catalogue reused), `repolicy` when only policy or per-call keys changed
 *   ({@link UPSTREAM_KEYS}: the connection, and a stdio server's process, are kept, the catalogue rebuilt
 *   under the new rules and the new settings handed to the client), `replace` when a connection key
 *   changed or the upstream is new (a new connection; the old one closes once the
 *   requests in flight on it are done). Old upstreams absent from the new configuration close likewise.
 * - The pin store and the rate limiter's counters are handed over unless where they live changed; with
 *   the pin store, the pin guard's state (what is held and why, catalog/pin-guard.ts), and a kept
 *   upstream's catalogue is judged by the new runtime's guard from then on.
 * - Everything else (scopes, cache, credentials, compact, limits, security, publicUrl, console, ...) is
 *   read per request from the new configuration by the new runtime.
 */
import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig, UpstreamConfig } from '../../config/types.ts';

/**
 * Every upstream key, classified (a new key does not compile until it is): `connection` keys define the
 * connection or the machinery built with it (the process or URL and what goes on every request of the
 * transport, the socket pool, the session pool, the reconnect backoff, the health probe's timer): a
 * change opens a new connection (for stdio, a new process: its state is lost). Every other key is policy
 * or a per-call setting, read from the new configuration on the same connection: the catalogue and its
 * access rules (`scopes`, `scopeRules`, ...), what search reads (`tools`), the rate budgets, and the
 * per-call deadline `timeoutMs` (UpstreamClient.reconfigure).
 */
export const UPSTREAM_KEYS = {
  name: 'connection',
  url: 'connection',
  command: 'connection',
  args: 'connection',
  env: 'connection',
  cwd: 'connection',
  headers: 'connection',
  forwardCredentials: 'connection',
  connections: 'connection',
  sessions: 'connection',
  restart: 'connection',
  health: 'connection',
  timeoutMs: 'in place',
  metaKey: 'in place',
  scopeRules: 'in place',
  scopes: 'in place',
  readOnlyOverrides: 'in place',
  anchors: 'in place',
  maxAnchors: 'in place',
  categories: 'in place',
  outputSchemas: 'in place',
  tools: 'in place',
  catalog: 'in place',
  rateLimits: 'in place',
} as const satisfies Record<keyof UpstreamConfig, 'connection' | 'in place'>;

/** The keys whose change opens a new connection to the upstream (the rest apply in place). */
export const CONNECTION_KEYS = (Object.keys(UPSTREAM_KEYS) as (keyof UpstreamConfig)[]).filter((key) => UPSTREAM_KEYS[key] === 'connection');

export type UpstreamDecision = 'keep' | 'repolicy' | 'replace';

export interface ReloadPlan {
  /** By upstream name, in the new configuration's order. */
  upstreams: { name: string; decision: UpstreamDecision }[];
  /** Old upstreams that the new configuration no longer has. */
  removed: string[];
  /** Top-level keys whose value changed (for the log line). */
  changed: string[];
  /**
   * `keep`: the new runtime takes over the pin store (the in-memory one holds the only copy of its pins);
   * `replace`: the store's location changed (`cache.store`, `cache.redisUrl`, `cache.redis`,
   * `cache.operationTimeoutMs`, `pinning.lockFile`), so the new runtime opens its own.
   */
  pinStore: 'keep' | 'replace';
  /**
   * `keep`: the new runtime takes over the rate limiter, so a reload does not hand every budget a fresh
   * window (the console's and the sign-in's guessing limits included; counters are per budget shape, so
   * a budget whose limit changed starts its own); `replace`: where the counters live changed
   * (`rateLimits.store`, `cache.redisUrl`, `cache.redis`).
   */
  rateLimiter: 'keep' | 'replace';
}

/** A key that a reload cannot change; its message reads like loadConfig's (`<key path>: <why>`). */
export class ReloadRefused extends Error {
  constructor(
    readonly keyPath: string,
    detail: string,
  ) {
    super(`configuration not reloaded: ${keyPath}: ${detail}; the running configuration keeps serving`);
    this.name = 'ReloadRefused';
  }
}

/**
 * @throws ReloadRefused when a socket-bound key changed (`listen.host`, `listen.port`, `metrics.port`,
 *   `server.headersTimeoutMs` / `requestTimeoutMs` / `keepAliveTimeoutMs` / `sendTimeoutMs`, `limits.headerBytes`).
 */
export function planReload(old: GatewayConfig, next: GatewayConfig): ReloadPlan {
  for (const key of ['host', 'port'] as const) {
    if (old.listen[key] !== next.listen[key])
      throw new ReloadRefused(`listen.${key}`, `changed from ${old.listen[key]} to ${next.listen[key]}, which needs a restart`);
  }
  if (old.metrics.port !== next.metrics.port)
    throw new ReloadRefused(
      'metrics.port',
      `changed from ${old.metrics.port ?? '(main port)'} to ${next.metrics.port ?? '(main port)'}, which needs a restart`,
    );
  for (const key of ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'sendTimeoutMs'] as const) {
    if (old.server[key] !== next.server[key])
      throw new ReloadRefused(`server.${key}`, `changed from ${old.server[key]} to ${next.server[key]}, which needs a restart (a listener option)`);
  }
  if (old.limits.headerBytes !== next.limits.headerBytes)
    throw new ReloadRefused(
      'limits.headerBytes',
      `changed from ${old.limits.headerBytes} to ${next.limits.headerBytes}, which needs a restart (a listener option)`,
    );
  const before = new Map(old.upstreams.map((u) => [u.name, u]));
  // A kept catalogue cache was built under the old cache settings: rebuild it under the new ones.
  const cacheChanged = !isDeepStrictEqual(old.cache, next.cache);
  const upstreams = next.upstreams.map((u) => {
    const decision = decide(before.get(u.name), u);
    return { name: u.name, decision: decision === 'keep' && cacheChanged ? ('repolicy' as const) : decision };
  });
  const names = new Set(next.upstreams.map((u) => u.name));
  const removed = old.upstreams.filter((u) => !names.has(u.name)).map((u) => u.name);
  const keys = new Set([...Object.keys(old), ...Object.keys(next)]) as Set<keyof GatewayConfig>;
  const changed = [...keys].filter((key) => !isDeepStrictEqual(old[key], next[key]));
  const store = (c: GatewayConfig) => [c.cache.store, c.cache.redisUrl, c.cache.redis, c.cache.operationTimeoutMs, c.pinning.lockFile];
  const counters = (c: GatewayConfig) => [c.rateLimits.store, c.cache.store, c.cache.redisUrl, c.cache.redis];
  return {
    upstreams,
    removed,
    changed,
    pinStore: isDeepStrictEqual(store(old), store(next)) ? 'keep' : 'replace',
    rateLimiter: isDeepStrictEqual(counters(old), counters(next)) ? 'keep' : 'replace',
  };
}

function decide(old: UpstreamConfig | undefined, next: UpstreamConfig): UpstreamDecision {
  if (!old) return 'replace';
  if (isDeepStrictEqual(old, next)) return 'keep';
  return sameConnection(old, next) ? 'repolicy' : 'replace';
}

/** Whether `a` and `b` agree on every connection key ({@link UPSTREAM_KEYS}). */
export function sameConnection(a: UpstreamConfig, b: UpstreamConfig): boolean {
  return CONNECTION_KEYS.every((key) => isDeepStrictEqual(a[key], b[key]));
}
