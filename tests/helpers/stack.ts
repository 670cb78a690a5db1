/**
 * The one starter of end-to-end gateways (real sockets): {@link startStack} (platform + reference upstream,
 * or a fake upstream, under config/cpzai.yaml), {@link startGatewayOver} (config/conformance.yaml in front
 * of any upstream URL), {@link startGatewayWith} (any config, environment and overrides: what the other
 * two and the suites with gateways of their own start through) and {@link startConfigGateway} (a
 * committed example config as `--config` loads it). In-process gateways start with tests/helpers/in-process.ts.
 */
import { fileURLToPath } from 'node:url';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { startGateway, type RunningGateway, type StartGatewayOptions } from '../../gateway/gateway.ts';
import { startPlatform } from '../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../upstream/server/index.ts';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../fixtures/fake-upstream.ts';
import { startHoldingProxy, type HoldingProxy } from './holding-proxy.ts';
import { LogCapture } from './log-capture.ts';

export interface StackOptions {
  /** `reference` (default): the platform + CPZAI upstream; or a fake upstream built from options. */
  upstream?: 'reference' | FakeUpstreamOptions;
  /** Scope endpoint URL; default: the platform's /v1/me (reference) or none (fake upstream). */
  scopeEndpoint?: string;
  /** Gateway config overrides, applied after the stack's own (ports 0, URLs); `upstreams[0]` adds to the stack's upstream, the rest are added after it. */
  gateway?: DeepPartial<GatewayConfig>;
  /** Reference upstream only: put a {@link HoldingProxy} between the upstream server and the platform. */
  platformProxy?: boolean;
}

export interface Stack {
  /** Gateway base URL, e.g. http://127.0.0.1:41234. */
  gatewayUrl: string;
  /** `${gatewayUrl}/mcp`. */
  mcpUrl: string;
  /** The upstream's MCP URL (direct calls, for comparisons). */
  upstreamUrl: string;
  /** Platform base URL (reference upstream only). */
  platformUrl?: string;
  platform?: Awaited<ReturnType<typeof startPlatform>>;
  /** The proxy the upstream server reaches the platform through (`platformProxy: true`). */
  platformProxy?: HoldingProxy;
  fake?: FakeUpstream;
  gateway: RunningGateway;
  /** The configuration the gateway started with (a reload of the same settings: `gateway.reload(structuredClone(config))`). */
  config: GatewayConfig;
  /** Every line the gateway logged. */
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * Starts platform + upstream + gateway on free loopback ports (config/cpzai.yaml with the stack's URLs,
 * the environment ignored) and returns their URLs and handles. `close()` stops them in reverse order.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    let upstreamUrl: string;
    let platform: Stack['platform'];
    let platformProxy: HoldingProxy | undefined;
    let fake: FakeUpstream | undefined;
    if (options.upstream === undefined || options.upstream === 'reference') {
      platform = await startPlatform({ port: 0 });
      closers.push(() => platform!.close());
      if (options.platformProxy) {
        platformProxy = await startHoldingProxy(platform.url);
        closers.push(() => platformProxy!.close());
      }
      const upstream = await startUpstreamServer({ platformUrl: platformProxy?.url ?? platform.url, port: 0 });
      closers.push(() => upstream.close());
      upstreamUrl = upstream.url;
    } else {
      fake = await startFakeUpstream(options.upstream);
      closers.push(() => fake!.close());
      upstreamUrl = fake.url;
    }
    const logs = new LogCapture();
    const scopeEndpoint = options.scopeEndpoint ?? (platform ? `${platform.url}/v1/me` : undefined);
    const config = loadConfig({
      env: {},
      overrides: {
        log: { level: 'info' },
        ...options.gateway,
        // config/cpzai.yaml turns code mode on; the harness serves the surface without run_code unless a test asks for it.
        compact: { ...options.gateway?.compact, codeMode: { enabled: false, ...options.gateway?.compact?.codeMode } },
        listen: { host: '127.0.0.1', port: 0, ...options.gateway?.listen },
        // The stack's upstream first; any further ones as given.
        upstreams: [{ url: upstreamUrl, ...options.gateway?.upstreams?.[0] }, ...(options.gateway?.upstreams?.slice(1) ?? [])],
        scopes: { endpoint: scopeEndpoint, ...options.gateway?.scopes },
      },
    });
    if (!scopeEndpoint) delete config.scopes.endpoint;
    const gateway = await startGateway(config, { logDestination: logs });
    closers.push(() => gateway.close());
    return {
      gatewayUrl: gateway.url,
      mcpUrl: `${gateway.url}/mcp`,
      upstreamUrl,
      platformUrl: platform?.url,
      platform,
      platformProxy,
      fake,
      gateway,
      config,
      logs,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What {@link startGatewayWith} starts. */
export interface GatewayWith extends StartGatewayOptions {
  /** `config/<config>.yaml` (e.g. `conformance`, `cpzai`); default none: the schema's defaults. */
  config?: string;
  /** The whole environment the config sees (default none, so a developer's GATEWAY_* cannot change what the tests see). */
  env?: Record<string, string>;
  /** Applied last; `listen` defaults to 127.0.0.1 on a free port, `log.level` to silent. */
  overrides?: DeepPartial<GatewayConfig>;
  /** Drop the config's `scopes.endpoint` (the defaults name the platform on :3002): no scope lookups. */
  noScopeEndpoint?: boolean;
}

/** A gateway on a free loopback port from a committed config (or the defaults), `env` and `overrides`. */
export function startGatewayWith({ config, env = {}, overrides = {}, noScopeEndpoint, ...start }: GatewayWith = {}): Promise<RunningGateway> {
  const loaded = loadConfig({
    ...(config ? { path: `${root}config/${config}.yaml` } : {}),
    env,
    overrides: { ...overrides, listen: { host: '127.0.0.1', port: 0, ...overrides.listen }, log: { level: 'silent', ...overrides.log } },
  });
  if (noScopeEndpoint) delete loaded.scopes.endpoint;
  return startGateway(loaded, start);
}

/**
 * A configuration of the schema's defaults for a gateway that checks no credential (`anonymous`, no OAuth,
 * no scope endpoint) on a free loopback port, logging nothing, with `overrides` (its upstreams, usually
 * served in memory through `upstreamTransport`): what the reload suites start and reload.
 */
export function anonymousGatewayConfig(overrides: DeepPartial<GatewayConfig>): GatewayConfig {
  const loaded = loadConfig({
    env: {},
    overrides: { anonymous: true, oauth: { mode: 'off' }, ...overrides, listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' } },
  });
  delete loaded.scopes.endpoint;
  return loaded;
}

/**
 * The gateway exactly as config/conformance.yaml sets it up (one upstream, no scope endpoint, any
 * credential accepted and forwarded), in front of `upstreamUrl`, on a free loopback port.
 * `upstream`: overrides of that one upstream's settings (e.g. `timeoutMs`); `more`: the environment and
 * any other overrides (e.g. `credentials.apiKeys`).
 */
export function startGatewayOver(
  upstreamUrl: string,
  upstream: DeepPartial<GatewayConfig['upstreams'][number]> = {},
  more: Pick<GatewayWith, 'env' | 'overrides' | 'auditDestination'> = {},
): Promise<RunningGateway> {
  return startGatewayWith({ ...more, config: 'conformance', overrides: { ...more.overrides, upstreams: [{ ...upstream, url: upstreamUrl }] } });
}

/** A gateway started from one of the committed example configs, and what it logged. */
export interface ConfigGateway {
  gateway: RunningGateway;
  /** `${gateway.url}/mcp`. */
  mcpUrl: string;
  /** `${gateway.url}/mcp/compact`. */
  compactUrl: string;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * Loads `config/<name>.yaml` exactly as `gateway/main.ts --config` would, with `env` as the whole
 * environment (the suite's own GATEWAY_* variables never leak in) plus a free port, and starts it.
 */
export async function startConfigGateway(name: string, env: Record<string, string> = {}): Promise<ConfigGateway> {
  const config = loadConfig({ path: `${root}config/${name}.yaml`, env: { GATEWAY_LISTEN_PORT: '0', GATEWAY_LOG_LEVEL: 'info', ...env } });
  const logs = new LogCapture();
  const gateway = await startGateway(config, { logDestination: logs });
  return { gateway, mcpUrl: `${gateway.url}/mcp`, compactUrl: `${gateway.url}/mcp/compact`, logs, close: () => gateway.close() };
}

/** Any bearer token: a gateway with no scope source (no scopes.endpoint, no credentials.apiKeys) checks none. */
export const ANY_BEARER = { authorization: 'Bearer example-config-test' };
