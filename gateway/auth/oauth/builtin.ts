import { canonicalResource } from './resource-url.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { exportJWK, generateKeyPair, jwtDecrypt, errors as joseErrors } from 'jose';
import Provider, { errors as oidcErrors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { GatewayConfig, OAuthConfig } from '../../../config/types.ts';
import type { Logger } from '../../obs/log.ts';
import type { ScopeResult } from '../scope-cache.ts';
import { adapterClass, revokedGrantKey, revokedTokenKey } from './adapter.ts';
import { ClientMetadataError, createClientMetadataResolver } from './client-metadata.ts';
import { deriveKeys, randomRootKey, unwrap, wrap, type OAuthKeys } from './keys.ts';
import { consentPage, errorPage, signInPage, type ClientView, type ScopeChoice } from './pages.ts';
import { createMemoryStore, createRedisStore, type OAuthStore } from './store.ts';
import { expiryOf, type BearerResolution, type OAuth } from './types.ts';

export interface BuiltinDeps {
  log: Logger;
  /** The issuer when `oauth.issuer` and `publicUrl` are unset (the URL the gateway listens on). */
  issuer?: string;
  /** Paths of the protected resources (the MCP endpoints), e.g. `/mcp`, `/mcp/compact`. */
  resourcePaths: readonly string[];
  /**
   * The gateway's answer for a key + secret (credential headers): its credential sources in order
   * (config API keys, then the scope endpoint). The sign-in page issues nothing unless it answers `scopes`.
   */
  lookupScopes(headers: Record<string, string>): Promise<ScopeResult>;
}

const CREDENTIAL_CONTEXT = 'platform-credential';
const PENDING_CONTEXT = 'pending-sign-in';
const INTERACTION_PREFIX = '/oauth/interaction/';
/** Wrong key/secret attempts one sign-in page allows before the authorization request fails. */
export const MAX_FAILED_SIGN_INS = 5;

interface PendingSignIn {
  accountId: string;
  headers: Record<string, string>;
  scopes: string[];
}

/**
 * The built-in OAuth 2.1 authorization server (oidc-provider, mounted on the gateway's origin), the
 * seed system's model: a user signs in with a platform key + secret, chooses the scopes to grant, and
 * the client gets an access token sealed for one MCP endpoint. What the library does: RFC 8414
 * metadata (`/.well-known/oauth-authorization-server`, also `/.well-known/openid-configuration`),
 * RFC 7591 registration, the authorization code grant with PKCE S256 only (OAuth 2.1 §4.1, `plain`
 * and missing challenges refused), exact redirect URI matching, `state`, RFC 9207 `iss`, RFC 8707
 * resource indicators, refresh token rotation with reuse detection (a consumed refresh token presented
 * again revokes its grant: every code, refresh and access token issued from it), RFC 7009 revocation.
 * Ours: the sign-in and consent pages, client ID metadata documents ({@link createClientMetadataResolver}),
 * the store adapter, and the sealing:
 * - access tokens are JWEs (`dir`/`A256GCM`) under a key derived from `oauth.tokenSecret`
 *   (GATEWAY_TOKEN_SECRET), opaque to clients, resolvable by every replica holding the secret; with
 *   Redis and no secret, a root key generated once and kept in Redis; with neither, a per-process key
 *   (logged as a warning: tokens die with the process and do not work on other replicas);
 * - the platform credential is wrapped (AES-256-GCM) into the grant's record and the access token,
 *   and unwrapped only by {@link BuiltinOAuth.resolveBearer}; the token itself never goes upstream.
 */
export async function createBuiltinOAuth(
  gateway: GatewayConfig,
  deps: BuiltinDeps,
): Promise<OAuth & { keySource: OAuthKeys['source']; storeKind: OAuthStore['kind'] }> {
  const config = gateway.oauth;
  const log = deps.log.child({ component: 'oauth' });
  const issuer = (config.issuer ?? gateway.publicUrl ?? deps.issuer)?.replace(/\/+$/, '');
  if (!issuer) throw new Error('oauth.issuer is required (or publicUrl, or the listening URL)');
  const store: OAuthStore =
    gateway.cache.store === 'redis' && gateway.cache.redisUrl
      ? await createRedisStore(gateway.cache.redisUrl, gateway.cache.operationTimeoutMs)
      : createMemoryStore(config.maxEntries);
  const keys = await rootKeys(config, store, log);
  const resources = new Set(deps.resourcePaths.map((p) => canonicalResource(`${issuer}${p}`)!));
  resources.add(canonicalResource(issuer)!);
  const defaultResource = canonicalResource(`${issuer}${deps.resourcePaths[0] ?? ''}`)!;
  const supported = [...new Set(config.scopes)];
  const keyHeader = gateway.credentials.keyHeader.toLowerCase();
  const secretHeader = gateway.credentials.secretHeader.toLowerCase();

  const cimd = config.clientMetadataDocuments.enabled
    ? createClientMetadataResolver({
        ...config.clientMetadataDocuments,
        ca: config.clientMetadataDocuments.caFile ? readFileSync(config.clientMetadataDocuments.caFile, 'utf8') : undefined,
      })
    : undefined;
  const Adapter = adapterClass(store, {
    markTtlSeconds: config.accessTokenTtlSeconds,
    resolveUrlClient: cimd
      ? async (clientId) => {
          try {
            return await cimd.resolve(clientId);
          } catch (error) {
            log.info({ clientId, reason: (error as Error).message }, 'client ID metadata document refused');
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
      registration: { enabled: config.registration, issueRegistrationAccessToken: false },
      // RFC 7009 §2.1: a client may revoke only its own tokens; for another client's, a public client is
      // answered 200 without effect (no oracle for guessing tokens), a confidential one invalid_request.
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new oidcErrors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? defaultResource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          const canonical = canonicalResource(indicator);
          if (!canonical || !resources.has(canonical)) throw new oidcErrors.InvalidTarget('resource is not an MCP endpoint of this gateway');
          return { ...accessTokenFormat, scope: supported.join(' '), audience: canonical };
        },
      },
    },
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
    rotateRefreshToken: true,
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
      const wrapped = grantId ? await store.get(`grant-credential:${grantId}`) : undefined;
      if (!wrapped) throw new oidcErrors.InvalidGrant('grant is no longer valid');
      return { cpz_cred: wrapped, gid: grantId };
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: async (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}` },
    routes: {
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
    },
    discovery: { ...(cimd ? { client_id_metadata_document_supported: true } : {}), service_documentation: undefined },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage('Sign-in cannot continue', describeError(out as { error?: string; error_description?: string }));
    },
  };

  const provider = new Provider(issuer, configuration);
  if (issuer.startsWith('https:')) provider.proxy = true;
  provider.on('server_error', (_ctx, error) => log.error({ err: (error as Error).message }, 'authorization server error'));
  provider.on('grant.revoked', (_ctx, grantId) => log.info({ grant: String(grantId).slice(0, 8) }, 'grant revoked'));
  provider.use(sealedTokenRevocation);

  /**
   * RFC 7009 for our sealed access tokens: oidc-provider refuses to revoke structured tokens
   * (`unsupported_token_type`); for one we sealed and the requesting client owns, we record its `jti`
   * as revoked (until it would expire) and answer 200 as RFC 7009 §2.2 asks.
   */
  async function sealedTokenRevocation(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    await next();
    if (ctx.oidc?.route !== 'revocation' || ctx.status !== 400 || (ctx.body as { error?: string })?.error !== 'unsupported_token_type') return;
    const token = ctx.oidc.params?.token;
    const client = ctx.oidc.client;
    if (typeof token !== 'string' || !client) return;
    const payload = await openAccessToken(token).catch(() => undefined);
    if (payload && payload.client_id === client.clientId && typeof payload.jti === 'string') {
      await store.set(revokedTokenKey(payload.jti), '1', Math.max(1, Number(payload.exp) - Math.floor(Date.now() / 1000)));
      log.info({ client: client.clientId }, 'access token revoked');
    }
    ctx.status = 200;
    ctx.body = '';
  }

  async function openAccessToken(token: string) {
    const { payload } = await jwtDecrypt(token, keys.accessToken, {
      issuer,
      clockTolerance: 5,
      contentEncryptionAlgorithms: ['A256GCM'],
      keyManagementAlgorithms: ['dir'],
    });
    return payload;
  }

  const handleProvider = provider.callback() as (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  const parseForm = bodyParser({ enableTypes: ['form'], formLimit: '16kb', encoding: 'utf-8' });
  const csrfToken = (uid: string) => createHmac('sha256', keys.csrf).update(`csrf:${uid}`).digest('base64url');
  const accountIdFor = (keyId: string) => `acct_${createHmac('sha256', keys.credential).update(`account:${keyId}`).digest('base64url').slice(0, 22)}`;

  /** Koa middleware: the interaction pages, then everything oidc-provider serves; other paths pass through. */
  const routes: Middleware = async (ctx, next) => {
    const isInteraction = ctx.path.startsWith(INTERACTION_PREFIX);
    const isProvider =
      ctx.path.startsWith('/oauth/') || ctx.path === '/.well-known/oauth-authorization-server' || ctx.path === '/.well-known/openid-configuration';
    if (!isInteraction && !isProvider) return next();
    // Nothing of the authorization server may be framed (clickjacking of the consent page).
    ctx.set(
      'content-security-policy',
      isInteraction ? "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'" : "frame-ancestors 'none'",
    );
    ctx.set('x-frame-options', 'DENY');
    ctx.set('cache-control', 'no-store');
    // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on our own form posts, which the Origin check refuses.
    ctx.set('referrer-policy', 'same-origin');
    if (isInteraction) return interaction(ctx);
    for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) ctx.res.setHeader(name, value as string);
    ctx.respond = false;
    await handleProvider(ctx.req, ctx.res);
  };

  async function interaction(ctx: Context): Promise<void> {
    const [uid, action] = ctx.path.slice(INTERACTION_PREFIX.length).split('/');
    if (!uid || !/^[A-Za-z0-9_-]{1,64}$/.test(uid)) return page(ctx, 404, errorPage('Not found', 'This sign-in link is not valid.'));
    let details: Awaited<ReturnType<Provider['interactionDetails']>>;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      return page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser.'));
    }
    if (details.uid !== uid) return page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser.'));
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) return page(ctx, 400, errorPage('Unknown application', 'The application asking for access is not registered.'));
    const view = clientView(client, String(details.params.redirect_uri ?? ''));
    const csrf = csrfToken(uid);
    const base = `${INTERACTION_PREFIX}${uid}`;
    const pendingKey = `pending-sign-in:${uid}`;
    const resource = requestedResource(details.params.resource);
    const requested = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => s && supported.includes(s));

    if (ctx.method === 'GET' && action === undefined) {
      const pending = await loadPending(pendingKey, uid);
      if (!pending)
        return page(ctx, 200, signInPage({ action: `${base}/login`, abortAction: `${base}/abort`, csrf, client: view, serviceName: config.serviceName }));
      return page(
        ctx,
        200,
        consentPage({
          action: `${base}/consent`,
          csrf,
          client: view,
          serviceName: config.serviceName,
          resource,
          scopes: scopeChoices(requested, pending.scopes),
        }),
      );
    }
    if (ctx.method !== 'POST' || !['login', 'consent', 'abort'].includes(action ?? ''))
      return page(ctx, 405, errorPage('Not allowed', 'This page only accepts the sign-in form.'));

    await parseForm(ctx, async () => {});
    const form = (ctx.request as { body?: Record<string, string | string[]> }).body ?? {};
    if (!sameOrigin(ctx) || !csrfMatches(String(form.csrf ?? ''), csrf)) {
      return page(ctx, 403, errorPage('Request refused', 'The form was not submitted from this sign-in page. Start again from your application.'));
    }
    if (action === 'abort') return finish(ctx, { error: 'access_denied', error_description: 'The user cancelled the sign-in' });

    if (action === 'login') {
      const key = String(form.key ?? '').trim();
      const secret = String(form.secret ?? '');
      const again = (status: number, error: string) =>
        page(ctx, status, signInPage({ action: `${base}/login`, abortAction: `${base}/abort`, csrf, client: view, serviceName: config.serviceName, error }));
      if (!key || !secret || key.length > 256 || secret.length > 1024) return again(400, 'Enter your API key and secret.');
      const headers = { [keyHeader]: key, [secretHeader]: secret };
      const result = await deps.lookupScopes(headers).catch((): ScopeResult => ({ kind: 'unknown', reason: 'error' }));
      if (result.kind === 'unauthorized') {
        // A sign-in page allows MAX_FAILED_SIGN_INS wrong attempts, then the authorization ends (access_denied):
        // guessing a secret costs a new authorization request, with its PKCE and registered redirect URI, each few tries.
        const failures = Number((await store.get(`failed-sign-in:${uid}`)) ?? 0) + 1;
        await store.set(`failed-sign-in:${uid}`, String(failures), config.interactionTtlSeconds);
        log.info({ client: client.clientId, failures }, 'sign-in refused: credential not accepted');
        if (failures >= MAX_FAILED_SIGN_INS) return finish(ctx, { error: 'access_denied', error_description: 'Too many failed sign-in attempts' });
        return again(401, 'The API key or secret is not valid.');
      }
      if (result.kind !== 'scopes') {
        log.warn({ client: client.clientId, reason: result.reason }, 'sign-in could not check the credential');
        return again(503, 'Your key could not be checked right now. Try again in a moment.');
      }
      const pending: PendingSignIn = { accountId: accountIdFor(key), headers, scopes: [...result.scopes] };
      await store.set(pendingKey, wrap(keys.credential, pending, `${PENDING_CONTEXT}:${uid}`), config.interactionTtlSeconds);
      log.info({ client: client.clientId, account: pending.accountId }, 'signed in');
      ctx.status = 303;
      ctx.redirect(base);
      return;
    }

    // consent
    const pending = await loadPending(pendingKey, uid);
    if (!pending) return page(ctx, 400, errorPage('Sign-in expired', 'Sign in again from your application.'));
    if (form.decision !== 'allow') {
      await store.delete(pendingKey);
      return finish(ctx, { error: 'access_denied', error_description: 'The user denied access' });
    }
    const offered = scopeChoices(requested, pending.scopes)
      .filter((s) => s.available)
      .map((s) => s.scope);
    const ticked = new Set((Array.isArray(form.scope) ? form.scope : form.scope ? [form.scope] : []).map(String));
    const granted = offered.filter((s) => ticked.has(s));
    if (granted.length === 0) {
      return page(
        ctx,
        400,
        consentPage({
          action: `${base}/consent`,
          csrf,
          client: view,
          serviceName: config.serviceName,
          resource,
          scopes: scopeChoices(requested, pending.scopes),
          error: 'Choose at least one permission, or deny access.',
        }),
      );
    }
    const grant = new provider.Grant({ accountId: pending.accountId, clientId: client.clientId });
    // Keyed by the indicator exactly as requested (oidc-provider's key); unticked and unavailable scopes are
    // recorded as rejected, so the consent check is satisfied with the narrower grant.
    const rejected = requested.filter((s) => !granted.includes(s));
    for (const indicator of requestedIndicators(details.params.resource)) {
      grant.addResourceScope(indicator, granted.join(' '));
      if (rejected.length) grant.rejectResourceScope(indicator, rejected.join(' '));
    }
    const oidcScopes = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => s === 'openid' || s === 'offline_access');
    grant.addOIDCScope([...oidcScopes, ...granted].join(' '));
    if (rejected.length) grant.rejectOIDCScope(rejected.join(' '));
    const grantId = await grant.save();
    await store.set(
      `grant-credential:${grantId}`,
      wrap(keys.credential, { headers: pending.headers }, `${CREDENTIAL_CONTEXT}:${grantId}`),
      config.refreshTokenTtlSeconds,
    );
    await store.delete(pendingKey);
    log.info({ client: client.clientId, account: pending.accountId, scopes: granted }, 'access granted');
    return finish(ctx, { login: { accountId: pending.accountId, remember: false }, consent: { grantId } });
  }

  async function loadPending(key: string, uid: string): Promise<PendingSignIn | undefined> {
    const blob = await store.get(key);
    return blob ? unwrap<PendingSignIn>(keys.credential, blob, `${PENDING_CONTEXT}:${uid}`) : undefined;
  }

  async function finish(ctx: Context, result: Record<string, unknown>): Promise<void> {
    ctx.respond = false;
    for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) ctx.res.setHeader(name, value as string);
    await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  }

  function requestedIndicators(value: unknown): string[] {
    const list = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
    return list.length ? list : [defaultResource];
  }

  function requestedResource(value: unknown): string {
    const first = Array.isArray(value) ? value[0] : value;
    return (typeof first === 'string' && canonicalResource(first)) || defaultResource;
  }

  /** The scopes to offer: what the client asked for (all supported when it asked for none), marked by whether the key holds each. */
  function scopeChoices(requested: string[], held: readonly string[]): ScopeChoice[] {
    const asked = requested.length ? requested : supported;
    const holds = new Set(held);
    return asked.map((scope) => ({ scope, available: holds.has(scope) }));
  }

  /** A form post from another origin is refused even before the CSRF token is checked (no Origin: older agents; the token decides). */
  function sameOrigin(ctx: Context): boolean {
    const origin = ctx.get('origin');
    return !origin || origin === new URL(issuer!).origin;
  }

  return {
    mode: 'builtin',
    routes,
    metadata: { authorization_servers: [issuer], scopes_supported: supported },
    insufficientScope: false,
    keySource: keys.source,
    storeKind: store.kind,
    async resolveBearer(token: string, resourceUrl: string): Promise<BearerResolution> {
      let payload: Awaited<ReturnType<typeof openAccessToken>>;
      try {
        payload = await openAccessToken(token);
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) return invalid('The access token expired');
        return invalid('The access token is not valid here');
      }
      const resource = canonicalResource(resourceUrl);
      const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      if (!resource || !audiences.some((aud) => aud === resource || aud === canonicalResource(issuer!)))
        return invalid('The access token was issued for another resource');
      const jti = String(payload.jti ?? '');
      const grantId = String(payload.gid ?? '');
      try {
        if (!jti || !grantId || (await store.get(revokedTokenKey(jti))) || (await store.get(revokedGrantKey(grantId))))
          return invalid('The access token was revoked');
      } catch {
        return invalid('The access token cannot be checked right now');
      }
      const credential =
        typeof payload.cpz_cred === 'string'
          ? unwrap<{ headers: Record<string, string> }>(keys.credential, payload.cpz_cred, `${CREDENTIAL_CONTEXT}:${grantId}`)
          : undefined;
      if (!credential) return invalid('The access token is not valid here');
      const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => supported.includes(s)) : [];
      return {
        kind: 'ok',
        credentialHeaders: credential.headers,
        scopes,
        subject: String(payload.sub ?? ''),
        clientId: String(payload.client_id ?? ''),
        ...expiryOf(payload.exp),
      };
    },
    async close() {
      await store.close();
    },
  };
}

function invalid(description: string): BearerResolution {
  return { kind: 'invalid', error: 'invalid_token', description };
}

function clientView(client: { clientId: string; clientName?: string; redirectUris?: readonly string[] }, redirectUri: string): ClientView {
  const hostOf = (uri: string) => URL.parse(uri)?.host ?? uri;
  const uris = client.redirectUris ?? [];
  const isLoopback = (uri: string) => /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(URL.parse(uri)?.hostname ?? '');
  return {
    name: client.clientName || client.clientId,
    clientId: client.clientId,
    redirectHost: hostOf(redirectUri || uris[0] || ''),
    loopbackOnly: uris.length > 0 && uris.every(isLoopback),
  };
}

function csrfMatches(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function page(ctx: Context, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = html;
}

function describeError(out: { error?: string; error_description?: string }): string {
  const known: Record<string, string> = {
    invalid_client: 'The application is not registered with this server.',
    invalid_redirect_uri: 'The application asked to return to an address it did not register.',
    invalid_request: 'The application sent an incomplete or invalid sign-in request.',
    invalid_target: 'The application asked for access to a resource this server does not protect.',
    invalid_scope: 'The application asked for permissions this server does not know.',
  };
  const text = (out.error && known[out.error]) ?? 'The sign-in request cannot be completed.';
  return out.error_description ? `${text} (${out.error}: ${out.error_description})` : text;
}

/** The root key: the configured secret, else one kept in Redis (first replica wins), else this process's own. */
async function rootKeys(config: OAuthConfig, store: OAuthStore, log: Logger): Promise<OAuthKeys> {
  if (config.tokenSecret) return deriveKeys(config.tokenSecret, 'secret');
  if (store.kind === 'redis') {
    const stored = await store.setIfAbsent('root-key', randomRootKey().toString('base64url'));
    log.warn('oauth: no GATEWAY_TOKEN_SECRET; the token sealing key is generated once and kept in Redis (set GATEWAY_TOKEN_SECRET to keep it out of Redis)');
    return deriveKeys(Buffer.from(stored, 'base64url'), 'store');
  }
  log.warn(
    'oauth: WARNING: neither REDIS_URL nor GATEWAY_TOKEN_SECRET is set: access tokens are sealed with a key of this process only; ' +
      'they stop working when it restarts and are refused by every other replica. Set GATEWAY_TOKEN_SECRET (and REDIS_URL for shared grants and refresh tokens).',
  );
  return deriveKeys(randomRootKey(), 'process');
}
