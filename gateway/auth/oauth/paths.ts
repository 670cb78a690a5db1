/** Where the pages of one sign-in live: `${INTERACTION_PREFIX}<uid>` (interaction.ts serves them). */
export const INTERACTION_PREFIX = '/oauth/interaction/';

const DISCOVERY = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

/**
 * The path a public URL puts in front of the gateway's own paths: `''`, or `/prefix` for
 * `https://host/prefix` (a reverse proxy that strips it sends the gateway `/oauth/...`, `/mcp`).
 */
export function pathPrefix(url: string | undefined): string {
  return ((url && URL.parse(url)?.pathname) || '').replace(/\/+$/, '');
}

/**
 * The discovery document a path asks for, as oidc-provider serves it: the bare path, or RFC 8414 §3's
 * form for an issuer with a path (`/.well-known/oauth-authorization-server/prefix`; the OIDC name the
 * same way); undefined for any other path.
 */
export function discoveryPath(path: string, prefix: string): string | undefined {
  return DISCOVERY.find((name) => path === name || (prefix !== '' && path === `${name}${prefix}`));
}

/**
 * The built-in authorization server's paths: its `/oauth/*` endpoints and pages and the RFC 8414 / OIDC
 * discovery documents (`prefix`: the issuer's path). A leaf (no oidc-provider import), so the edge can
 * name them without loading the server.
 */
export function isAuthorizationServerPath(path: string, prefix = ''): boolean {
  return path.startsWith('/oauth/') || discoveryPath(path, prefix) !== undefined;
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
/** oidc-provider's other paths under /oauth/ (its router's `/:uid` and `/:clientId` ones, end_session's two steps). */
const SUBPATHS = [/^\/oauth\/(?:authorize|register|device)\/[^/]+$/, /^\/oauth\/logout\/(?:confirm|success)$/];

/**
 * Whether a path under `/oauth/` (the sign-in pages' aside) is spelled as one of oidc-provider's routes is:
 * its router also dispatches letters of another case and a trailing slash (`/oauth/REGISTER/`), which
 * would pass anything here that decides by path (the registration budget: review) without being counted.
 * Such spellings are refused before it (README: routing is strict). Returns the canonical spelling for a
 * refused one that has one (for the error), true for a canonical path, false for none.
 */
export function canonicalOAuthPath(path: string): true | string | false {
  if (ENDPOINTS.has(path) || SUBPATHS.some((pattern) => pattern.test(path))) return true;
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const folded = trimmed.toLowerCase();
  for (const endpoint of ENDPOINTS) if (endpoint === folded) return endpoint;
  const [, , endpoint, ...rest] = trimmed.split('/');
  const respelled = `/oauth/${endpoint?.toLowerCase()}${rest.length ? `/${rest.join('/')}` : ''}`;
  if (SUBPATHS.some((pattern) => pattern.test(respelled))) return respelled;
  if (SUBPATHS.some((pattern) => pattern.test(folded))) return folded;
  return false;
}

/**
 * The `route` label (http_request_duration_seconds) of an authorization server path: the endpoint,
 * `/oauth/register/{clientId}` (registration management), `/oauth/interaction/{uid}[/step]`, a
 * discovery document, else `/oauth/{*rest}`. Bounded whatever the request's path: never a uid or a
 * made-up endpoint name.
 */
export function authorizationServerRoute(path: string, prefix = ''): string {
  // Outside /oauth/, an authorization server path is one of the two discovery documents (`prefix`: in RFC 8414 §3's form too).
  if (!path.startsWith('/oauth/')) return discoveryPath(path, prefix) ?? 'unmatched';
  if (ENDPOINTS.has(path)) return path;
  if (path.startsWith(INTERACTION_PREFIX)) {
    const [, step, ...more] = path.slice(INTERACTION_PREFIX.length).split('/');
    if (step === undefined) return `${INTERACTION_PREFIX}{uid}`;
    return `${INTERACTION_PREFIX}{uid}/${more.length === 0 && INTERACTION_STEPS.has(step) ? step : '{*rest}'}`;
  }
  if (/^\/oauth\/register\/[^/]+$/.test(path)) return '/oauth/register/{clientId}';
  return '/oauth/{*rest}';
}
