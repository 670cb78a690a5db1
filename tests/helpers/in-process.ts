import { fileURLToPath } from 'node:url';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/server';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { forgetUpstreams } from '../../gateway/obs/metrics.ts';
import { createRuntime, type Runtime } from '../../gateway/runtime.ts';
import { fakeUpstream, type FakeUpstreamCore, type FakeUpstreamOptions } from '../fixtures/fake-upstream.ts';
import { startPlatform } from '../../upstream/platform/index.ts';
import { createUpstreamHandler } from '../../upstream/server/index.ts';
import { startHoldingProxy, type HoldingProxy } from './holding-proxy.ts';
import { LogCapture } from './log-capture.ts';

/** The base URL in-process requests are addressed to (a loopback name the Host check accepts; nothing listens). */
export const IN_PROCESS_BASE = 'http://127.0.0.1';

/**
 * Origins of the in-process gateways alive now, each `http://127.0.0.1:<n>` with a port nothing listens
 * on, and the runtime that serves it: {@link routedFetch} sends a request for one of them to that
 * runtime's fetch, so the client helpers (clients.ts, era-client.ts, raw-mcp.ts) serve both kinds of test.
 */
const inProcessOrigins = new Map<string, (request: Request) => Promise<Response>>();
let nextOrigin = 1;
/** A fresh origin; never port 80, which an http URL's origin drops (`http://127.0.0.1`), so it would not match its key. */
const freshOrigin = () => {
  if (nextOrigin === 80) nextOrigin++;
  return `${IN_PROCESS_BASE}:${nextOrigin++}`;
};

/** Whether `url` is the origin of a live in-process gateway (served by {@link routedFetch} without a socket). */
export const isInProcess = (url: string | URL): boolean => inProcessOrigins.has(new URL(url).origin);

/** `fetch`, except that a request for a live in-process gateway's origin is served by its runtime (no socket). */
export const routedFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = new URL(input instanceof Request ? input.url : input);
  const serve = inProcessOrigins.get(url.origin);
  if (!serve) return fetch(input, init);
  return serve(input instanceof Request && init === undefined ? input : new Request(input, init));
};

/** What an in-process gateway needs of an upstream served in memory: the fetch that serves it, and its close. */
export interface ServedUpstream {
  fetch: FetchLike;
  close(): Promise<void>;
}

export interface InProcessOptions<U extends ServedUpstream = InMemoryUpstream> {
  /** The upstream(s) behind the gateway, by upstream name (default name `cpzai`, the config's first). */
  upstreams?: Record<string, U>;
  /** Shorthand for one in-memory fake upstream built from these options (upstream name `fake`). */
  fake?: FakeUpstreamOptions;
  /** Where audit events go (RuntimeOptions.auditDestination): a LogCapture to read them. */
  audit?: LogCapture;
  /** Where spans go (RuntimeOptions.spanExporter): an InMemorySpanExporter to read them; tracing is on with it. */
  spans?: SpanExporter;
}

/**
 * An upstream served in memory: the configurable fake upstream (tests/fixtures/fake-upstream.ts) with
 * its controls (recording, failWith, setTools, sessions); `fetch` is the one the gateway's upstream client uses.
 */
export type InMemoryUpstream = FakeUpstreamCore;

export interface InProcessGateway<U extends ServedUpstream = InMemoryUpstream> {
  runtime: Runtime;
  /** This gateway's own origin (`http://127.0.0.1:<n>`, nothing listens): {@link routedFetch} serves it in process. */
  gatewayUrl: string;
  /** Serves one request through the gateway's real Koa app (edge included). */
  fetch(request: Request): Promise<Response>;
  /** A FetchLike for client transports (`new StreamableHTTPClientTransport(url, { fetch })`) adding `headers`. */
  fetchWith(headers?: Readonly<Record<string, string>>): FetchLike;
  /** `${gatewayUrl}/mcp` and `/mcp/compact` as URLs for client transports. */
  mcpUrl: URL;
  compactUrl: URL;
  upstreams: Record<string, U | InMemoryUpstream>;
  /** The `fake` upstream, when built from `options.fake`. */
  fake?: InMemoryUpstream;
  logs: LogCapture;
  close(): Promise<void>;
}

/** The configurable fake upstream (tests/fixtures/fake-upstream.ts) served in memory. */
export function inMemoryFakeUpstream(options: FakeUpstreamOptions): InMemoryUpstream {
  return fakeUpstream(options);
}

/**
 * A gateway built with createRuntime for `config` (a full config, or overrides of config/cpzai.yaml
 * with the environment ignored), its upstreams served in memory: no socket anywhere. Without
 * `upstreams`/`fake`, the config's HTTP upstreams are reached over the network as usual.
 */
export function inProcessGateway<U extends ServedUpstream = InMemoryUpstream>(
  config: GatewayConfig | DeepPartial<GatewayConfig> = {},
  options: InProcessOptions<U> = {},
): InProcessGateway<U> {
  const upstreams: Record<string, U | InMemoryUpstream> = { ...options.upstreams };
  const fakeName = 'fake';
  const fake = options.fake ? inMemoryFakeUpstream(options.fake) : undefined;
  if (fake) upstreams[fakeName] = fake;
  const names = Object.keys(upstreams);
  const placeholder = (name: string) => ({ name, url: `http://${name}.upstream.invalid/mcp` });
  const full = isFullConfig(config)
    ? config
    : loadConfig({
        env: {},
        overrides: {
          log: { level: 'info' },
          ...config,
          // config/cpzai.yaml turns code mode on; the harness serves the surface without run_code unless a test asks for it.
          compact: { ...config.compact, codeMode: { enabled: false, ...config.compact?.codeMode } },
          listen: { host: '127.0.0.1', port: 0, ...config.listen },
          // Per-upstream overrides by position are laid over the in-memory upstreams' names and placeholder URLs.
          upstreams: config.upstreams
            ? config.upstreams.map((u, i) => (names[i] && !u?.name ? { ...placeholder(names[i]!), ...u } : u))
            : names.length
              ? names.map(placeholder)
              : undefined,
          scopes: { ...config.scopes },
        },
      });
  if (!isFullConfig(config) && !config.scopes?.endpoint) delete full.scopes.endpoint;
  const logs = new LogCapture();
  const runtime = createRuntime(full, {
    logDestination: logs,
    upstreamTransport: (u) => upstreams[u.name]?.fetch,
    ...(options.audit ? { auditDestination: options.audit } : {}),
    ...(options.spans ? { spanExporter: options.spans } : {}),
  });
  const gatewayUrl = freshOrigin();
  // The runtime serving now (reloadInProcess swaps it).
  inProcessOrigins.set(gatewayUrl, (request) => handle.runtime.fetch(request));
  const fetchWith =
    (headers: Readonly<Record<string, string>> = {}): FetchLike =>
    (url, init) => {
      const merged = new Headers(init?.headers);
      for (const [name, value] of Object.entries(headers)) merged.set(name, value);
      return handle.runtime.fetch(new Request(url, { ...init, headers: merged }));
    };
  const handle: InProcessGateway<U> = {
    runtime,
    fetch: (request) => handle.runtime.fetch(request),
    fetchWith,
    gatewayUrl,
    mcpUrl: new URL('/mcp', gatewayUrl),
    compactUrl: new URL('/mcp/compact', gatewayUrl),
    upstreams,
    fake,
    logs,
    close: async () => {
      inProcessOrigins.delete(gatewayUrl);
      await handle.runtime.close();
      await Promise.allSettled(Object.values(upstreams).map((u) => u.close()));
    },
  };
  return handle;
}

/**
 * A live reload of `gateway` to `next` as gateway.ts `swap` makes it when the pin store stays (the same
 * `pinning.lockFile` and `cache`): a new runtime over the same pin store, its guard inheriting the serving
 * one's, the metrics registry and log kept, then served at the same origin and the old runtime closed
 * (the pin store left open). Every upstream is connected anew (as `replace`: a renamed upstream is one),
 * through `upstreams` by the new configuration's names.
 */
export async function reloadInProcess(gateway: InProcessGateway, next: GatewayConfig, upstreams: Record<string, InMemoryUpstream>): Promise<void> {
  const old = gateway.runtime;
  Object.assign(gateway.upstreams, upstreams);
  const fresh = createRuntime(next, {
    logDestination: gateway.logs,
    metrics: old.state.metrics,
    pinStore: old.state.pins.store,
    pins: old.state.pins,
    upstreamTransport: (u) => gateway.upstreams[u.name]?.fetch,
  });
  await fresh.startOAuth(gateway.gatewayUrl);
  gateway.runtime = fresh;
  await old.close(new Set([old.state.pins.store]));
  // As swap does once the retired runtime is closed: the removed upstreams' gauges go.
  await forgetUpstreams(
    fresh.state.metrics,
    old.state.config.upstreams.map((u) => u.name).filter((name) => !next.upstreams.some((u) => u.name === name)),
  );
}

function isFullConfig(config: GatewayConfig | DeepPartial<GatewayConfig>): config is GatewayConfig {
  return (
    Array.isArray(config.upstreams) &&
    config.upstreams.length > 0 &&
    typeof (config as GatewayConfig).limits?.bodyBytes === 'number' &&
    typeof (config as GatewayConfig).cache?.ttlMs === 'number'
  );
}

/**
 * {@link inProcessGateway} with the options of `startStack` (tests/helpers/stack.ts) for a fake upstream,
 * so a single-gateway test moves in process by changing its starter only (OAuth started at the gateway's origin, as
 * startGateway does).
 */
export async function inProcessStack(options: {
  upstream: FakeUpstreamOptions;
  gateway?: DeepPartial<GatewayConfig>;
  scopeEndpoint?: string;
  /** Where audit events go: a LogCapture to read them. */
  audit?: LogCapture;
}): Promise<InProcessGateway> {
  const gateway = options.gateway ?? {};
  const endpoint = options.scopeEndpoint ?? gateway.scopes?.endpoint;
  const started = inProcessGateway(
    { ...gateway, scopes: { ...gateway.scopes, ...(endpoint ? { endpoint } : {}) } },
    { fake: options.upstream, ...(options.audit ? { audit: options.audit } : {}) },
  );
  // As startGateway does once it listens: the OAuth routes and metadata exist from here on (oauth.mode builtin in config/cpzai.yaml).
  await started.runtime.startOAuth(started.gatewayUrl);
  return started;
}

/**
 * In process, the built-in authorization server in front of one fake upstream tool, `read_ledger` (scope
 * `ledger:read`, the only scope offered), keys' scopes asked of `scopeEndpoint`, `config` merged over that
 * (its `oauth` too: give a `tokenSecret`), the audit to `audit`; its OAuth routes started.
 */
export async function inProcessOAuthLedger(scopeEndpoint: string, config: DeepPartial<GatewayConfig>, audit: LogCapture): Promise<InProcessGateway> {
  const tool = { name: 'read_ledger', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } } } as Tool;
  const gateway = inProcessGateway(
    {
      ...config,
      scopes: { endpoint: scopeEndpoint },
      oauth: { mode: 'builtin', scopes: ['ledger:read'], ...config.oauth },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: tool }] }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  return gateway;
}

const CONFORMANCE_CONFIG = fileURLToPath(new URL('../../config/conformance.yaml', import.meta.url));

/**
 * In process, the gateway `startGatewayOver` (stack.ts) starts: config/conformance.yaml (one upstream named
 * `fixture`, no scope endpoint, any credential accepted and forwarded, the environment ignored) in front of
 * `upstream`: served in memory, or a URL reached over the network as in production (the undici hop carries
 * the forwarded requests, which an in-memory upstream bypasses). `settings`: overrides of that one
 * upstream's settings (e.g. `timeoutMs`).
 */
export function inProcessGatewayOver(upstream: InMemoryUpstream | string, settings: DeepPartial<GatewayConfig['upstreams'][number]> = {}): InProcessGateway {
  const url = typeof upstream === 'string' ? upstream : 'http://fixture.upstream.invalid/mcp';
  const config = loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ ...settings, url }], log: { level: 'silent' } },
  });
  return inProcessGateway(config, { upstreams: typeof upstream === 'string' ? {} : { [config.upstreams[0]!.name]: upstream } });
}

/** An in-process gateway in front of the reference upstream (see {@link inProcessReferenceStack}). */
export interface InProcessReferenceStack extends InProcessGateway<ServedUpstream> {
  /** The platform stand-in's base URL (its `/v1/me` is the scope endpoint). */
  platformUrl: string;
  /** The upstream's MCP URL (direct calls, for comparisons): an origin {@link routedFetch} serves in memory. */
  upstreamUrl: string;
  platform: Awaited<ReturnType<typeof startPlatform>>;
  /** The proxy the upstream server reaches the platform through (`platformProxy: true`). */
  platformProxy?: HoldingProxy;
}

/**
 * In process, what `startStack()` (stack.ts) starts for the reference upstream: config/cpzai.yaml (the
 * environment ignored) with the CPZAI MCP server served in memory (upstream/server createUpstreamHandler)
 * and the platform stand-in over loopback HTTP, whose `/v1/me` is the scope endpoint; the gateway has no
 * socket. `gateway`: config overrides as startStack takes them; `platformProxy`: a {@link HoldingProxy}
 * between the upstream server and the platform.
 */
export async function inProcessReferenceStack(
  options: { gateway?: DeepPartial<GatewayConfig>; platformProxy?: boolean } = {},
): Promise<InProcessReferenceStack> {
  const platform = await startPlatform({ port: 0 });
  const platformProxy = options.platformProxy ? await startHoldingProxy(platform.url) : undefined;
  const handler = createUpstreamHandler({ platformUrl: platformProxy?.url ?? platform.url });
  const upstreamOrigin = freshOrigin();
  inProcessOrigins.set(upstreamOrigin, (request) => handler.fetch(request));
  const upstream: ServedUpstream = { fetch: (url, init) => handler.fetch(new Request(url, init)), close: () => handler.close() };
  const gateway = options.gateway ?? {};
  const started = inProcessGateway<ServedUpstream>(
    { ...gateway, scopes: { endpoint: `${platform.url}/v1/me`, ...gateway.scopes } },
    { upstreams: { cpzai: upstream } },
  );
  await started.runtime.startOAuth(started.gatewayUrl);
  return {
    ...started,
    platformUrl: platform.url,
    upstreamUrl: `${upstreamOrigin}/mcp`,
    platform,
    platformProxy,
    close: async () => {
      try {
        inProcessOrigins.delete(upstreamOrigin);
        await started.close();
      } finally {
        await platformProxy?.close();
        await platform.close();
      }
    },
  };
}
