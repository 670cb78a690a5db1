import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors as oidcErrors, type Configuration } from 'oidc-provider';
import type { OAuthConfig } from '../../../config/types.ts';
import type { Logger } from '../../obs/log.ts';
import { adapterClass } from './adapter.ts';
import { ClientMetadataError, type createClientMetadataResolver } from './client-metadata.ts';
import type { OAuthKeys } from './keys.ts';
import { INTERACTION_PREFIX } from './paths.ts';
import { errorPage } from './pages.ts';
import type { ResourceSet } from './resource-url.ts';
import type { OAuthStore } from './store.ts';

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
  /** The wrapped credential of a grant (store key `grant-credential:<grantId>`), put in each access token. */
  grantCredential(grantId: string): Promise<string | undefined>;
}

/**
 * The oidc-provider instance of the built-in authorization server: which of the library's features are
 * on and how they are tuned. What the library does: RFC 8414 metadata (`/.well-known/oauth-authorization-server`,
 * also `/.well-known/openid-configuration`), RFC 7591 registration, the authorization code grant with
 * PKCE S256 only (OAuth 2.1 §4.1, `plain` and missing challenges refused), exact redirect URI matching,
 * `state`, RFC 9207 `iss`, RFC 8707 resource indicators, refresh token rotation with reuse detection (a
 * consumed refresh token presented again revokes its grant: every code, refresh and access token issued
 * from it), RFC 7009 revocation. Access tokens are JWEs (`dir`/`A256GCM`) under `keys.accessToken`,
 * carrying the grant's wrapped credential (`cpz_cred`) and grant id (`gid`).
 */
export async function createProvider(deps: ProviderDeps): Promise<Provider> {
  const { config, issuer, store, keys, resources, supported, log, cimd } = deps;
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
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resources.defaultResource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          const audience = resources.resolve(indicator);
          if (!audience) throw new oidcErrors.InvalidTarget('resource is not an MCP endpoint of this gateway');
          return { ...accessTokenFormat, scope: supported.join(' '), audience };
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
      const wrapped = grantId ? await deps.grantCredential(grantId) : undefined;
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
  return provider;
}

/** The words of an error page for an OAuth error code (RFC 6749 §4.1.2.1), with the code and its description. */
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
