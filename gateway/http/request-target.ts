import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The target of a request read strictly: the Host header (RFC 9110 §7.2: `uri-host [ ":" port ]`) and an
 * absolute-form request-target (RFC 9112 §3.2.2). Pure but for {@link toOriginForm}, which rewrites the
 * request so that everything after the edge sees one origin-form target and its Host.
 */

/** A Host header read: its host in lower case (IPv6 in brackets, as in a URL) and its port, if any. */
export interface HostValue {
  hostname: string;
  port?: number;
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const REG_NAME = /^(?=.{1,253}\.?$)[a-z\d_](?:[a-z\d_-]{0,61}[a-z\d_])?(?:\.[a-z\d_](?:[a-z\d_-]{0,61}[a-z\d_])?)*\.?$/;
/** A last label a WHATWG URL parser reads as a number, so that the whole name becomes an IPv4 address (`2130706433`, `127.1`, `0x7f.1`). */
const NUMERIC_LABEL = /(?:^|\.)(?:\d+|0x[\da-f]*)\.?$/;

/**
 * Reads a Host header value, or says why it is not one (the reason never repeats the value: it may hold a
 * credential, `user:password@host`). Refused: user information, anything but a DNS name, a dotted-quad
 * IPv4 address or a bracketed IPv6 address (no zone), and names a URL parser would take for an IPv4
 * address in another notation (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`): a check of the name would
 * pass what the rest of the gateway then reads as another host.
 */
export function readHost(value: string): HostValue | { refused: string } {
  if (value.includes('@')) return { refused: 'it carries user information (user:password@), which a Host never does' };
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d{0,5}))?$/.exec(value);
  if (!match) return { refused: 'it is not a host with an optional port' };
  const host = match[1]!.toLowerCase();
  const port = match[2] ? Number(match[2]) : undefined;
  if (port !== undefined && port > 65535) return { refused: 'its port is over 65535' };
  const value6 = host.startsWith('[') ? host.slice(1, -1) : undefined;
  if (value6 !== undefined)
    return isIP(value6) === 6 && !value6.includes('%')
      ? { hostname: host, port }
      : { refused: 'its bracketed address is not an IPv6 address (without a zone)' };
  if (IPV4.test(host)) return { hostname: host, port };
  if (!REG_NAME.test(host)) return { refused: 'its host is not a DNS name or an IP address' };
  if (NUMERIC_LABEL.test(host)) return { refused: 'its host is numeric but not a dotted-quad IPv4 address (such as 127.0.0.1)' };
  return { hostname: host, port };
}

/**
 * Rewrites an absolute-form request-target (`POST http://host:port/mcp`, which a client may send to any
 * server, RFC 9112 §3.2.2) to origin-form: its authority replaces the Host header, as the RFC asks, and is
 * then checked like one. An origin-form target is left as it is; `OPTIONS *` too.
 * @returns why the target is refused (a scheme other than http(s), a target of no known form), or undefined.
 */
export function toOriginForm(req: IncomingMessage): string | undefined {
  const target = req.url ?? '/';
  if (target.startsWith('/') || (target === '*' && req.method === 'OPTIONS')) return undefined;
  const absolute = /^([a-z][a-z\d+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(target);
  if (!absolute) return 'the request target is neither a path (origin-form) nor an absolute http(s) URL';
  if (!/^https?$/i.test(absolute[1]!)) return 'an absolute request target must be an http or https URL';
  req.headers.host = absolute[2]!;
  const rest = absolute[3]!;
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  return undefined;
}

/**
 * Whether the request carries more than one Host field, which RFC 9112 §3.2 answers with 400: Node keeps
 * the first and drops the rest, so a check of the first would pass what another hop might read as the host.
 */
export function hasDuplicateHost(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return true;
  }
  return false;
}
