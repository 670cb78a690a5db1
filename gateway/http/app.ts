import type { RequestListener } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { cors, exposeToOrigin, originGuard, originRefusal, rejectAtEdge, requestAccounting, requestIdentity } from './edge.ts';
import { NodeExchange, type Exchange } from './exchange.ts';
import { mountConsole, type ServeInProcess } from './console/routes.ts';
import { PERSON_HEADERS, browserPage } from './browser-pages.ts';
import { healthz, readyz } from './health.ts';
import type { Surface } from '../ports.ts';
import { mcpRoute } from './mcp-endpoint.ts';
import { misdirectionWarning, offersOAuth, servesOriginDocument, protectedResourceMetadata, tokenAudience, type Misdirected } from './protected-resource.ts';
import { pathPrefix } from '../auth/oauth/paths.ts';
import { requestLog } from '../obs/request-context.ts';
import { redactText } from '../obs/redact.ts';
import type { GatewayRuntime } from '../runtime-state.ts';

/** One MCP endpoint: its surface and the SDK handler serving it. */
export interface McpMount {
  surface: Surface;
  handler: McpHttpHandler;
}

/**
 * The gateway's request listener: an MCP POST (the exact path of an endpoint, no query, no
 * Content-Encoding) is served straight over node:http by {@link direct}, everything else by the Koa app
 * ({@link createApp}). Both run the same edge (request id and accounting, Host/Origin, CORS exposure)
 * and the same MCP route (mcp-endpoint.ts); the MCP POST skips only Koa's own per-request work
 * (context objects, middleware chain, router), about 5% of a tools/call's CPU (docs/performance.md).
 */
export function createListener(
  runtime: GatewayRuntime,
  mounts: readonly McpMount[],
  inflight: { count: number },
  serve: ServeInProcess,
): { app: Koa; listener: RequestListener } {
  // One warning for the MCP endpoints and their RFC 9728 documents: a misdirected client asks both.
  const warnMisdirected = misdirectionWarning(runtime.log);
  const routes = new Map(mounts.map(({ surface, handler }) => [surface.path, mcpRoute(runtime, surface, handler, warnMisdirected)]));
  const app = createApp(runtime, mounts, routes, inflight, serve, warnMisdirected);
  const koa = app.callback();
  const account = requestAccounting(runtime.config, runtime.log, runtime.metrics, inflight);
  const refused = originRefusal(runtime.config);
  const direct = async (route: (ctx: Exchange) => Promise<void>, exchange: NodeExchange): Promise<void> => {
    const { requestId, address } = account(exchange.req, exchange.res, exchange.path, () => exchange.path);
    exchange.state.requestId = requestId;
    exchange.state.address = address;
    try {
      if (!refused(exchange)) {
        exposeToOrigin(exchange);
        await route(exchange);
      }
    } catch (error) {
      requestLog(runtime.log, exchange.state.requestId).error({ err: redactText((error as Error).message) }, 'unhandled request error');
      if (exchange.respond && !exchange.res.headersSent) rejectAtEdge(exchange, 'internal', 'Internal error');
    }
    exchange.finish();
  };
  const listener: RequestListener = (req, res) => {
    const route = req.method === 'POST' ? routes.get(req.url ?? '') : undefined;
    const encoding = req.headers['content-encoding'];
    if (route && (encoding === undefined || encoding.toLowerCase() === 'identity')) void direct(route, new NodeExchange(req, res, req.url!));
    else void koa(req, res);
  };
  return { app, listener };
}

/**
 * The gateway's Koa app. Order is the request path: identity (request id, accounting), Host/Origin
 * validation, the authorization server (built-in OAuth), CORS, then the routes: the MCP endpoints, RFC 9728 metadata, health and metrics, and the
 * console (`console.adminToken`), whose credential lookup goes through `serve` (this app, in process).
 * `inflight` counts open requests for graceful shutdown.
 */
function createApp(
  runtime: GatewayRuntime,
  mounts: readonly McpMount[],
  routes: ReadonlyMap<string, (ctx: Exchange) => Promise<void>>,
  inflight: { count: number },
  serve: ServeInProcess,
  warnMisdirected: (misdirected: Misdirected) => void,
): Koa {
  const { config, log, metrics } = runtime;
  const app = new Koa();
  app.silent = true;
  app.on('error', (error: Error, ctx?: Koa.Context) =>
    // An unexpected error's message may quote the request's URL (user information, a query): redacted.
    requestLog(log, ctx?.state.requestId as string | undefined).error({ err: redactText(error.message) }, 'unhandled request error'),
  );

  // Strict, case-sensitive routing: every endpoint answers on exactly its path (`/mcp`, not `/MCP` or
  // `/mcp/`), so the URL a client used is the resource its RFC 9728 challenge and metadata name (§3.3).
  // Every other spelling is 404 (below), never redirected: a redirected POST would re-send the body.
  const router = new Router({ sensitive: true, strict: true });
  router.get('/healthz', healthz);
  router.get('/readyz', readyz(runtime));
  if (config.metrics.enabled && config.metrics.port === undefined) router.get('/metrics', metricsRoute(runtime));
  // RFC 9728 documents only where OAuth is on offer (protected-resource.ts offersOAuth): else a 404.
  // §3.1: also at the well-known path with publicUrl's path inserted (`/.well-known/oauth-protected-resource/prefix/mcp`),
  // for a proxy that sends host-root well-known requests to the gateway as they are.
  const prefix = pathPrefix(config.publicUrl);
  const resourcePaths = mounts.map((m) => m.surface.path);
  // A document whose resource no token is taken for (tokenAudience: the Host names another port than the one
  // reached, without publicUrl) is not served: a client would sign in for a token refused at the endpoint.
  for (const resourcePath of offersOAuth(config) ? [...(servesOriginDocument(config) ? [''] : []), ...resourcePaths] : []) {
    const answer = (ctx: Koa.Context) => {
      const audience = tokenAudience(config, ctx, resourcePath);
      if (typeof audience !== 'string') {
        warnMisdirected(audience);
        return rejectAtEdge(ctx, 'misdirected_request', `Misdirected Request: ${audience.refused}`);
      }
      ctx.body = protectedResourceMetadata(config, ctx, resourcePath, runtime.oauth?.metadata);
    };
    for (const path of new Set([resourcePath, `${prefix}${resourcePath}`])) router.get(`/.well-known/oauth-protected-resource${path}`, answer);
  }
  for (const { surface } of mounts) router.all(surface.path, routes.get(surface.path)!);
  mountConsole(router, runtime, serve);

  app.use(requestIdentity(config, log, metrics, inflight));
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (ctx.respond === false || ctx.headerSent) return void ctx.app.emit('error', error, ctx);
      // A request the body parsers refuse (http-errors: 413 over a form's limit, 400 unreadable, 415 a
      // charset) is the caller's mistake, answered with its status and words: not logged as our failure.
      const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
      if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
        ctx.status = status;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = `${status} ${typeof message === 'string' ? message : 'Bad Request'}`;
        return;
      }
      ctx.app.emit('error', error, ctx);
      rejectAtEdge(ctx, 'internal', 'Internal error');
      ctx.status = 500;
    }
  });
  // One Host/Origin guard in front of every route (the probes answer any Host; the authorization
  // server's paths take cross-origin requests: edge.ts), then the authorization server's endpoints and
  // pages (built-in OAuth), which answer CORS themselves, before the MCP edge's CORS.
  app.use(originGuard(config));
  app.use((ctx, next) => (runtime.oauth ? runtime.oauth.routes(ctx, next) : next()));
  app.use(
    cors(
      config,
      mounts.map((m) => m.surface.path),
    ),
  );
  // Outermost of the routes: what the router and its method check leave unanswered gets a JSON-RPC body.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined) return;
    // allowedMethods: 405 for a path served with other methods, 501 for a method it does not know (any
    // path); Allow names what the path serves, empty for a path nobody serves.
    const allow = ctx.response.get('allow');
    if ((ctx.status === 405 || ctx.status === 501) && allow) {
      rejectAtEdge(ctx, 'method_not_allowed', `Method Not Allowed: ${ctx.path} answers ${allow}, not ${ctx.method}`);
    } else if (ctx.status === 404 || ctx.status === 501) {
      const paths = mounts.map((m) => m.surface.path).join(', ');
      const forPerson = browserPage(
        ctx,
        config,
        mounts.map((m) => m.surface.path),
      );
      if (forPerson) {
        ctx.state.route = forPerson.route;
        ctx.status = forPerson.status;
        ctx.set(PERSON_HEADERS);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = forPerson.body;
        return;
      }
      rejectAtEdge(
        ctx,
        'not_found',
        `Not Found: ${ctx.path} is not an endpoint of this server (paths are case-sensitive, without a trailing slash; MCP endpoints: ${paths})`,
      );
    }
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** `GET /metrics` in the Prometheus text format (prom-client). */
export function metricsRoute(runtime: GatewayRuntime): Koa.Middleware {
  return async (ctx) => {
    ctx.type = runtime.metrics.registry.contentType;
    ctx.body = await runtime.metrics.registry.metrics();
  };
}
