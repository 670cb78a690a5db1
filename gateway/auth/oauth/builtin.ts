import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GatewayConfig, OAuthConfig } from '../../../config/types.ts';
import type { Logger } from '../../obs/log.ts';
import type { RateLimiter } from '../../store/rate-limiter.ts';
import type { AuthDecisions } from '../decisions.ts';
import type { ScopeResult } from '../scope-cache.ts';
import { oauthAdmin } from './admin.ts';
import { createClientMetadataResolver } from './client-metadata.ts';
import { grantCredentials } from './grant-credential.ts';
import { interactionRoute } from './interaction.ts';
import { pathPrefix } from './paths.ts';
import { deriveKeys, randomRootKey, type OAuthKeys } from './keys.ts';
import { createProvider } from './provider.ts';
import { ResourceSet } from './resource-url.ts';
import { authorizationServerRoutes } from './routes.ts';
import { sealedTokens } from './sealed-tokens.ts';
import { createMemoryStore, createRedisStore, storeUnavailable, type OAuthStore } from './store.ts';
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
  /** The gateway's rate limiter: registration and sign-in budgets (`rateLimits.registrations`, `signIns`), shared through Redis with it. */
  rateLimiter: RateLimiter;
  /** Where every decision is recorded (audit line and OAuth counters). */
  decide: AuthDecisions;
}

/** How often a root key kept in Redis has its expiry pushed back while a replica runs. */
const ROOT_KEY_RENEW_MS = 3_600_000;

/**
 * The built-in OAuth 2.1 authorization server (oidc-provider, mounted on the gateway's origin), the
 * seed system's model: a user signs in with a platform key + secret, chooses the scopes to grant, and
 * the client gets an access token sealed for one MCP endpoint. Its parts:
 * - provider.ts: oidc-provider's configuration (the protocol: metadata, registration, PKCE, resource
 *   indicators, rotation, revocation) over the store adapter (adapter.ts, store.ts);
 * - interaction.ts: the sign-in and consent pages; routes.ts: both as one Koa middleware, with the
 *   registration budgets;
 * - sealed-tokens.ts: the access tokens as the MCP endpoints read them; grant-credential.ts: the
 *   platform credential each grant holds, wrapped;
 * - keys.ts: every key derived from one root key: `oauth.tokenSecret` (GATEWAY_TOKEN_SECRET; with
 *   `tokenSecretPrevious` during a rotation), else with Redis a root key generated once and kept there,
 *   else a per-process key (logged as a warning: tokens die with the process and do not work on other
 *   replicas). The token itself never goes upstream.
 * Grants, refresh tokens and revocation marks live in the store: Redis is what several replicas need
 * (a warning says so when a secret is set without it).
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
    gateway.cache.store === 'redis' && gateway.cache.redisUrl ? await createRedisStore(gateway.cache) : createMemoryStore(config.memoryStoreBytes);
  const { keys, renew, generatedKeyId } = await rootKeys(config, store, log);
  const resources = new ResourceSet(issuer, deps.resourcePaths);
  const supported = [...new Set(config.scopes)];
  const credentials = grantCredentials(store, keys);
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
    credentials,
    decide: deps.decide,
    async currentScopes(grantId) {
      const credential = await credentials.load(grantId);
      if (!credential) return undefined;
      const verdict = await deps.lookupScopes(credential.headers).catch((): ScopeResult => ({ kind: 'unknown', reason: 'error' }));
      return verdict.kind === 'unauthorized' ? 'revoked' : verdict.kind === 'scopes' ? verdict.scopes : undefined;
    },
  });
  const tokens = sealedTokens({ issuer, keys, store, credentials, resources, supported, log });
  provider.use(tokens.revocation);
  const interaction = interactionRoute({
    provider,
    gateway,
    issuer,
    store,
    keys,
    credentials,
    resources,
    supported,
    log,
    limiter: deps.rateLimiter,
    decide: deps.decide,
    lookupScopes: deps.lookupScopes,
  });

  return {
    mode: 'builtin',
    routes: authorizationServerRoutes({
      supported,
      provider,
      interaction,
      issuer,
      prefix: pathPrefix(issuer),
      rateLimits: gateway.rateLimits,
      limiter: deps.rateLimiter,
      decide: deps.decide,
    }),
    metadata: { authorization_servers: [issuer], scopes_supported: supported },
    insufficientScope: false,
    admin: oauthAdmin(store, config, keys, deps.decide),
    unready: () => store.unreachable?.(),
    keySource: keys.source,
    ...(generatedKeyId ? { generatedKeyId } : {}),
    storeKind: store.kind,
    resolveBearer: tokens.resolve,
    async close() {
      clearInterval(renew);
      await store.close();
    },
  };
}

/**
 * The root key: the configured secret (and the previous one, during a rotation), else one kept in Redis
 * (first replica wins; its expiry pushed back every hour while a replica runs, so it outlives every
 * token it sealed), else this process's own.
 */
async function rootKeys(config: OAuthConfig, store: OAuthStore, log: Logger): Promise<{ keys: OAuthKeys; renew?: NodeJS.Timeout; generatedKeyId?: string }> {
  if (config.tokenSecret) {
    if (store.kind === 'memory')
      log.warn(
        'oauth: GATEWAY_TOKEN_SECRET is set without REDIS_URL: grants, refresh tokens and revocations live in this process only, so a token ' +
          'is refused on every other replica (its sign-in is not known there) and after a restart, and a revocation holds on this replica only. ' +
          'Several replicas need REDIS_URL.',
      );
    return { keys: deriveKeys(config.tokenSecret, 'secret', config.tokenSecretPrevious) };
  }
  if (store.kind === 'redis') {
    const keep = config.refreshTokenTtlSeconds + config.accessTokenTtlSeconds;
    const stored = await untilAnswered(() => store.setIfAbsent('root-key', randomRootKey().toString('base64url'), keep), log);
    const renew = setInterval(() => void store.setIfAbsent('root-key', stored, keep).catch(() => undefined), ROOT_KEY_RENEW_MS);
    renew.unref();
    log.warn('oauth: no GATEWAY_TOKEN_SECRET; the token sealing key is generated once and kept in Redis (set GATEWAY_TOKEN_SECRET to keep it out of Redis)');
    return { keys: deriveKeys(Buffer.from(stored, 'base64url'), 'store'), renew, generatedKeyId: keyId(stored) };
  }
  log.warn(
    'oauth: WARNING: neither REDIS_URL nor GATEWAY_TOKEN_SECRET is set: access tokens are sealed with a key of this process only; ' +
      'they stop working when it restarts and are refused by every other replica. Set GATEWAY_TOKEN_SECRET (and REDIS_URL for shared grants and refresh tokens).',
  );
  const root = randomRootKey();
  return { keys: deriveKeys(root, 'process'), generatedKeyId: keyId(root.toString('base64url')) };
}

/** A generated root key's id for the shared-key check (ops/shared-keys.ts): a SHA-256 of it, never the key. */
function keyId(root: string): string {
  return createHash('sha256').update(`oauth root key: ${root}`).digest('hex');
}

/** Longest wait between two attempts to read the root key from a Redis that does not answer, ms. */
const ROOT_KEY_RETRY_MAX_MS = 10_000;

/**
 * `read`, again and again with backoff (1 s doubling, at most {@link ROOT_KEY_RETRY_MAX_MS}) while the
 * store is unreachable: a Redis that is down at start delays the authorization server (the gateway
 * listens meanwhile and `/readyz` answers 503) instead of ending the process.
 */
async function untilAnswered<T>(read: () => Promise<T>, log: Logger): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!storeUnavailable(error)) throw error;
      const waitMs = Math.min(1000 * 2 ** attempt, ROOT_KEY_RETRY_MAX_MS);
      log.warn(
        { err: (error as Error).message, retryInMs: waitMs },
        'oauth: Redis at cache.redisUrl cannot be reached; the authorization server starts once it can read its token sealing key there',
      );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
