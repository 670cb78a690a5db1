import type { GatewayConfig } from '../config/types.ts';
import type { DeepPartial } from '../config/load.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';
import { inProcessGateway, type InProcessGateway } from '../tests/helpers/in-process.ts';

/**
 * The stack the code-mode benches run on: the platform stand-in and the reference MCP server on loopback ports,
 * and an in-process gateway in front of them with code mode on and its log silent; `extra` is laid over that
 * configuration (an audit destination). `close` stops all three, gateway first.
 */
export async function codeModeStack(extra: DeepPartial<GatewayConfig> = {}): Promise<{ gateway: InProcessGateway; close(): Promise<void> }> {
  const platform = await startPlatform({ port: 0 });
  const upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  const gateway = inProcessGateway({
    upstreams: [{ url: upstream.url }],
    scopes: { endpoint: `${platform.url}/v1/me` },
    compact: { codeMode: { enabled: true } },
    log: { level: 'silent' },
    ...extra,
  });
  return {
    gateway,
    close: async () => {
      await gateway.close();
      await upstream.close();
      await platform.close();
    },
  };
}
