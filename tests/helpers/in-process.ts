import type { FetchLike } from '@modelcontextprotocol/client';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { createRuntime, type Runtime } from '../../gateway/runtime.ts';
import { fakeUpstreamHandler, type FakeUpstreamOptions, type ReceivedRequest } from '../fixtures/fake-upstream.ts';
import { LogCapture } from './log-capture.ts';

/** The base URL in-process requests are addressed to (a loopback name the Host check accepts; nothing listens). */
export const IN_PROCESS_BASE = 'http://127.0.0.1';

export interface InProcessOptions {
  /** The upstream(s) behind the gateway, by upstream name (default name `cpzai`, the config's first). */
  upstreams?: Record<string, InMemoryUpstream>;
  /** Shorthand for one in-memory fake upstream built from these options. */
  fake?: FakeUpstreamOptions;
}

/** An upstream served in memory: its MCP handler, and every JSON-RPC request it received. */
export interface InMemoryUpstream {
  handler: McpHttpHandler;
  received: ReceivedRequest[];
  /** The fetch the gateway's upstream client uses for it (records, then calls the handler). */
  fetch: FetchLike;
}

export interface InProcessGateway {
  runtime: Runtime;
  /** Serves one request through the gateway's real Koa app (edge included). */
  fetch(request: Request): Promise<Response>;
  /** A FetchLike for client transports (`new StreamableHTTPClientTransport(url, { fetch })`) adding `headers`. */
  fetchWith(headers?: Readonly<Record<string, string>>): FetchLike;
  /** `${IN_PROCESS_BASE}/mcp` and `/mcp/compact` as URLs for client transports. */
  mcpUrl: URL;
  compactUrl: URL;
  upstreams: Record<string, InMemoryUpstream>;
  logs: LogCapture;
  close(): Promise<void>;
}

/** An SDK MCP handler as an in-memory upstream, recording the methods and headers it receives. */
export function inMemoryUpstream(handler: McpHttpHandler): InMemoryUpstream {
  const received: ReceivedRequest[] = [];
  const fetch: FetchLike = async (url, init) => {
    const request = new Request(url, init);
    const text = request.method === 'POST' ? await request.clone().text() : '';
    try {
      const messages = text ? ([] as { method?: string }[]).concat(JSON.parse(text)) : [];
      const headers = Object.fromEntries(request.headers);
      for (const m of messages) if (m?.method) received.push({ method: m.method, headers });
    } catch {
      // A body that is not JSON reaches the handler as it is, which answers it.
    }
    return handler.fetch(request);
  };
  return { handler, received, fetch };
}

/**
 * A gateway built with createRuntime for `config` (a full config, or overrides of config/cpzai.yaml
 * with the environment ignored), its upstreams served in memory: no socket anywhere. Without
 * `upstreams`/`fake`, the config's HTTP upstreams are reached over the network as usual.
 */
export function inProcessGateway(config: GatewayConfig | DeepPartial<GatewayConfig> = {}, options: InProcessOptions = {}): InProcessGateway {
  const upstreams: Record<string, InMemoryUpstream> = { ...options.upstreams };
  const fakeName = 'fake';
  if (options.fake) upstreams[fakeName] = inMemoryUpstream(fakeUpstreamHandler(options.fake));
  const full = isFullConfig(config)
    ? config
    : loadConfig({
        env: {},
        overrides: {
          log: { level: 'info' },
          ...config,
          listen: { host: '127.0.0.1', port: 0, ...config.listen },
          upstreams: config.upstreams ?? (Object.keys(upstreams).length ? Object.keys(upstreams).map((name) => ({ name, url: `http://${name}.upstream.invalid/mcp` })) : undefined),
          scopes: { ...config.scopes },
        },
      });
  if (!isFullConfig(config) && !config.scopes?.endpoint) delete full.scopes.endpoint;
  const logs = new LogCapture();
  const runtime = createRuntime(full, { logDestination: logs, upstreamTransport: (u) => upstreams[u.name]?.fetch });
  const fetchWith = (headers: Readonly<Record<string, string>> = {}): FetchLike => (url, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return runtime.fetch(new Request(url, { ...init, headers: merged }));
  };
  return {
    runtime,
    fetch: (request) => runtime.fetch(request),
    fetchWith,
    mcpUrl: new URL('/mcp', IN_PROCESS_BASE),
    compactUrl: new URL('/mcp/compact', IN_PROCESS_BASE),
    upstreams,
    logs,
    close: async () => {
      await runtime.close();
      await Promise.allSettled(Object.values(upstreams).map((u) => u.handler.close()));
    },
  };
}

function isFullConfig(config: GatewayConfig | DeepPartial<GatewayConfig>): config is GatewayConfig {
  return Array.isArray(config.upstreams) && config.upstreams.length > 0 && typeof (config as GatewayConfig).limits?.bodyBytes === 'number' && typeof (config as GatewayConfig).cache?.ttlMs === 'number';
}
