import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { GatewayConfig } from '../config/load.ts';
import { metricsRoute } from './http/app.ts';
import { originGuard } from './http/edge.ts';
import type { GatewayRuntime } from './runtime-state.ts';
import { createRuntime, type RuntimeOptions } from './runtime.ts';

export type { GatewayConfig } from '../config/load.ts';
export type { Surface, SurfaceName, DispatchContext } from './mcp/server.ts';

/** createRuntime's options (logger or log destination, surfaces, upstream transport). */
export type StartGatewayOptions = RuntimeOptions;

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:3000 (MCP endpoints at /mcp, /mcp/compact). */
  url: string;
  /** Base URL of the separate metrics listener when `metrics.port` is set. */
  metricsUrl?: string;
  /**
   * Graceful stop: stops accepting connections, lets in-flight requests finish for up to
   * `shutdown.graceMs`, then closes what is left, the MCP handlers, upstream connections and caches.
   */
  close(): Promise<void>;
}

/**
 * Starts a gateway for `config` (see config/load.ts): {@link createRuntime} plus the HTTP listeners,
 * resolving once they listen. The catalogues are fetched in the background (`/readyz` answers 503
 * until one is); stdio upstreams are spawned then.
 */
export async function startGateway(config: GatewayConfig, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const runtime = createRuntime(config, options);
  const { log } = runtime.state;
  const server = createServer(runtime.listener);
  let metricsServer: HttpServer | undefined;
  try {
    await listen(server, config.listen.port, config.listen.host);
    metricsServer = config.metrics.enabled && config.metrics.port !== undefined ? await startMetricsListener(runtime.state, config) : undefined;
    // The issuer identifier is fixed at creation: oauth.issuer or publicUrl, else the URL just bound.
    await runtime.startOAuth(urlOf(server, config.listen.host));
  } catch (error) {
    server.close();
    metricsServer?.close();
    await runtime.close();
    throw error;
  }
  runtime.warm();
  const url = urlOf(server, config.listen.host);
  log.info({ url, upstreams: config.upstreams.map((u) => u.name), oauth: config.oauth.mode }, 'gateway listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    metricsUrl: metricsServer && urlOf(metricsServer, config.listen.host),
    close: () => (closing ??= shutdown()),
  };

  async function shutdown(): Promise<void> {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const deadline = Date.now() + config.shutdown.graceMs;
    while (runtime.inflight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    server.closeAllConnections();
    try {
      await stopped;
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
    } finally {
      try {
        await runtime.close();
      } finally {
        log.info('gateway closed');
        log.flush?.();
      }
    }
  }
}

function listen(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlOf(server: HttpServer, host: string): string {
  const { port } = server.address() as AddressInfo;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port}`;
}

/**
 * `metrics.port`: `/metrics` on its own listener, bound like the main one (`listen.host`) and behind the
 * same Host/Origin guard (edge.ts `originGuard`), so a DNS-rebinding page cannot read it either.
 */
async function startMetricsListener(runtime: GatewayRuntime, config: GatewayConfig): Promise<HttpServer> {
  const app = new Koa();
  app.silent = true;
  const route = metricsRoute(runtime);
  app.use(originGuard(config));
  app.use(async (ctx, next) => (ctx.path === '/metrics' ? route(ctx, next) : undefined));
  const server = createServer(app.callback());
  await listen(server, config.metrics.port!, config.listen.host);
  return server;
}
