import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { GatewayConfig } from '../../config/types.ts';
import { trustedProxyList } from '../../config/trusted-proxies.ts';

/**
 * The client address of a request: the one address every per-address budget (registrations, sign-in
 * attempts, the console's admin token) and the access log count a request under.
 *
 * Without `security.trustedProxies` it is the socket's peer and X-Forwarded-For is never read: a caller
 * that reaches the gateway directly cannot choose its own address. When the peer is a trusted proxy, the
 * X-Forwarded-For entries are walked from the right (each proxy appends the address it received from,
 * nginx's `$proxy_add_x_forwarded_for`) and the first one that is not itself a trusted proxy is the
 * client: whatever a caller wrote to the left of it is ignored. An entry that is no address (`unknown`,
 * an RFC 7239 obfuscated name) ends the walk at the proxy that sent it. IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`) are written as IPv4, and an entry's port (`1.2.3.4:5678`, `[::1]:80`) is dropped.
 */
export function clientAddressOf(config: Pick<GatewayConfig, 'security'>): (req: IncomingMessage) => string {
  const entries = config.security.trustedProxies;
  const peer = (req: IncomingMessage) => plainAddress(req.socket.remoteAddress ?? '') ?? '';
  if (entries.length === 0) return peer;
  const trusted = trustedProxyList(entries);
  const isTrusted = (address: string) => trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return (req) => {
    let client = peer(req);
    const header = req.headers['x-forwarded-for'];
    if (!client || !isTrusted(client) || header === undefined) return client;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0 && isTrusted(client); i--) {
      const hop = plainAddress(hops[i]!);
      if (hop === undefined) break;
      client = hop;
    }
    return client;
  };
}

/**
 * An address as the budgets key it: IPv4-mapped IPv6 as IPv4, IPv6 in its one canonical text (RFC 5952:
 * `2001:db8:aaaa:0:0:0:0:1` and `2001:DB8:AAAA::1` are one address), a port dropped; undefined if it is
 * no address.
 */
export function plainAddress(text: string): string | undefined {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.indexOf(':'));
  const version = isIP(address);
  if (version === 4) return address;
  if (version !== 6) return undefined;
  const parsed = ipaddr.IPv6.parse(address);
  return parsed.isIPv4MappedAddress() ? parsed.toIPv4Address().toString() : parsed.toRFC5952String();
}
