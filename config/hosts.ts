import type { GatewayConfig } from './types.ts';

/** True for binds only this machine can reach: DNS-rebinding protection is on by default for them. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/**
 * Whether the edge checks each request's Host against a list (gateway/http/edge.ts originRefusal):
 * `security.dnsRebindingProtection`, on by default for a loopback bind, or any `security.allowedHosts`.
 * Where it does not, the Host header is whatever a caller sends.
 */
export function checksHost(config: Pick<GatewayConfig, 'listen' | 'security'>): boolean {
  return (config.security.dnsRebindingProtection ?? isLoopbackHost(config.listen.host)) || config.security.allowedHosts.length > 0;
}
