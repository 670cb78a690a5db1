import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { DestinationStream } from 'pino';
import type { GatewayConfig } from '../config/load.ts';
import { createApp, metricsRoute, type McpMount } from './http/app.ts';
import { CatalogCache } from './catalog/catalog-cache.ts';
import { InflightCalls } from './upstream/inflight-calls.ts';
import { InputValidator } from './checks/input-check.ts';
import { createKvStore, type KvStore } from './store/kv-store.ts';
import { ListingCache } from './catalog/listing.ts';
import { createLogger, type Logger } from './obs/log.ts';
import { createMcpServerFactory, type Surface } from './mcp/server.ts';
import { createMetrics } from './obs/metrics.ts';
import { OutputValidator } from './checks/output-check.ts';
import type { GatewayRuntime, UpstreamRuntime } from './runtime.ts';
import { ScopeCache } from './auth/scope-cache.ts';
import { SearchIndexCache } from './catalog/search-index-cache.ts';
import { surfaces as defaultSurfaces } from './surfaces/surfaces.ts';
import { UpstreamClient } from './upstream/client.ts';
import { UpstreamSet } from './catalog/upstream-set.ts';
import Koa from 'koa';

export type { GatewayConfig } from '../config/load.ts';
export type { Surface, SurfaceName, DispatchContext } from './mcp/server.ts';

export interface StartGatewayOptions {
  /** Where JSON log lines go; default stdout. */
  logDestination?: DestinationStream;
  /** Use this logger instead of creating one (wins over `logDestination`). */
  logger?: Logger;
  /** The MCP endpoints to mount; default `gateway/surfaces/surfaces.ts`. */
  surfaces?: readonly Surface[];
}

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
 * Starts a gateway for `config` (see config/load.ts) and resolves once it listens. The catalogues are
 * fetched in the background (`/readyz` answers 503 until one is); stdio upstreams are spawned then.
 */
export async function startGateway(config: GatewayConfig, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const log = options.logger ?? createLogger(config, options.logDestination);
  const metrics = createMetrics();
  const stores: KvStore[] = [];
  const store = (name: string, ttlMs: number, maxEntries: number) => {
    const kv = createKvStore(config.cache, { name, ttlMs, maxEntries, metrics, log });
    stores.push(kv);
    return kv;
  };
  const upstreams: UpstreamRuntime[] = config.upstreams.map((upstreamConfig) => {
    const client = new UpstreamClient(upstreamConfig, config.limits, metrics, log);
    const shared = config.cache.store === 'redis' ? store(`catalog:${upstreamConfig.name}`, 24 * 3600_000, config.cache.maxEntries) : undefined;
    return { client, catalog: new CatalogCache(client, config.cache, metrics, log, shared) };
  });
  const runtime: GatewayRuntime = {
    config,
    log,
    metrics,
    upstreams,
    upstreamSet: new UpstreamSet(upstreams, config.naming.separator, log),
    scopes: new ScopeCache(config.scopes, store('scopes', Math.max(config.scopes.ttlMs, config.scopes.unknownTtlMs), config.scopes.maxEntries), metrics, log),
    outputs: new OutputValidator(metrics, log),
    listings: new ListingCache(),
    inputs: new InputValidator(log),
    searchIndexes: new SearchIndexCache(log, config.upstreams),
    inflightCalls: new InflightCalls(log),
  };

  const served = (options.surfaces ?? defaultSurfaces).filter((s) => s.name !== 'compact' || config.compact.enabled);
  const mounts: McpMount[] = served.map((surface) => ({
    surface,
    handler: createMcpHandler(createMcpServerFactory(runtime, surface), {
      legacy: 'stateless',
      maxRequestBodySize: config.limits.bodyBytes,
      onerror: (error) => log.debug({ err: error.message, surface: surface.name }, 'MCP request rejected or failed'),
    }),
  }));
  // Upstream list changes reach modern callers subscribed with subscriptions/listen.
  for (const { catalog } of upstreams) {
    catalog.onChange((method) => {
      for (const { handler } of mounts) {
        if (method === 'tools/list') handler.notify.toolsChanged();
        if (method === 'prompts/list') handler.notify.promptsChanged();
        if (method === 'resources/list') handler.notify.resourcesChanged();
      }
    });
  }

  const inflight = { count: 0 };
  const server = createServer(createApp(runtime, mounts, inflight).callback());
  await listen(server, config.listen.port, config.listen.host);
  const metricsServer = config.metrics.enabled && config.metrics.port !== undefined ? await startMetricsListener(runtime, config) : undefined;
  for (const { catalog } of upstreams) void catalog.warm();
  const url = urlOf(server, config.listen.host);
  log.info({ url, upstreams: config.upstreams.map((u) => u.name) }, 'gateway listening');

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
    while (inflight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    server.closeAllConnections();
    try {
      await stopped;
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
    } finally {
      try {
        await Promise.allSettled(mounts.map((m) => m.handler.close()));
        await Promise.allSettled(upstreams.flatMap((u) => [u.catalog.close(), u.client.close()]));
        await runtime.scopes.close();
      } finally {
        await Promise.allSettled(stores.map((s) => s.close()));
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

async function startMetricsListener(runtime: GatewayRuntime, config: GatewayConfig): Promise<HttpServer> {
  const app = new Koa();
  const route = metricsRoute(runtime);
  app.use(async (ctx, next) => (ctx.path === '/metrics' ? route(ctx, next) : undefined));
  const server = createServer(app.callback());
  await listen(server, config.metrics.port!, config.listen.host);
  return server;
}
