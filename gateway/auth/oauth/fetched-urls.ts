import { BlockList, isIP } from 'node:net';

/**
 * Addresses the authorization server never fetches a client's URL from (SSRF, RFC 7591 §5 and
 * draft-ietf-oauth-client-id-metadata-document §6.3): unspecified, loopback, private (RFC 1918, RFC
 * 4193), shared (RFC 6598), link-local, benchmarking, multicast and reserved ranges, IPv4-mapped and
 * NAT64 IPv6 (which reach the same IPv4 hosts).
 */
const specialUse = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  specialUse.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
] as const)
  specialUse.addSubnet(net, prefix, 'ipv6');
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** A URL's host without the brackets of an IPv6 literal (`[::1]` -> `::1`). */
export const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');
/** `localhost` and its subdomains, which resolve to loopback (RFC 6761 §6.3). */
export const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');
/** An IP address in 127.0.0.0/8 or ::1. */
export const isLoopbackAddress = (address: string) => loopback.check(address, familyOf(address));
/** An IP address in one of the ranges above. */
export const isSpecialUseAddress = (address: string) => specialUse.check(address, familyOf(address));

/**
 * Why the authorization server must not fetch `value`, a client metadata URL it would fetch itself
 * (`jwks_uri` when the client authenticates with `private_key_jwt`, `sector_identifier_uri` at
 * registration), or undefined when it may: the URL must be https on a host that is neither a
 * loopback name nor a special-use address literal. A name that resolves to such an address is refused
 * when fetched (oidc-provider's fetch checks the address it connects to).
 */
export function unfetchableUrl(value: unknown): string | undefined {
  const url = typeof value === 'string' ? URL.parse(value) : null;
  if (!url) return 'is not a URL';
  if (url.protocol !== 'https:') return 'must use https';
  const host = bareHost(url);
  if (isLoopbackName(host)) return `must not name a loopback host (${host})`;
  if (isIP(host) !== 0 && isSpecialUseAddress(host)) return `must not name a loopback, private, link-local or other special-use address (${host})`;
  return undefined;
}
