/** Where the pages of one sign-in live: `${INTERACTION_PREFIX}<uid>` (interaction.ts serves them). */
export const INTERACTION_PREFIX = '/oauth/interaction/';

/**
 * The built-in authorization server's paths: its `/oauth/*` endpoints and pages and the RFC 8414 / OIDC
 * discovery documents. A leaf (no oidc-provider import), so the edge can name them without loading the server.
 */
export function isAuthorizationServerPath(path: string): boolean {
  return path.startsWith('/oauth/') || path === '/.well-known/oauth-authorization-server' || path === '/.well-known/openid-configuration';
}
