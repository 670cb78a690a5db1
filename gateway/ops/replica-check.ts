import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import type { GatewayConfig } from '../../config/types.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';

export interface ReplicaCheckOptions {
  /** Every address `name` resolves to (default: the system resolver, IPv4 and IPv6). */
  resolve?: (name: string) => Promise<string[]>;
  /** This host's own addresses (default: its network interfaces'). */
  ownAddresses?: () => ReadonlySet<string>;
}

/**
 * Whether this gateway is one of several without a shared store, found through `replicas.dnsName`: a
 * name resolving to every ready replica (a Kubernetes headless Service; Docker Compose's service name).
 * Checked at start and every `replicas.checkIntervalMs`; `mcp_gateway_replicas` holds the count (this
 * one included). Without a shared store (`cache.store` memory) each replica keeps its own OAuth grants,
 * rate budgets and task ids, so a caller moving between replicas loses them: when two checks in a row
 * find another replica, one warning is logged (a single check could be a rolling update, whose old pod
 * leaves once the new one is ready). A failed lookup is logged at debug and counts nothing.
 * Returns a function that stops the checks.
 */
export function checkReplicas(config: GatewayConfig, log: Logger, metrics: GatewayMetrics, options: ReplicaCheckOptions = {}): () => void {
  const name = config.replicas.dnsName;
  if (!name) return () => undefined;
  const resolve = options.resolve ?? (async (host: string) => (await lookup(host, { all: true })).map((a) => a.address));
  const own = options.ownAddresses ?? localAddresses;
  let seenBefore = false;
  let warned = false;
  const check = async () => {
    let addresses: string[];
    try {
      addresses = await resolve(name);
    } catch (error) {
      log.debug({ dnsName: name, err: (error as Error).message }, 'replica lookup failed');
      return;
    }
    const mine = own();
    const others = new Set(addresses.filter((a) => !mine.has(a))).size;
    metrics.replicas.set(others + 1);
    const several = others > 0 && config.cache.store !== 'redis';
    if (several && seenBefore && !warned) {
      warned = true;
      log.warn(
        { replicas: others + 1, dnsName: name },
        'WARNING: this gateway is one of several replicas and they share no store (set cache.redisUrl / REDIS_URL): each keeps its own OAuth grants, rate budgets and task ids, so callers moving between replicas lose them',
      );
    }
    seenBefore = several;
  };
  void check();
  const timer = setInterval(() => void check(), config.replicas.checkIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

function localAddresses(): ReadonlySet<string> {
  return new Set(
    Object.values(networkInterfaces())
      .flat()
      .flatMap((i) => (i ? [i.address] : [])),
  );
}
