import type { GatewayConfig } from '../../config/types.ts';
import type { OAuth } from '../auth/oauth/index.ts';
import type { Exchange } from './exchange.ts';

/** What these read of a request: its scheme and Host (a Koa Context or an Exchange). */
type Context = Pick<Exchange, 'protocol' | 'host'>;

/** The gateway's public base URL: `publicUrl` from config, else the scheme and Host of the request. */
export function baseUrl(config: GatewayConfig, ctx: Context): string {
  return (config.publicUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
}

/** RFC 9728 §3.1: the metadata URL of a resource inserts the well-known path before the resource's path. */
export function protectedResourceMetadataUrl(config: GatewayConfig, ctx: Context, resourcePath: string): string {
  return `${baseUrl(config, ctx)}/.well-known/oauth-protected-resource${resourcePath}`;
}

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
