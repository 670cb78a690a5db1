import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { GatewayConfig } from '../../../config/types.ts';
import type { Logger } from '../../obs/log.ts';
import { canonicalResource } from './resource-url.ts';
import { expiryOf, type BearerResolution, type OAuth } from './types.ts';

/**
 * Resource-server mode for an existing identity provider (Keycloak, Entra, Okta, Auth0, ...): JWT
 * access tokens (RFC 9068) are verified with `jose` against the issuer's JWKS (fetched on first use,
 * cached, refetched when a token names an unknown `kid`, so key rotation needs no restart): the
 * signature (asymmetric algorithms only), `iss`, `aud` (default: the canonical URL of the endpoint the
 * token is presented to, MCP 2026-07-28 "Token Handling"), `exp`/`nbf` with `clockSkewSeconds`. The
 * scopes come from `scopeClaim` (space-delimited string or array), mapped through `scopeMap`; they
 * replace the scope endpoint lookup. Upstream calls use `credentialHeaders` (a static service
 * credential), never the caller's token; the token's account (rate budgets, listen streams) is its
 * issuer + `sub` (required, RFC 9068 §2.2), never that shared credential.
 */
export function createResourceServer(gateway: GatewayConfig, deps: { log: Logger }): OAuth {
  const external = gateway.oauth.external;
  if (!external.issuer) throw new Error('oauth.external.issuer is required in external mode');
  const issuer = external.issuer;
  const log = deps.log.child({ component: 'oauth-rs' });
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const algorithms = external.algorithms.length
    ? external.algorithms
    : ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

  /** The JWKS: configured, else `jwks_uri` from RFC 8414 metadata, else from OIDC discovery. */
  async function keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (jwks) return jwks;
    discovering ??= (async () => {
      let uri = external.jwksUri;
      if (!uri) {
        const base = issuer.replace(/\/+$/, '');
        const path = new URL(base).pathname.replace(/\/$/, '');
        const origin = new URL(base).origin;
        for (const candidate of [
          `${origin}/.well-known/oauth-authorization-server${path}`,
          `${origin}/.well-known/openid-configuration${path}`,
          `${base}/.well-known/openid-configuration`,
        ]) {
          const response = await fetch(candidate, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) }).catch(() => undefined);
          if (!response?.ok) continue;
          const document = (await response.json().catch(() => undefined)) as { issuer?: string; jwks_uri?: string } | undefined;
          // RFC 8414 §3.3: a document whose issuer differs from the one asked for is not used.
          if (document?.issuer === issuer && document.jwks_uri) {
            uri = document.jwks_uri;
            break;
          }
        }
        if (!uri) throw new Error('no jwks_uri found in the issuer metadata');
      }
      return (jwks = createRemoteJWKSet(new URL(uri), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }));
    })().finally(() => (discovering = undefined));
    return discovering;
  }

  const mapScopes = (scopes: string[]) => [...new Set(scopes.flatMap((s) => external.scopeMap[s] ?? [s]))].sort();

  return {
    mode: 'external',
    routes: async (_ctx, next) => next(),
    metadata: { authorization_servers: [issuer], scopes_supported: [...gateway.oauth.scopes] },
    insufficientScope: external.insufficientScope,
    async resolveBearer(token, resourceUrl): Promise<BearerResolution> {
      let payload: JWTPayload;
      try {
        const keys = await keySet();
        ({ payload } = await jwtVerify(token, keys, {
          issuer,
          audience: external.audience ?? canonicalResource(resourceUrl) ?? resourceUrl,
          algorithms,
          clockTolerance: external.clockSkewSeconds,
          // sub: the token's account (RFC 9068 §2.2 requires it); many people may share one credentialHeaders key.
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) return invalid('The access token expired');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') return invalid('The access token was issued for another resource');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'nbf') return invalid('The access token is not valid yet');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'sub') return invalid('The access token names no subject (sub)');
        if (error instanceof joseErrors.JOSEError) return invalid('The access token is not valid here');
        log.warn({ err: (error as Error).message }, 'identity provider keys unavailable');
        return invalid('The access token cannot be checked right now');
      }
      const claim = payload[external.scopeClaim];
      const raw =
        typeof claim === 'string' ? claim.split(' ').filter(Boolean) : Array.isArray(claim) ? claim.filter((s): s is string => typeof s === 'string') : [];
      return {
        kind: 'ok',
        credentialHeaders: { ...external.credentialHeaders },
        scopes: mapScopes(raw),
        subject: String(payload.sub),
        // Issuer and subject (OIDC Core §2: unique together), NUL-separated; the edge keys it (accountDigest) before anything counts it.
        account: `oauth\0${issuer}\0${payload.sub}`,
        clientId: String(payload.client_id ?? payload.azp ?? ''),
        ...expiryOf(payload.exp),
      };
    },
    async close() {},
  };
}

function invalid(description: string): BearerResolution {
  return { kind: 'invalid', error: 'invalid_token', description };
}
