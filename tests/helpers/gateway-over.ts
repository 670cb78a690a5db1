import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load.ts';
import { startGateway } from '../../gateway/gateway.ts';

const CONFORMANCE_CONFIG = fileURLToPath(new URL('../../config/conformance.yaml', import.meta.url));

/**
 * The gateway exactly as config/conformance.yaml sets it up (one upstream, no scope endpoint, any
 * credential accepted and forwarded), in front of `upstreamUrl`, on a free loopback port. The
 * environment is ignored so a developer's GATEWAY_* variables cannot change what the tests see.
 */
export function startGatewayOver(upstreamUrl: string) {
  return startGateway(
    loadConfig({
      path: CONFORMANCE_CONFIG,
      env: {},
      overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ url: upstreamUrl }], log: { level: 'silent' } },
    }),
  );
}
