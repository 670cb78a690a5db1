import Koa from 'koa';
import Router from '@koa/router';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { cors, originGuard, rejectAtEdge, requestIdentity } from './edge.ts';
import { mountConsole, type ServeInProcess } from './console/routes.ts';
import { healthz, readyz } from './health.ts';
import type { Surface } from '../mcp/types.ts';
import { mcpRoute } from './mcp-endpoint.ts';
import { protectedResourceMetadata } from './protected-resource.ts';
import { requestLog } from '../obs/request-context.ts';
import type { GatewayRuntime } from '../runtime-state.ts';

/** One MCP endpoint: its surface and the SDK handler serving it. */
export interface McpMount {
  surface: Surface;
  handler: McpHttpHandler;
}

/**
 * The gateway's Koa app. Order is the request path: identity (request id, accounting), Host/Origin
 * validation, CORS, then the routes: the MCP endpoints, RFC 9728 metadata, health and metrics, and the
 * console (`console.adminToken`), whose credential lookup goes through `serve` (this app, in process).
 * `inflight` counts open requests for graceful shutdown.
 */
export function createApp(runtime: GatewayRuntime, mounts: readonly McpMount[], inflight: { count: number }, serve: ServeInProcess): Koa {
  const { config, log, metrics } = runtime;
  const app = new Koa();
  app.silent = true;
  app.on('error', (error: Error, ctx?: Koa.Context) =>
    requestLog(log, ctx?.state.requestId as string | undefined).error({ err: error.message }, 'unhandled request error'),
  );

  // Strict, case-sensitive routing: every endpoint answers on exactly its path (`/mcp`, not `/MCP` or
  // `/mcp/`), so the URL a client used is the resource its RFC 9728 challenge and metadata name (§3.3).
  // Every other spelling is 404 (below), never redirected: a redirected POST would re-send the body.
  const router = new Router({ sensitive: true, strict: true });
  router.get('/healthz', healthz);
  router.get('/readyz', readyz(runtime));
  if (config.metrics.enabled && config.metrics.port === undefined) router.get('/metrics', metricsRoute(runtime));
  router.get('/.well-known/oauth-protected-resource', (ctx) => void (ctx.body = protectedResourceMetadata(config, ctx, '', runtime.oauth?.metadata)));
  for (const { surface, handler } of mounts) {
    router.get(
      `/.well-known/oauth-protected-resource${surface.path}`,
      (ctx) => void (ctx.body = protectedResourceMetadata(config, ctx, surface.path, runtime.oauth?.metadata)),
    );
    router.all(surface.path, mcpRoute(runtime, surface, handler));
  }
  mountConsole(router, runtime, serve);

  app.use(requestIdentity(log, metrics, inflight));
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      ctx.app.emit('error', error, ctx);
      if (ctx.respond !== false && !ctx.headerSent) rejectAtEdge(ctx, 'internal', 'Internal error');
    }
  });
  // The authorization server's endpoints and pages (built-in OAuth) come before the MCP edge's Origin
  // rules: browsers post the sign-in forms with the gateway's own Origin and call the token endpoint from
  // client origins; oidc-provider answers CORS per client and the pages check Origin and a CSRF token.
  app.use((ctx, next) => (runtime.oauth ? runtime.oauth.routes(ctx, next) : next()));
  app.use(originGuard(config));
  app.use(
    cors(
      config,
      mounts.map((m) => m.surface.path),
    ),
  );
  app.use(router.routes());
  app.use(async (ctx) => {
    if (ctx.status === 404 && ctx.body === undefined) {
      const paths = mounts.map((m) => m.surface.path).join(', ');
      rejectAtEdge(
        ctx,
        'not_found',
        `Not Found: ${ctx.path} is not an endpoint of this server (paths are case-sensitive, without a trailing slash; MCP endpoints: ${paths})`,
      );
    }
  });
  return app;
}

/** `GET /metrics` in the Prometheus text format (prom-client). */
export function metricsRoute(runtime: GatewayRuntime): Koa.Middleware {
  return async (ctx) => {
    ctx.type = runtime.metrics.registry.contentType;
    ctx.body = await runtime.metrics.registry.metrics();
  };
}
