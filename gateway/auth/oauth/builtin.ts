import { readFileSync } from 'node:fs';
import type { GatewayConfig, OAuthConfig } from '../../../config/types.ts';
import type { Logger } from '../../obs/log.ts';
import type { ScopeResult } from '../scope-cache.ts';
import { createClientMetadataResolver } from './client-metadata.ts';
import { interactionRoute } from './interaction.ts';
import { deriveKeys, randomRootKey, type OAuthKeys } from './keys.ts';
import { createProvider } from './provider.ts';
import { ResourceSet } from './resource-url.ts';
import { authorizationServerRoutes } from './routes.ts';
import { sealedTokens } from './sealed-tokens.ts';
import { createMemoryStore, createRedisStore, type OAuthStore } from './store.ts';
import type { OAuth } from './types.ts';

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

/**
 * The built-in OAuth 2.1 authorization server (oidc-provider, mounted on the gateway's origin), the
 * seed system's model: a user signs in with a platform key + secret, chooses the scopes to grant, and
 * the client gets an access token sealed for one MCP endpoint. Its parts:
 * - provider.ts: oidc-provider's configuration (the protocol: metadata, registration, PKCE, resource
 *   indicators, rotation, revocation) over the store adapter (adapter.ts, store.ts);
 * - interaction.ts: the sign-in and consent pages; routes.ts: both as one Koa middleware;
 * - sealed-tokens.ts: the access tokens as the MCP endpoints read them;
 * - keys.ts: every key derived from one root key: `oauth.tokenSecret` (GATEWAY_TOKEN_SECRET), else with
 *   Redis a root key generated once and kept there, else a per-process key (logged as a warning: tokens
 *   die with the process and do not work on other replicas). The platform credential is wrapped
 *   (AES-256-GCM) into the grant's record and the access token, and unwrapped only by `resolveBearer`;
 *   the token itself never goes upstream.
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
    gateway.cache.store === 'redis' && gateway.cache.redisUrl ? await createRedisStore(gateway.cache) : createMemoryStore(config.maxEntries);
  const keys = await rootKeys(config, store, log);
  const resources = new ResourceSet(issuer, deps.resourcePaths);
  const supported = [...new Set(config.scopes)];
  const cimd = config.clientMetadataDocuments.enabled
    ? createClientMetadataResolver({
        ...config.clientMetadataDocuments,
        ca: config.clientMetadataDocuments.caFile ? readFileSync(config.clientMetadataDocuments.caFile, 'utf8') : undefined,
      })
    : undefined;

  const provider = await createProvider({
    config,
    issuer,
    store,
    keys,
    resources,
    supported,
    log,
    cimd,
    grantCredential: (grantId) => store.get(`grant-credential:${grantId}`),
  });
  const tokens = sealedTokens({ issuer, keys, store, resources, supported, log });
  provider.use(tokens.revocation);
  const interaction = interactionRoute({
    provider,
    config,
    issuer,
    store,
    keys,
    resources,
    supported,
    log,
    keyHeader: gateway.credentials.keyHeader.toLowerCase(),
    secretHeader: gateway.credentials.secretHeader.toLowerCase(),
    lookupScopes: deps.lookupScopes,
  });

  return {
    mode: 'builtin',
    routes: authorizationServerRoutes(provider, interaction),
    metadata: { authorization_servers: [issuer], scopes_supported: supported },
    insufficientScope: false,
    keySource: keys.source,
    storeKind: store.kind,
    resolveBearer: tokens.resolve,
    async close() {
      await store.close();
    },
  };
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
