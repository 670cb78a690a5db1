import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors as oidcErrors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { OAuthConfig } from '../../../config/types.ts';
import type { AuthDecision } from '../../obs/audit.ts';
import { loggableUrl, type Logger } from '../../obs/log.ts';
import type { AuthDecisions } from '../decisions.ts';
import { adapterClass, adapterLifetimes, promoteClient, REUSE_REASONS } from './adapter.ts';
import { ClientMetadataError, type createClientMetadataResolver } from './client-metadata.ts';
import { unfetchableUrl } from './fetched-urls.ts';
import { findLimitBreach, type InputLimits } from '../../checks/input-limits.ts';
import { jsonPointer } from '../../checks/json-pointer.ts';
import { clip } from '../../wire/clip.ts';
import type { GrantCredentials } from './grant-credential.ts';
import type { OAuthKeys } from './keys.ts';
import { errorPage, unavailablePage } from './pages.ts';
import { AUTHORIZATION_SERVER_ROUTES, INTERACTION_PREFIX, pathPrefix } from './paths.ts';
import type { ResourceSet } from './resource-url.ts';
import { noteRevocation, revocationResult } from './revocation.ts';
import { storeUnavailable, type OAuthStore } from './store.ts';

/**
 * Client metadata URLs oidc-provider fetches on its own: `jwks_uri` (a `private_key_jwt` client's keys,
 * at the token endpoint) and `sector_identifier_uri` (at registration). `request_uris` and the
 * back-channel URIs belong to features that are off, so oidc-provider drops them unread.
 */
const FETCHED_URL_FIELDS = ['jwks_uri', 'sector_identifier_uri'] as const;
/** How deep client metadata may nest: an inline JWK Set (`jwks.keys[].x5c[]`) is 4 levels; lengths are bounded by `clients.maxMetadataBytes`. */
const METADATA_SHAPE: InputLimits = {
  jsonDepth: 8,
  stringLength: Number.POSITIVE_INFINITY,
  arrayLength: Number.POSITIVE_INFINITY,
  objectMembers: Number.POSITIVE_INFINITY,
};

/** The detail of the invalid_grant a refresh gets when the key behind its grant is refused now. */
const KEY_REVOKED = 'the key this grant was signed in with is no longer valid';

export interface ProviderDeps {
  config: OAuthConfig;
  issuer: string;
  store: OAuthStore;
  keys: OAuthKeys;
  resources: ResourceSet;
  /** `oauth.scopes`, without duplicates. */
  supported: readonly string[];
  log: Logger;
  /** Client ID metadata documents, when enabled. */
  cimd?: ReturnType<typeof createClientMetadataResolver>;
  credentials: GrantCredentials;
  decide: AuthDecisions;
  /**
   * What the key behind a grant holds now (its credential asked of the gateway's sources again): its
   * scopes; `revoked` when a source refuses it; undefined when that cannot be told right now.
   */
  currentScopes(grantId: string): Promise<readonly string[] | 'revoked' | undefined>;
}

/** The request id the gateway's edge gave the request (echoed in X-Request-Id), for the audit record. */
export function requestIdOf(ctx: { res: { getHeader(name: string): unknown } }): string | undefined {
  const id = ctx.res.getHeader('x-request-id');
  return typeof id === 'string' ? id : undefined;
}

/**
 * The oidc-provider instance of the built-in authorization server: which of the library's features are
 * on and how they are tuned. What the library does: RFC 8414 metadata (`/.well-known/oauth-authorization-server`,
 * also `/.well-known/openid-configuration`), RFC 7591 registration, the authorization code grant with
 * PKCE S256 only (OAuth 2.1 §4.1, `plain` and missing challenges refused), exact redirect URI matching,
 * `state`, RFC 9207 `iss`, RFC 8707 resource indicators, refresh token rotation with reuse detection (a
 * consumed refresh token presented again revokes its grant: every code, refresh and access token issued
 * from it), RFC 7009 revocation. Access tokens are JWEs (`dir`/`A256GCM`) under `keys.accessToken`,
 * carrying the grant's wrapped credential (`cpz_cred`) and grant id (`gid`). Ours, on top:
 * - registration: an initial access token when configured (RFC 7591 §3), client metadata of at most
 *   `oauth.clients.maxMetadataBytes`, redirect URIs https or loopback http only (OAuth 2.1 §2.3.1; RFC
 *   8252 §7.3) or a native client's private-use scheme (RFC 8252 §7.1; a client sending no
 *   `application_type` with one is native), `jwks_uri` and `sector_identifier_uri` https on a public host only (fetched-urls.ts:
 *   the server fetches them itself), clients forgotten unless used (adapter.ts);
 * - a refresh is checked before its token is consumed: a resource indicator that is not ours, or not
 *   granted, is `invalid_target` and leaves both tokens alive; the key behind the grant is asked of the
 *   gateway's sources again: refused, the grant is revoked (`invalid_grant`); narrowed, the new access
 *   token carries only what the key still holds;
 * - every decision is recorded (decisions.ts), a token issued keeps its client registered.
 */
export async function createProvider(deps: ProviderDeps): Promise<Provider> {
  const { config, issuer, store, keys, resources, supported, log, cimd } = deps;
  const Adapter = adapterClass(store, {
    ...adapterLifetimes(config),
    keys,
    resolveUrlClient: cimd
      ? async (clientId) => {
          try {
            return await cimd.resolve(clientId);
          } catch (error) {
            log.info({ clientId: loggableUrl(clientId), reason: (error as Error).message }, 'client ID metadata document refused');
            throw new oidcErrors.InvalidClient(error instanceof ClientMetadataError ? error.message : 'client ID metadata document could not be loaded');
          }
        }
      : undefined,
  });

  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'gateway-es256', use: 'sig', alg: 'ES256' };

  const accessTokenFormat = {
    accessTokenTTL: config.accessTokenTtlSeconds,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: false as const, encrypt: { alg: 'dir' as const, enc: 'A256GCM' as const, key: keys.accessToken } },
  };
  /** The scopes the key behind a refreshed grant still holds, by request (set in rotateRefreshToken, read by getResourceServerInfo). */
  const stillHeld = new WeakMap<KoaContextWithOIDC, readonly string[]>();

  const configuration: Configuration = {
    adapter: Adapter as unknown as Configuration['adapter'],
    clients: [],
    jwks: { keys: [signingKey as never] },
    cookies: {
      keys: keys.cookies,
      names: { interaction: '_oauth_interaction', resume: '_oauth_resume', session: '_oauth_session' },
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    features: {
      devInteractions: { enabled: false },
      registration: {
        enabled: config.registration,
        issueRegistrationAccessToken: false,
        ...(config.initialAccessToken ? { initialAccessToken: config.initialAccessToken } : {}),
      },
      // RFC 7009 §2.1: a client may revoke only its own tokens; for another client's, a public client is
      // answered 200 without effect (no oracle for guessing tokens), a confidential one invalid_request.
      revocation: {
        enabled: true,
        allowedPolicy: async (ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') {
            noteRevocation(ctx, 'token_of_another_client');
            return false;
          }
          throw new oidcErrors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      introspection: { enabled: false },
      // The MCP endpoints take bearer tokens only (RFC 6750); a DPoP-bound token they would accept without its
      // proof binds nothing, and a client using DPoP as RFC 9449 says would be refused there (try-out): not offered.
      dPoP: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resources.defaultResource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, indicator) => {
          const audience = resources.resolve(indicator);
          if (!audience) throw new oidcErrors.InvalidTarget('resource is not an MCP endpoint of this gateway');
          return { ...accessTokenFormat, scope: (stillHeld.get(ctx) ?? supported).join(' '), audience };
        },
      },
    },
    // Listed so that the validator sees every client's whole metadata (registration, metadata documents, stored clients).
    extraClientMetadata: {
      properties: ['redirect_uris', ...FETCHED_URL_FIELDS],
      validator: (ctx, key, value, metadata) => {
        if ((FETCHED_URL_FIELDS as readonly string[]).includes(key)) {
          // SSRF: the authorization server fetches these itself (RFC 7591 §5), so a stranger's registration
          // must not point it at the gateway's own network. RFC 7591 §3.2.2: invalid_client_metadata, naming the field.
          const why = value === undefined ? undefined : unfetchableUrl(value);
          if (why) throw new oidcErrors.InvalidClientMetadata(`${key} ${why}`);
          // The server may fetch it now: whatever the answer, the registration's budget point stays spent (routes.ts).
          if (ctx && value !== undefined) fetchingRegistrations.add(ctx.req);
          return;
        }
        if (key !== 'redirect_uris') return;
        // Client metadata is flat (RFC 7591 §2: strings, arrays of strings, a JWK Set): a body nested
        // thousands deep overflowed the stack below (a 500 to anyone, unauthenticated: try-out).
        const deep = findLimitBreach(metadata, METADATA_SHAPE);
        if (deep)
          throw new oidcErrors.InvalidClientMetadata(`client metadata nests deeper than ${METADATA_SHAPE.jsonDepth} levels (at ${jsonPointer(deep.path)})`);
        const bytes = Buffer.byteLength(JSON.stringify(metadata));
        if (bytes > config.clients.maxMetadataBytes)
          throw new oidcErrors.InvalidClientMetadata(`client metadata is ${bytes} bytes; at most ${config.clients.maxMetadataBytes} are accepted`);
        // ctx is there for a registration only (a stored client or a metadata document has its application_type written).
        if (ctx) inferApplicationType(metadata, (ctx.oidc.body ?? {}).application_type, Array.isArray(value) ? value : []);
        for (const [i, uri] of (Array.isArray(value) ? value : []).entries()) {
          // Before URL parsing, which drops tabs and line breaks and reads '\\' as '/': what was registered
          // would not be what the browser is sent to, and the raw text was stored and echoed back (try-out).
          // At registration only (ctx): a client stored before this rule still loads (review: its refresh tokens
          // and revocations were answered invalid_redirect_uri); the browser is sent to the URI as parsed, as before.
          const malformed = ctx && typeof uri === 'string' ? redirectUriTextProblem(uri) : undefined;
          if (malformed) throw new oidcErrors.InvalidClientMetadata(`redirect_uris item ${i + 1} ${malformed}`);
          const url = typeof uri === 'string' ? URL.parse(uri) : null;
          // RFC 3986 §3.2.1 user info has no use in a redirect URI (OAuth 2.1, RFC 8252 give it none) and
          // misleads whoever reads it: https://accounts.google.com@evil.example/cb returns to evil.example.
          if (url && (url.username || url.password))
            throw new oidcErrors.InvalidClientMetadata(
              `redirect_uris must not hold user info (a user name or password before '@'): item ${i + 1} does, and would send the user to ${url.host}`,
            );
          const badPort = typeof uri === 'string' ? loopbackPortProblem(uri) : undefined;
          if (badPort && ctx) throw new oidcErrors.InvalidClientMetadata(`redirect_uris item ${i + 1} ${badPort}`);
          // Stored before the port rule: it loads; redirectUriAllowed refuses such a port in each request instead.
          if (badPort) continue;
          // OAuth 2.1 §2.3.1 (and RFC 8252 §7.3): plain http only for a loopback redirect (a native app's own listener),
          // its host written as the authorize step matches it on any port (loopbackWithoutPort): URL parsing read
          // 0x7f000001, 2130706433 and 127.0.0.2 as loopback too, registered, then never matched (try-out).
          if (url?.protocol === 'http:' && loopbackWithoutPort(uri as string) === undefined) {
            // Scheme and host are case-insensitive (RFC 3986 §6.2.2.1) but loopback URIs are matched as written.
            const lowered = (uri as string).replace(/^[^:]+:\/\/[^/?#]*/, (head) => head.toLowerCase());
            if (lowered !== uri && loopbackWithoutPort(lowered) !== undefined)
              throw new oidcErrors.InvalidClientMetadata(
                `redirect_uris item ${i + 1} has upper-case letters in its scheme or host: write it ${lowered} (loopback redirect URIs are matched as written, on any port)`,
              );
            // A description starting with redirect_uris makes oidc-provider's error invalid_redirect_uri (RFC 7591 §3.2.2).
            throw new oidcErrors.InvalidClientMetadata(
              'redirect_uris must use https, or http on a loopback address written 127.0.0.1, [::1] or localhost (any port)',
            );
          }
        }
      },
    },
    // Called by oidc-provider for every authorization request, after the client, redirect URI, PKCE and
    // resource were checked (so a refusal here cannot be used to bounce a browser anywhere unchecked).
    extraParams: { scope: async (_ctx, scope) => checkAskedScope(scope, supported) },
    pkce: { required: () => true },
    responseTypes: ['code'],
    // The platform scopes are resource scopes (getResourceServerInfo); they are listed here too because
    // RFC 7591 registration checks a client's `scope` metadata against this list (MCP clients register
    // with scopes_supported), so consent records them on both sides of the grant.
    scopes: ['openid', 'offline_access', ...supported],
    claims: { openid: ['sub'] },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    clockTolerance: 5,
    allowOmittingSingleRegisteredRedirectUri: false,
    ttl: {
      AccessToken: config.accessTokenTtlSeconds,
      AuthorizationCode: config.authorizationCodeTtlSeconds,
      // Rotation does not extend the refresh window: a sign-in is good for refreshTokenTtlSeconds, then the user signs in again.
      RefreshToken: (ctx) => ctx?.oidc?.entities.RotatedRefreshToken?.remainingTTL ?? config.refreshTokenTtlSeconds,
      Grant: config.refreshTokenTtlSeconds,
      Interaction: config.interactionTtlSeconds,
      Session: config.interactionTtlSeconds,
      IdToken: config.accessTokenTtlSeconds,
    },
    // Always rotates; called after oidc-provider's own checks and before the token is consumed.
    rotateRefreshToken: async (ctx) => {
      const refreshToken = ctx.oidc.entities.RefreshToken!;
      const requested = ctx.oidc.params?.resource;
      for (const indicator of Array.isArray(requested) ? requested : requested === undefined ? [] : [requested]) {
        if (typeof indicator !== 'string' || !resources.resolve(indicator) || !refreshToken.resourceIndicators.has(indicator))
          throw new oidcErrors.InvalidTarget('resource was not granted to this refresh token');
      }
      const held = await deps.currentScopes(refreshToken.grantId!);
      if (held === 'revoked') {
        await new Adapter('Grant').revokeByGrantId(refreshToken.grantId!);
        throw new oidcErrors.InvalidGrant(KEY_REVOKED);
      }
      if (held) stillHeld.set(ctx, held);
      return true;
    },
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Every authorization goes through our sign-in: a grant is bound to the credential entered for it.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    extraTokenClaims: async (_ctx, token) => {
      if (token.kind !== 'AccessToken') return undefined;
      const grantId = (token as { grantId?: string }).grantId;
      const wrapped = grantId ? await deps.credentials.wrapped(grantId) : undefined;
      if (!wrapped) throw new oidcErrors.InvalidGrant('grant is no longer valid');
      return { cpz_cred: wrapped, gid: grantId };
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: async (_ctx, interaction) => `${pathPrefix(issuer)}${INTERACTION_PREFIX}${interaction.uid}` },
    routes: AUTHORIZATION_SERVER_ROUTES,
    discovery: { ...(cimd ? { client_id_metadata_document_supported: true } : {}), service_documentation: undefined },
    renderError: async (ctx, out, error) => {
      ctx.type = 'html';
      const unavailable = storeUnavailable(error);
      ctx.body = unavailable
        ? unavailablePage(unavailable.retryAfterSeconds)
        : errorPage('Sign-in cannot continue', describeError(out as { error?: string; error_description?: string; scope?: string }));
    },
  };

  const provider = new Provider(issuer, configuration);
  if (issuer.startsWith('https:')) provider.proxy = true;
  // RFC 8252 §7.3, OAuth 2.1 §8.4.2: a loopback redirect URI matches with any port (a native client listens
  // on the port it gets). oidc-provider does so for `application_type: native` only; MCP clients register as
  // the default, web, and a client reusing its registration on a new port was refused (OAuth try-out).
  // A port out of range or not in canonical decimal (`:65536`, `:08080`) passed as "any port", then the
  // resume after consent could not build the redirect (500 "Invalid URL"; try-out): refused up front, before
  // oidc-provider's own native matching (which reads `:08080` as 8080), on the gateway's error page.
  const exactly = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function (this: { redirectUris: string[] }, value: string): boolean {
    if (loopbackPortProblem(value)) return false;
    if (exactly.call(this, value)) return true;
    const asked = loopbackWithoutPort(value);
    return asked !== undefined && this.redirectUris.some((registered) => loopbackWithoutPort(registered) === asked);
  };
  provider.on('server_error', (_ctx, error) => {
    // A store outage is answered 503 and logged by answerStoreOutages; anything else is ours to fix.
    if (!storeUnavailable(error)) log.error({ err: (error as Error).message }, 'authorization server error');
  });
  provider.on('grant.revoked', (_ctx, grantId) => log.info({ grant: String(grantId).slice(0, 8) }, 'grant revoked'));
  keepRefusalsHome(provider);
  answerUnrouted(provider, config.registration);
  malformedVerifierFirst(provider);
  recordDecisions(provider, deps);
  return provider;
}

/**
 * An authorization request refused at `/oauth/authorize` itself (no `response_type`, no PKCE challenge,
 * `prompt=none`: before anyone signed in) is answered with the gateway's error page, not sent to the
 * client's redirect URI: registration is open, so anyone can register any https URI, and the gateway's
 * origin would bounce a clicked link to it (RFC 9700 §4.11.2, the authorization server as open redirector;
 * security try-out). A refusal after the sign-in pages (the user's access_denied, on the resume route) still
 * goes back to the client, whose URI the user has then been shown.
 */
/** Registration requests whose document names a URL the server fetches itself (`sector_identifier_uri`, `jwks_uri`). */
const fetchingRegistrations = new WeakSet<object>();

/**
 * Whether a registration request named a URL the server may have fetched while deciding it: its refusal keeps its
 * point of `rateLimits.registrations` (routes.ts), which is what bounds how often a stranger can have the gateway
 * fetch a URL of their choosing (review: with refunds, a sector_identifier_uri that failed to load was free).
 */
export function namedFetchedUrl(req: object): boolean {
  return fetchingRegistrations.has(req);
}

/**
 * A request oidc-provider's router does not serve (a method an endpoint does not take, an endpoint that is off:
 * userinfo, introspection) gets an OAuth error body naming it, as the gateway's other refusals under /oauth do
 * (routes.ts), not Koa's bare text "Not Found" (try-out): 405 with `Allow` (RFC 9110 §15.5.6) for an endpoint
 * served with other methods, else 404.
 */
function answerUnrouted(provider: Provider, registration: boolean): void {
  const r = AUTHORIZATION_SERVER_ROUTES;
  const served: Record<string, string> = {
    [r.authorization]: 'GET',
    [r.token]: 'POST',
    [r.revocation]: 'POST',
    [r.jwks]: 'GET',
    [r.pushed_authorization_request]: 'POST',
    ...(registration ? { [r.registration]: 'POST' } : {}),
  };
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    const allow = Object.hasOwn(served, ctx.path) ? served[ctx.path]! : undefined;
    if (allow) {
      ctx.status = 405;
      ctx.set('allow', allow);
      ctx.body = { error: 'invalid_request', error_description: `${ctx.path} answers ${allow}, not ${clip(ctx.method, 20)}` };
    } else {
      ctx.body = { error: 'invalid_request', error_description: `no authorization server endpoint at ${clip(ctx.path, 200)} (it is not offered)` };
      // Koa takes a body set on a status nobody set as a 200.
      ctx.status = 404;
    }
  });
}

function keepRefusalsHome(provider: Provider): void {
  const refused = new WeakMap<object, { error?: string; error_description?: string; scope?: string }>();
  provider.on('authorization.error', (ctx: object, error: unknown) =>
    refused.set(ctx, error as { error?: string; error_description?: string; scope?: string }),
  );
  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as unknown as KoaContextWithOIDC;
    const error = ctx.oidc?.route === 'authorization' ? refused.get(koa) : undefined;
    if (!error) return;
    // Sent away: a redirect, or oidc-provider's self-submitting form_post page.
    const formPost = /form_post/.test(String(ctx.oidc?.params?.response_mode ?? ''));
    const sentAway = (ctx.status >= 300 && ctx.status < 400) || (formPost && ctx.response.is('html') !== false);
    if (!sentAway) return;
    ctx.remove('location');
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body = errorPage('Sign-in cannot continue', describeError(error));
  });
}

/**
 * A `code_verifier` outside RFC 7636 §4.1 (43-128 characters of A-Z a-z 0-9 - . _ ~) is `invalid_request`
 * naming what is wrong (RFC 6749 §5.2: a malformed parameter), whatever the code: oidc-provider checks the
 * verifier only after finding the code, so a 200-character verifier with an unknown or expired code was
 * invalid_grant (try-out). Rewritten when the refusal is raised (before the audit record, which then reads
 * invalid_request): nothing was consumed or revoked, as the verifier is checked before the code is used up.
 */
function malformedVerifierFirst(provider: Provider): void {
  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: unknown) => {
    // invalid_grant and invalid_request only: another refusal (invalid_client's 401 and its challenge) is not the verifier's to replace (review).
    const code = (error as { error?: unknown }).error;
    if (ctx.oidc?.params?.grant_type !== 'authorization_code' || (code !== 'invalid_grant' && code !== 'invalid_request')) return;
    const problem = codeVerifierProblem(ctx.oidc.params.code_verifier);
    if (!problem) return;
    Object.assign(error as object, { error: 'invalid_request', message: 'invalid_request', error_description: problem });
    const out = { error: 'invalid_request', error_description: problem };
    ctx.status = 400;
    ctx.body = ctx.response.is('html') ? errorPage('Sign-in cannot continue', describeError(out)) : out;
  });
}

/** Why a presented `code_verifier` is not one RFC 7636 §4.1 allows, or undefined (allowed, or absent: a missing one is invalid_grant, §4.6). */
function codeVerifierProblem(verifier: unknown): string | undefined {
  if (typeof verifier !== 'string' || verifier === '') return undefined;
  if (verifier.length < 43 || verifier.length > 128) return `code_verifier is ${verifier.length} characters long; RFC 7636 §4.1 allows 43 to 128`;
  if (/[^A-Za-z0-9\-._~]/.test(verifier)) return "code_verifier holds a character RFC 7636 §4.1 does not allow (only A-Z, a-z, 0-9, '-', '.', '_', '~')";
  return undefined;
}

/**
 * One audit record per decision oidc-provider makes (its events), and the client kept registered while
 * it is issued tokens. Refusals the sign-in pages decide themselves (a user's access_denied) are recorded
 * there (interaction.ts), not again when oidc-provider sends them to the client.
 */
function recordDecisions(provider: Provider, deps: ProviderDeps): void {
  const { decide, store, config, log } = deps;
  type Ctx = KoaContextWithOIDC;
  const about = (ctx: Ctx): Pick<AuthDecision, 'requestId' | 'client'> => {
    const client = ctx.oidc?.client?.clientId ?? (typeof ctx.oidc?.params?.client_id === 'string' ? ctx.oidc.params.client_id : undefined);
    return { requestId: requestIdOf(ctx), ...(client ? { client } : {}) };
  };
  const grantType = (ctx: Ctx) => (typeof ctx.oidc?.params?.grant_type === 'string' ? { grantType: ctx.oidc.params.grant_type } : {});
  // invalid_grant says why only in its detail (oidc-provider keeps the description generic).
  const reasonOf = (error: unknown) => {
    const { error: code, error_detail: detail } = error as { error?: string; error_detail?: string };
    const reuse = detail ? REUSE_REASONS.get(detail) : undefined;
    if (reuse) return reuse;
    return detail === KEY_REVOKED ? 'key_revoked' : (code ?? 'server_error');
  };
  const keepClient = (clientId: string | undefined) =>
    clientId &&
    void promoteClient(store, clientId, config.clients.idleTtlSeconds).catch((error) =>
      log.warn({ err: (error as Error).message }, 'client lifetime not extended'),
    );

  provider.on('registration_create.success', (ctx: Ctx, client: { clientId: string }) =>
    decide({ ...about(ctx), endpoint: 'register', outcome: 'ok', client: client.clientId }),
  );
  provider.on('registration_create.error', (ctx: Ctx, error: unknown) =>
    decide({ ...about(ctx), endpoint: 'register', outcome: 'refused', reason: reasonOf(error) }),
  );
  provider.on('authorization.error', (ctx: Ctx, error: unknown) => {
    if (reasonOf(error) !== 'access_denied') decide({ ...about(ctx), endpoint: 'authorize', outcome: 'refused', reason: reasonOf(error) });
  });
  provider.on('grant.success', (ctx: Ctx) => {
    const account = ctx.oidc.entities.Grant?.accountId ?? ctx.oidc.entities.Account?.accountId;
    decide({ ...about(ctx), endpoint: 'token', outcome: 'ok', ...grantType(ctx), ...(account ? { account } : {}) });
    keepClient(ctx.oidc.client?.clientId);
  });
  provider.on('grant.error', (ctx: Ctx, error: unknown) =>
    decide({ ...about(ctx), endpoint: 'token', outcome: 'refused', reason: reasonOf(error), ...grantType(ctx) }),
  );
  // oidc-provider checks an authorization code's resource after using the code up, and says only "resource
  // indicator is missing, or unknown": say which resource was refused and that the code is spent.
  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as unknown as Ctx;
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (ctx.oidc?.route !== 'token' || ctx.oidc.params?.grant_type !== 'authorization_code' || body?.error !== 'invalid_target') return;
    if (body.error_description !== new oidcErrors.InvalidTarget().error_description) return;
    const asked = ctx.oidc.params?.resource;
    ctx.body = {
      ...body,
      error_description: `the resource ${typeof asked === 'string' ? `${asked} ` : ''}is not the one this authorization was for (the resource sent to /oauth/authorize, else ${deps.resources.defaultResource}); the code is used up: authorize again`,
    };
  });
  // A revocation is decided by its final answer, read by the outermost of the provider's middleware: after
  // sealed-tokens.ts turned oidc-provider's unsupported_token_type for one of our access tokens into a 200.
  // A 200 is RFC 7009's answer whether or not anything was revoked: the line says which (revocation.ts).
  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as unknown as Ctx;
    if (ctx.oidc?.route !== 'revocation') return;
    const { entities } = ctx.oidc;
    const found = entities.AccessToken ?? entities.RefreshToken ?? entities.ClientCredentials;
    const result = revocationResult(ctx) ?? (found ? 'revoked' : 'unknown_token');
    const refused = ctx.status !== 200 ? ((ctx.body as { error?: string } | undefined)?.error ?? 'server_error') : result === 'revoked' ? undefined : result;
    decide({ ...about(ctx), endpoint: 'revoke', ...(refused ? { outcome: 'refused', reason: refused } : { outcome: 'ok' }) });
  });
  answerStoreOutages(provider, deps);
}

/** The audit endpoint of each oidc-provider route a store outage can meet (a revocation is recorded by its own middleware). */
const OUTAGE_ENDPOINTS: Record<string, AuthDecision['endpoint']> = {
  registration: 'register',
  token: 'token',
  authorization: 'authorize',
  resume: 'authorize',
};

/**
 * A store outage (OAuthStoreUnavailable from any adapter or store call) is a pause, not a failure:
 * 503 with Retry-After and the RFC 6749 code `temporarily_unavailable` (§4.1.2.1; the same code the
 * registration budget answers with), where oidc-provider would answer 500 `server_error`, so a client
 * keeps its tokens and retries. Logged (warn, once a second at most) and audited (`reason:
 * temporarily_unavailable`). Registered after the revocation audit, whose record then reads the 503.
 */
function answerStoreOutages(provider: Provider, deps: ProviderDeps): void {
  const { decide, log } = deps;
  const outages = new WeakMap<object, number>();
  let lastLogged = 0;
  provider.on('server_error', (ctx: object, error: unknown) => {
    const unavailable = storeUnavailable(error);
    if (unavailable) outages.set(ctx, unavailable.retryAfterSeconds);
  });
  provider.use(async (koa, next) => {
    const ctx = koa as unknown as KoaContextWithOIDC;
    let retryAfter: number | undefined;
    try {
      await next();
      retryAfter = ctx.status === 500 ? outages.get(ctx) : undefined;
    } catch (error) {
      // A store call made after oidc-provider's own handler (sealed-tokens.ts revocation) throws past it.
      const unavailable = storeUnavailable(error);
      if (!unavailable) throw error;
      retryAfter = unavailable.retryAfterSeconds;
    }
    if (retryAfter === undefined) return;
    const route = ctx.oidc?.route ?? '';
    if (Date.now() - lastLogged > 1000) {
      lastLogged = Date.now();
      log.warn({ route }, 'authorization server store unreachable; answered 503 temporarily_unavailable');
    }
    ctx.status = 503;
    ctx.set('retry-after', String(retryAfter));
    const description = `the authorization server cannot reach its store right now; retry after ${retryAfter} s`;
    if (!ctx.response.is('html')) ctx.body = { error: 'temporarily_unavailable', error_description: description };
    const endpoint = OUTAGE_ENDPOINTS[route];
    if (endpoint) {
      const client = ctx.oidc?.client?.clientId ?? (typeof ctx.oidc?.params?.client_id === 'string' ? ctx.oidc.params.client_id : undefined);
      const grantType = typeof ctx.oidc?.params?.grant_type === 'string' ? { grantType: ctx.oidc.params.grant_type } : {};
      decide({ requestId: requestIdOf(ctx), endpoint, outcome: 'refused', reason: 'temporarily_unavailable', ...(client ? { client } : {}), ...grantType });
    }
  });
}

/** What a redirect URI's character is called in a refusal. */
const CHARACTER_NAMES: Record<string, string> = {
  '\r': 'a carriage return (CR)',
  '\n': 'a line feed (LF)',
  '\t': 'a tab',
  ' ': 'a space',
  '\\': "a backslash ('\\')",
};

/**
 * Why a redirect URI's text is no URI a client can register (RFC 7591 §3.2.2 `invalid_redirect_uri`), or
 * undefined: a character RFC 3986 §2 does not allow unencoded (a line break, tab, space, backslash, a
 * control or non-ASCII character, `<`, `"`, ...), a `%` not followed by two hex digits (§2.1), or a `*` in
 * the host: a wildcard, which exact matching (OAuth 2.1 §2.3.1, RFC 9700 §4.1.3) never honours.
 */
function redirectUriTextProblem(uri: string): string | undefined {
  const bad = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/u.exec(uri);
  if (bad) {
    const char = bad[0];
    const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const name = CHARACTER_NAMES[char] ?? (/[\x21-\x7e]/.test(char) ? `the character '${char}'` : `the character ${code}`);
    return `holds ${name} at position ${bad.index + 1}, which a URI cannot hold unencoded (RFC 3986 §2: percent-encode it)`;
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(uri)) return "has a '%' not followed by two hex digits (RFC 3986 §2.1)";
  const host = /^[^:/?#]+:\/\/(?:[^/?#@]*@)?([^/?#]*)/.exec(uri)?.[1];
  if (host?.includes('*')) return `has a '*' in its host (${clip(host, 100)}): redirect URIs are matched exactly, wildcards are not supported`;
  return undefined;
}

/**
 * A registration's `application_type` (OpenID Connect Registration §2; RFC 7591 has none) where the client sent
 * none and a redirect URI has a private-use scheme (RFC 8252 §7.1, `cursor://...`): `native`, the only type
 * such a URI can belong to. MCP clients register without it, and the default, `web`, refused every such URI
 * ("must only contain web uris"; try-out). What native clients may not register (`javascript:`, `data:`,
 * `file:`, claimed https on a loopback host; RFC 8252 §8.1) is still refused by oidc-provider. A client
 * that sent `web` with such a URI is told to send `native` or nothing.
 */
function inferApplicationType(metadata: { application_type?: unknown }, sent: unknown, uris: readonly unknown[]): void {
  const i = uris.findIndex((uri) => {
    const protocol = typeof uri === 'string' ? URL.parse(uri)?.protocol : undefined;
    return protocol !== undefined && protocol !== 'https:' && protocol !== 'http:';
  });
  if (i === -1) return;
  if (sent === undefined) metadata.application_type = 'native';
  else if (sent === 'web')
    throw new oidcErrors.InvalidClientMetadata(
      `redirect_uris item ${i + 1} has the private-use scheme ${URL.parse(uris[i] as string)!.protocol} (RFC 8252 §7.1), which only a native app receives: register with application_type native, or without application_type`,
    );
}

/** Scopes that ask for no permission of the platform: `openid` (an ID token) and `offline_access` (refresh tokens, issued anyway). */
export const PROTOCOL_SCOPES: readonly string[] = ['openid', 'offline_access'];

/**
 * Refuses an authorization request whose `scope` asks for no permission this server knows (RFC 6749
 * §3.3 lets a server ignore a value it does not know, not grant what nobody asked for): `invalid_scope`
 * (§4.1.2.1), naming what was asked and what is known. A scope mixing known and unknown values is
 * taken, the unknown ones ignored; a request with no scope, or only `offline_access`, was given the
 * client's default before it got here (routes.ts).
 */
function checkAskedScope(scope: string | undefined, supported: readonly string[]): void {
  const asked = (scope ?? '').split(' ').filter(Boolean);
  if (asked.length === 0 || asked.some((s) => supported.includes(s))) return;
  const unknown = asked.filter((s) => !PROTOCOL_SCOPES.includes(s));
  const known = `this server's permissions are: ${supported.join(' ')}`;
  throw new oidcErrors.InvalidScope(
    unknown.length
      ? `no scope asked for is one this server knows (${clip(unknown.join(' '), 200)}); ${known}`
      : `the scope asks for no permission (${asked.join(' ')} alone grants nothing); ${known}`,
    clip(asked.join(' '), 200),
  );
}

/** oidc-provider's description of a scope outside the client's registered `scope` (RFC 7591 §2), a server's known scope. */
const NOT_REGISTERED_SCOPE = 'requested scope is not allowed';

/**
 * The words of an error page for an OAuth error code (RFC 6749 §4.1.2.1), with the code and its description
 * when there is one. An invalid_scope for a scope the server knows but the client did not register says so
 * (it was told "permissions this server does not know"; try-out).
 */
function describeError(out: { error?: string; error_description?: string; scope?: string }): string {
  if (out.error === 'invalid_scope' && out.error_description === NOT_REGISTERED_SCOPE && out.scope)
    return `The application asked for permissions it did not register. (invalid_scope: ${clip(out.scope, 200)} is not in the scope this application registered)`;
  const known: Record<string, string> = {
    invalid_client: 'The application is not registered with this server.',
    invalid_redirect_uri: 'The application asked to return to an address it did not register.',
    invalid_request: 'The application sent an incomplete or invalid sign-in request.',
    invalid_target: 'The application asked for access to a resource this server does not protect.',
    invalid_scope: 'The application asked for permissions this server does not know.',
  };
  const text = (out.error && known[out.error]) ?? 'The sign-in request cannot be completed.';
  // The RFC 6749 code is always named, for whoever reports the problem to the application's developer.
  if (!out.error) return text;
  return `${text} (${out.error}${out.error_description ? `: ${out.error_description}` : ''})`;
}

/**
 * A loopback `http` redirect URI (127.0.0.1, [::1], and `localhost`, which MCP clients register though RFC
 * 8252 §8.3 advises the literals; the hosts oidc-provider takes for native clients) as written, its port cut
 * out of the text: what RFC 8252 §7.3 compares. Nothing is normalised (a different spelling of the path or
 * host is a different URI); anything else, user info included, is undefined.
 */
function loopbackWithoutPort(uri: string): string | undefined {
  const loopback = LOOPBACK_REDIRECT.exec(uri);
  if (!loopback || (loopback[2] !== undefined && !isCanonicalPort(loopback[2]))) return undefined;
  return `http://${loopback[1]}${uri.slice(loopback[0].length)}`;
}

/** A loopback `http` redirect URI's host and, after a colon, whatever stands where its port goes. */
const LOOPBACK_REDIRECT = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(?::([^/?#]*))?(?=[/?#]|$)/;

/** A TCP port written as RFC 3986 §3.2.3 digits a listener can have: 1-65535, no sign, no leading zero. */
const isCanonicalPort = (port: string): boolean => /^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65_535;

/**
 * Why a loopback `http` redirect URI's port is refused (RFC 3986 §3.2.3 digits; RFC 8252 §7.3 lets the
 * client choose the port, not its spelling), or undefined (another URI, no port, or a port 1-65535
 * in canonical decimal). `:08080` is refused rather than read as 8080: the URI the client sent would not
 * be the one it is sent back to.
 */
function loopbackPortProblem(uri: string): string | undefined {
  const port = LOOPBACK_REDIRECT.exec(uri)?.[2];
  if (port === undefined || isCanonicalPort(port)) return undefined;
  return `has the port '${port.slice(0, 20)}': a loopback redirect URI's port is a number from 1 to 65535 written without a sign or leading zeros`;
}
