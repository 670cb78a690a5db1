import type { GatewayConfig } from '../../config/types.ts';

/** Where `npm start` binds the reference services by default (and config/cpzai.yaml points). */
export const REFERENCE_PORTS = { upstream: 3001, platform: 3002 } as const;

/**
 * Points a configuration's references to the reference stack's default addresses at the addresses
 * `npm start` actually bound (PLATFORM_PORT, UPSTREAM_PORT), whatever config file was given: an
 * upstream `url` and the `scopes.endpoint` on a loopback host at port 3001 or 3002 take the bound
 * origin (path kept). A key set through its GATEWAY_* variable is left alone. Mutates and returns `config`.
 */
export function followBoundPorts(
  config: GatewayConfig,
  bound: { upstreamUrl: string; platformUrl: string },
  env: Record<string, string | undefined> = process.env,
): GatewayConfig {
  config.upstreams.forEach((upstream, index) => {
    if (upstream.url === undefined || env[`GATEWAY_UPSTREAMS_${index}_URL`] !== undefined) return;
    upstream.url = rebased(upstream.url, REFERENCE_PORTS.upstream, bound.upstreamUrl);
  });
  if (config.scopes.endpoint !== undefined && env.GATEWAY_SCOPES_ENDPOINT === undefined) {
    config.scopes.endpoint = rebased(config.scopes.endpoint, REFERENCE_PORTS.platform, bound.platformUrl);
  }
  return config;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function rebased(url: string, defaultPort: number, boundUrl: string): string {
  const parsed = new URL(url);
  if (!LOOPBACK.has(parsed.hostname) || parsed.protocol !== 'http:' || Number(parsed.port) !== defaultPort) return url;
  const bound = new URL(boundUrl);
  parsed.host = bound.host;
  return parsed.toString();
}
