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
 * hold (catalog/pin-guard.ts) are listed under `held` (upstream, its own tool name, why, what changed)
 * without changing the status: the gateway serves everything else, and an operator must act, not a
 * load balancer.
 */
export function readyz(runtime: GatewayRuntime): (ctx: Context) => void {
  return (ctx) => {
    if (runtime.draining) {
      ctx.status = 503;
      ctx.body = { status: 'draining', reasons: ['the gateway is shutting down'] };
      return;
    }
    const { status, reasons } = runtime.upstreamSet.readiness();
    const held = runtime.pins.held().map(({ upstream, name, reason, changes }) => ({ upstream, tool: name, reason, changes }));
    ctx.status = status === 'not_ready' ? 503 : 200;
    ctx.body = { ...(status === 'ready' ? { status } : { status, reasons }), ...(held.length ? { held } : {}) };
  };
}
