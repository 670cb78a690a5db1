import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { GatewayConfig } from '../../config/types.ts';
import type { OAuth } from '../auth/oauth/index.ts';
import { throttled, type Logger } from '../obs/log.ts';
import type { Exchange } from './exchange.ts';

/** What these read of a request: its scheme and Host (a Koa Context or an Exchange). */
type Context = Pick<Exchange, 'protocol' | 'host'>;

/** The gateway's public base URL: `publicUrl` from config, else the scheme and Host of the request. */
export function baseUrl(config: GatewayConfig, ctx: Context): string {
  return (config.publicUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
}

/** Why no token is taken on a request ({@link tokenAudience}): its Host names another port, or address, than it reached. */
export interface Misdirected {
  refused: string;
  /** What the Host names: its host and port (80 or 443 when it names none), `127.0.0.1:8080`. */
  named: string;
  /** What the connection reached: the socket's local address and port, `127.0.0.1:3000` (`port 3000` without an address). */
  reached: string;
}

/**
 * The URL a bearer token presented at `resourcePath` is checked for (its `aud`, MCP authorization §Token
 * Audience Binding): {@link baseUrl} + the path; or {@link Misdirected}, why no token is accepted on this request.
 * In `oauth.mode: external` with neither `publicUrl` nor `oauth.external.audience` that URL comes from the
 * Host header, whose hostname the edge checks (config/hosts.ts `checksHost`) but whose port it does not:
 * the port must then be the one the connection reached (the socket's local port; a request served in
 * process has none, and keeps the Host's), else a token minted for another local resource
 * (`http://127.0.0.1:5499/mcp`) would be taken on any other port by a caller sending `Host: 127.0.0.1:5499`.
 * On a loopback connection an IP-literal Host must also name the address reached: the loopback Host check passes
 * `127.0.0.1` and `[::1]` alike, so a
 * token minted for another server on the same port of the other address (`http://[::1]:3000/mcp` beside a
 * gateway on 127.0.0.1:3000) would be taken. A local forwarder that changes the address (an SSH tunnel or socat
 * reaching a gateway bound on `::` through `::1` with a Host naming 127.0.0.1) is refused 421 too: it fails closed,
 * and `publicUrl` is the way through. Off loopback a NAT or port mapping (docker, a Service) may
 * stand between, and a name (`localhost`) may resolve to either: both are left to the edge's name check.
 * The MCP endpoints, their RFC 9728 documents and the console's lookup all read this one rule.
 */
export function tokenAudience(
  config: GatewayConfig,
  ctx: Context & { req: { socket?: { localPort?: number; localAddress?: string } } },
  resourcePath: string,
): string | Misdirected {
  const url = `${baseUrl(config, ctx)}${resourcePath}`;
  if (config.oauth.mode !== 'external' || config.publicUrl || config.oauth.external.audience) return url;
  const reached = ctx.req.socket?.localPort;
  const named = URL.parse(url);
  if (reached === undefined || !named) return url;
  const port = named.port ? Number(named.port) : named.protocol === 'https:' ? 443 : 80;
  const localAddress = ctx.req.socket?.localAddress;
  const local = localAddress !== undefined && ipaddr.isValid(localAddress) ? ipaddr.process(localAddress) : undefined;
  const where = { named: `${named.hostname}:${port}`, reached: local ? `${written(local)}:${reached}` : `port ${reached}` };
  if (port !== reached)
    return {
      refused: `The request's Host names port ${port}, but it reached the gateway on port ${reached}; without publicUrl the audience a token must name is the endpoint's URL on the port it was reached on (reached through a tunnel, port forward or proxy on another port? set publicUrl to the URL clients use)`,
      ...where,
    };
  const literal = named.hostname.replace(/^\[(.*)\]$/, '$1');
  if (local?.range() !== 'loopback' || !isIP(literal) || ipaddr.process(literal).toNormalizedString() === local.toNormalizedString()) return url;
  return {
    refused: `The request's Host names the address ${named.hostname}, but it reached the gateway at ${written(local)}; without publicUrl the audience a token must name is the endpoint's URL at the address it was reached at (reached through a tunnel, port forward or proxy? set publicUrl to the URL clients use)`,
    ...where,
  };
}

/** An address as a URL's host writes it: IPv6 in brackets (`[::1]`), IPv4 (an IPv4-mapped one too) as a dotted quad. */
function written(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.kind() === 'ipv6' ? `[${address.toString()}]` : address.toString();
}

/**
 * The operator's side of a {@link Misdirected} answer (421, RFC 9110 §15.5.20): a warn line at most once a
 * minute, naming where requests were sent and where they arrived, and the setting, because the client that
 * gets the 421 may show its message to nobody. The Host's host is one the edge allowed (a checked name or
 * an IP literal, never user information: request-target.ts `readHost`); no token or other header is written.
 */
export function misdirectionWarning(log: Logger): (misdirected: Misdirected) => void {
  const warn = throttled(60_000);
  return ({ named, reached }) =>
    warn((notLogged) =>
      log.warn(
        { host: named, reached, ...(notLogged ? { notLogged } : {}) },
        `requests reach the gateway at ${reached} with a Host naming ${named} (a tunnel, port forward or proxy?): without publicUrl, oauth.mode external takes no access token there and answers 421; set publicUrl to the URL clients use`,
      ),
    );
}

/** RFC 9728 §3.1: the metadata URL of a resource inserts the well-known path before the resource's path. */
export function protectedResourceMetadataUrl(config: GatewayConfig, ctx: Context, resourcePath: string): string {
  return `${baseUrl(config, ctx)}/.well-known/oauth-protected-resource${resourcePath}`;
}

/**
 * Whether the gateway offers OAuth: its RFC 9728 documents name an authorization server (`oauth.mode`
 * builtin or external brings one, `authorizationServers` lists more), as MCP authorization requires of
 * them ("MUST include at least one authorization server", 2025-11-25 and 2026-07-28 basic/authorization
 * §Authorization Server Location). Without one (`oauth.mode: off`, no `authorizationServers`) the gateway
 * serves no such document and its challenges point at none, so an OAuth-capable client does not start a
 * flow that cannot work: only the credential headers are taken.
 */
export function offersOAuth(config: GatewayConfig): boolean {
  return config.oauth.mode !== 'off' || config.authorizationServers.length > 0;
}

/**
 * Whether the origin itself (`/.well-known/oauth-protected-resource`, resource = the base URL) has an
 * RFC 9728 document besides each MCP endpoint. Not in `oauth.mode: external`: a token is accepted only
 * for the endpoint it names in `aud` (or for `oauth.external.audience` everywhere), never for the
 * origin, and §3.3 binds a document's `resource` to the URL it is served at, so a root document would
 * name an audience every endpoint refuses. Clients find each endpoint's document through its challenge's
 * `resource_metadata` (§5.1) or the path-inserted URL (§3.1), which MCP authorization tries first.
 */
export function servesOriginDocument(config: GatewayConfig): boolean {
  return config.oauth.mode !== 'external';
}

/**
 * The `WWW-Authenticate` value of a refusal on the endpoint at `resourcePath` (RFC 6750 §3: `Bearer`, then
 * `params` such as `error`, `scope`), pointing at its RFC 9728 metadata (RFC 9728 §5.1 `resource_metadata`)
 * where the gateway {@link offersOAuth}, else naming a `realm` only.
 */
export function bearerChallenge(config: GatewayConfig, ctx: Context, resourcePath: string, params: Record<string, string> = {}): string {
  const pointer = offersOAuth(config) ? { resource_metadata: protectedResourceMetadataUrl(config, ctx, resourcePath) } : { realm: REALM };
  return `Bearer ${Object.entries({ ...pointer, ...params })
    .map(([name, value]) => `${name}="${value}"`)
    .join(', ')}`;
}

const REALM = 'MCP catalog gateway';

/**
 * The RFC 9728 Protected Resource Metadata document for `resourcePath` ('' for the origin itself):
 * the resource identifier, the configured authorization servers plus the one `oauth` brings (MCP
 * 2025-11-25 authorization: at least one), its `scopes_supported`, and header-only bearer tokens.
 */
export function protectedResourceMetadata(config: GatewayConfig, ctx: Context, resourcePath: string, oauth?: OAuth['metadata']): Record<string, unknown> {
  return {
    resource: `${baseUrl(config, ctx)}${resourcePath}`,
    authorization_servers: [...new Set([...config.authorizationServers, ...(oauth?.authorization_servers ?? [])])],
    ...(oauth?.scopes_supported.length ? { scopes_supported: oauth.scopes_supported } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'MCP catalog gateway',
  };
}
