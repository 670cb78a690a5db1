import { loadConfig } from '../../config/load.ts';
import { startGateway } from '../../gateway/index.ts';
import { startPlatform } from '../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../upstream/server/index.ts';

/**
 * The reference stack on free loopback ports: platform API, the CPZAI upstream, and the gateway with
 * config/cpzai.yaml pointed at them (scopes from the platform's /v1/me). The environment is ignored.
 * `close()` stops the gateway first, then the upstream, then the platform.
 */
export async function startReferenceStack() {
  const platform = await startPlatform({ port: 0 });
  try {
    const upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
    try {
      const gateway = await startGateway(
        loadConfig({
          env: {},
          overrides: {
            listen: { host: '127.0.0.1', port: 0 },
            upstreams: [{ url: upstream.url }],
            scopes: { endpoint: `${platform.url}/v1/me` },
            log: { level: 'silent' },
          },
        }),
      );
      return {
        platform,
        upstream,
        gateway,
        async close() {
          try {
            await gateway.close();
          } finally {
            try {
              await upstream.close();
            } finally {
              await platform.close();
            }
          }
        },
      };
    } catch (error) {
      await upstream.close();
      throw error;
    }
  } catch (error) {
    await platform.close();
    throw error;
  }
}
