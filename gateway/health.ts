import type { Context } from 'koa';
import type { GatewayRuntime } from './runtime.ts';

/** `GET /healthz`: the process is alive and serving HTTP. */
export function healthz(ctx: Context): void {
  ctx.body = { status: 'ok' };
}

/**
 * `GET /readyz`: 200 when every upstream's catalogue has been fetched and is fresh enough to serve,
 * else 503 naming each upstream that is not (never fetched, or stale with the last error).
 */
export function readyz(runtime: GatewayRuntime): (ctx: Context) => void {
  return (ctx) => {
    const reasons = runtime.upstreams.map((u) => u.catalog.readiness()).filter((r) => !r.ready).map((r) => r.reason!);
    ctx.status = reasons.length ? 503 : 200;
    ctx.body = reasons.length ? { status: 'not_ready', reasons } : { status: 'ready' };
  };
}
