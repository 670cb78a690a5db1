import type { Context } from 'koa';
import type { GatewayRuntime } from '../runtime-state.ts';

/** `GET /healthz`: the process is alive and serving HTTP. */
export function healthz(ctx: Context): void {
  ctx.body = { status: 'ok' };
}

/**
 * `GET /readyz`: 200 `ready` when every upstream's catalogue has been fetched and is fresh enough to
 * serve; 200 `degraded` naming the upstreams that are not (down, never fetched, or stale with the last
 * error) while at least one other serves; 503 `not_ready` when none does; 503 `draining` once a
 * graceful shutdown has begun (the gateway still serves while load balancers take it out). Tools on
 * hold (catalog/pin-guard.ts) are counted under `held`, one `{ upstream, reason, count }` per upstream and reason (their names and
 * changes on the console and in `pins list` only), without changing the status: the gateway serves everything else, and an operator must act, not a
 * load balancer. Except tools held `unverified` (the Redis pin store could not be read, so their pins
 * are unknown): then 503 `not_ready` with a reason naming the pin store, since the replica serves none
 * of them until it can read it (a load balancer sends the traffic to a replica that can); and likewise
 * while the built-in authorization server's Redis store cannot be reached (or, without
 * `oauth.tokenSecret`, the server waits for it to start), since no OAuth token can be checked.
 */
export function readyz(runtime: GatewayRuntime): (ctx: Context) => void {
  return (ctx) => {
    if (runtime.draining) {
      ctx.status = 503;
      ctx.body = { status: 'draining', reasons: ['the gateway is shutting down'] };
      return;
    }
    const upstreams = runtime.upstreamSet.readiness();
    // Without the tools' names or changes: /readyz answers anyone, and a caller is told about a tool it may not use
    // exactly as about one that does not exist (README, Access). Names and changes: the console and `pins list`.
    const held = heldCounts(runtime.pins.held());
    const unverified = held.reduce((sum, h) => sum + (h.reason === 'unverified' ? h.count : 0), 0);
    const stores = [
      ...(unverified ? [`the pin store (Redis at cache.redisUrl) cannot be read: ${unverified} tool(s) held as unverified until it can`] : []),
      ...(runtime.oauthStarting ? ['the authorization server has not started yet: it waits for its Redis store at cache.redisUrl'] : []),
      ...[runtime.oauth?.unready?.()].filter((reason) => reason !== undefined),
    ];
    const status = stores.length ? 'not_ready' : upstreams.status;
    const reasons = [...upstreams.reasons, ...stores];
    ctx.status = status === 'not_ready' ? 503 : 200;
    ctx.body = { ...(status === 'ready' ? { status } : { status, reasons }), ...(held.length ? { held } : {}) };
  };
}

/**
 * The tools on hold counted per upstream and reason, in the order first met: `[{ upstream, reason, count }]`. One
 * entry per tool made a body as long as an upstream's changed catalogue (3,000 entries: try-out).
 */
function heldCounts(held: readonly { upstream: string; reason?: string }[]): { upstream: string; reason?: string; count: number }[] {
  const counts = new Map<string, { upstream: string; reason?: string; count: number }>();
  for (const { upstream, reason } of held) {
    const key = `${upstream}\u0000${reason}`;
    const entry = counts.get(key);
    if (entry) entry.count++;
    else counts.set(key, { upstream, reason, count: 1 });
  }
  return [...counts.values()];
}
