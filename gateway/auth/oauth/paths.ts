/** Where the pages of one sign-in live: `${INTERACTION_PREFIX}<uid>` (interaction.ts serves them). */
export const INTERACTION_PREFIX = '/oauth/interaction/';

/**
 * The built-in authorization server's paths: its `/oauth/*` endpoints and pages and the RFC 8414 / OIDC
 * discovery documents. A leaf (no oidc-provider import), so the edge can name them without loading the server.
 */
export function isAuthorizationServerPath(path: string): boolean {
  return path.startsWith('/oauth/') || path === '/.well-known/oauth-authorization-server' || path === '/.well-known/openid-configuration';
}

/** oidc-provider's endpoints, by its name for each (provider.ts `routes`): every one under `/oauth/`. */
export const AUTHORIZATION_SERVER_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  introspection: '/oauth/introspect',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
} as const;

/** The sign-in pages' steps after `${INTERACTION_PREFIX}<uid>` (interaction.ts). */
const INTERACTION_STEPS = new Set(['login', 'consent', 'abort']);
const ENDPOINTS = new Set<string>(Object.values(AUTHORIZATION_SERVER_ROUTES));

/**
 * The `route` label (http_request_duration_seconds) of an authorization server path: the endpoint,
 * `/oauth/register/{clientId}` (registration management), `/oauth/interaction/{uid}[/step]`, a
 * discovery document, else `/oauth/{*rest}`. Bounded whatever the request's path: never a uid or a
 * made-up endpoint name.
 */
export function authorizationServerRoute(path: string): string {
  // Outside /oauth/, an authorization server path is one of the two discovery documents.
  if (!path.startsWith('/oauth/')) return isAuthorizationServerPath(path) ? path : 'unmatched';
  if (ENDPOINTS.has(path)) return path;
  if (path.startsWith(INTERACTION_PREFIX)) {
    const [, step, ...more] = path.slice(INTERACTION_PREFIX.length).split('/');
    if (step === undefined) return `${INTERACTION_PREFIX}{uid}`;
    return `${INTERACTION_PREFIX}{uid}/${more.length === 0 && INTERACTION_STEPS.has(step) ? step : '{*rest}'}`;
  }
  if (/^\/oauth\/register\/[^/]+$/.test(path)) return '/oauth/register/{clientId}';
  return '/oauth/{*rest}';
}
