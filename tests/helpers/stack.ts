import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { startGateway, type RunningGateway } from '../../gateway/gateway.ts';
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
  /** Gateway config overrides, applied after the stack's own (ports 0, URLs). */
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
        listen: { host: '127.0.0.1', port: 0, ...options.gateway?.listen },
        upstreams: [{ url: upstreamUrl, ...options.gateway?.upstreams?.[0] }],
        scopes: { endpoint: scopeEndpoint, ...options.gateway?.scopes },
      },
    });
    if (!scopeEndpoint) delete config.scopes.endpoint;
    const gateway = await startGateway(config, { logDestination: logs });
    closers.push(() => gateway.close());
    return { gatewayUrl: gateway.url, mcpUrl: `${gateway.url}/mcp`, upstreamUrl, platformUrl: platform?.url, platform, platformProxy, fake, gateway, logs, close };
  } catch (error) {
    await close();
    throw error;
  }
}
