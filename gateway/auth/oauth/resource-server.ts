import { createRemoteJWKSet, customFetch, jwtVerify, errors as joseErrors, type JWTHeaderParameters, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { GatewayConfig } from '../../../config/types.ts';
import { loggableUrl, throttled, type Logger } from '../../obs/log.ts';
import { canonicalResource } from './resource-url.ts';
import { expiryOf, type BearerResolution, type OAuth } from './types.ts';

type ExternalConfig = GatewayConfig['oauth']['external'];

/**
 * Resource-server mode for an existing identity provider (Keycloak, Entra, Okta, Auth0, ...): JWT
 * access tokens (RFC 9068) are verified with `jose` against the issuer's JWKS (fetched on first use,
 * cached, refetched when a token names an unknown `kid`, so key rotation needs no restart): the
 * signature (asymmetric algorithms only), the `typ` header (`tokenTypes`, default `at+jwt`: RFC 9068 §4, so
 * an ID token of the same issuer is refused), `iss`, `aud` (default: the canonical URL of the endpoint the
 * token is presented to, MCP 2026-07-28 "Token Handling"), `exp`/`nbf` with `clockSkewSeconds`, `iat` (required,
 * RFC 9068 §2.2; not ahead of the clock by more than `clockSkewSeconds`, and a token is taken for at most
 * `maxTokenAgeSeconds` after it, whatever its `exp`: with no revocation check here, that bounds a leaked token). The
 * scopes come from `scopeClaim` (space-delimited string or array), mapped through `scopeMap`; they
 * replace the scope endpoint lookup. With a `scopeMap`, the RFC 9728 `scopes_supported` and the step-up
 * challenge name the provider's scopes (its keys), which are what a client can ask the provider for. Upstream calls use `credentialHeaders` (a static service
 * credential), never the caller's token; the token's account (rate budgets, listen streams) is its
 * issuer + `sub` (required, RFC 9068 §2.2; a non-empty string, RFC 7519 §4.1.2), never that shared credential.
 * When the keys cannot be read (the provider or its metadata down, slow, or answering other than 200
 * with a key set) a token whose key is not cached is `unavailable` (503 + Retry-After, as the built-in
 * mode's store outage: the client keeps its token), logged at warn at most once a minute; `invalid`
 * (401) only for a token that is (a key set was read and holds no key for its `kid` is one).
 */
export function createResourceServer(gateway: GatewayConfig, deps: { log: Logger }): OAuth {
  const external = gateway.oauth.external;
  if (!external.issuer) throw new Error('oauth.external.issuer is required in external mode');
  const issuer = external.issuer;
  const log = deps.log.child({ component: 'oauth-rs' });
  const warnUnavailable = throttled(60_000);
  /** The JWKS URL in use and the status of its last answer (a 404 says more than jose's "Expected 200 OK"). */
  let jwksUrl: string | undefined;
  let jwksStatus: number | undefined;
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
      jwksUrl = loggableUrl(uri);
      return (jwks = createRemoteJWKSet(new URL(uri), {
        timeoutDuration: KEYS_TIMEOUT_MS,
        // A token naming a kid the cached set lacks refetches it once this long after the last read (jose
        // default 30 s): a rotated-in key is accepted within 5 s, and tokens naming made-up kids cost the
        // provider at most one request per 5 s per replica.
        cooldownDuration: 5_000,
        cacheMaxAge: 10 * 60_000,
        [customFetch]: async (url: string, init: RequestInit) => {
          jwksStatus = undefined;
          const response = await fetch(url, init);
          jwksStatus = response.status;
          return response;
        },
      }));
    })().finally(() => (discovering = undefined));
    return discovering;
  }

  /**
   * The verification key of a token (jose's JWKS lookup): what goes wrong reading the key set (discovery,
   * a network error, a timeout, a status other than 200, no JSON key set) is {@link KeysUnavailable}; a
   * key set that was read and has no single key for the token's header is the token's fault (jose's error).
   */
  const verificationKey: JWTVerifyGetKey = async (header, token) => {
    const keys = await keySet().catch((error: unknown) => {
      throw new KeysUnavailable(`issuer metadata: ${(error as Error).message}`);
    });
    try {
      return await keys(header, token);
    } catch (error) {
      if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys || error instanceof joseErrors.JOSENotSupported)
        throw error;
      const status = jwksStatus !== undefined && jwksStatus !== 200 ? `HTTP ${jwksStatus}` : readError(error);
      throw new KeysUnavailable(`${jwksUrl} answered ${status}`);
    }
  };

  const tokenTypes = new Set(external.tokenTypes.map(mediaType));
  const accepted = external.tokenTypes.map((t) => JSON.stringify(t)).join(', ');

  const mapScopes = (scopes: string[]) => [...new Set(scopes.flatMap((s) => external.scopeMap[s] ?? [s]))].sort();
  /** scopeMap read backwards: a gateway scope -> the provider's scopes that map to it. */
  const grantedBy = new Map<string, string[]>();
  for (const [providerScope, scopes] of Object.entries(external.scopeMap))
    for (const scope of scopes) grantedBy.set(scope, [...(grantedBy.get(scope) ?? []), providerScope]);
  /**
   * The provider's scope to ask for each gateway scope a tool needs: the narrowest key that grants it (the one
   * mapping to the fewest scopes; a tie by name), else the scope itself. RFC 6750 §3 reads `scope` as what is
   * needed, so naming every key that grants it had clients ask for the broadest too (review: `mcp.trade mcp.all`).
   * Keys that are no RFC 6749 §3.3 scope-token (a group name with a space, from an array claim) are never named.
   */
  const scopesToRequest = (scopes: readonly string[]) => [
    ...new Set(
      scopes.map((s) => {
        const keys = (grantedBy.get(s) ?? []).filter((key) => SCOPE_TOKEN.test(key));
        if (keys.length === 0) return s;
        return keys.reduce((best, key) => {
          const [a, b] = [external.scopeMap[key]!.length, external.scopeMap[best]!.length];
          return a < b || (a === b && key < best) ? key : best;
        });
      }),
    ),
  ];
  // With a scopeMap a client asks the provider for the provider's scope names (MCP authorization §Scope
  // Selection Strategy reads scopes_supported): the map's keys that are scope-tokens and map to something, and
  // each gateway scope no key maps to (it stands for itself).
  const scopesSupported = grantedBy.size
    ? [
        ...new Set([
          ...Object.keys(external.scopeMap).filter((key) => SCOPE_TOKEN.test(key) && external.scopeMap[key]!.length > 0),
          ...gateway.oauth.scopes.filter((s) => !grantedBy.has(s)),
        ]),
      ]
    : [...gateway.oauth.scopes];

  return {
    mode: 'external',
    routes: async (_ctx, next) => next(),
    metadata: { authorization_servers: [issuer], scopes_supported: scopesSupported },
    insufficientScope: external.insufficientScope,
    scopesToRequest,
    async resolveBearer(token, resourceUrl): Promise<BearerResolution> {
      let payload: JWTPayload;
      let protectedHeader: JWTHeaderParameters;
      const verify = () =>
        jwtVerify(token, verificationKey, {
          issuer,
          audience: external.audience ?? canonicalResource(resourceUrl) ?? resourceUrl,
          algorithms,
          clockTolerance: external.clockSkewSeconds,
          // jose's maxTokenAge requires iat (RFC 9068 §2.2), refuses one ahead of the clock by more than the
          // tolerance, and one older than the bound: an exp decades ahead (a provider or client configured for
          // "never expires") no longer makes a leaked token good for decades, and a token is never refused
          // while fresh (a client that refreshes on 401 gets a fresh one; refusing by exp - iat would loop it).
          maxTokenAge: external.maxTokenAgeSeconds,
          // sub: the token's account (RFC 9068 §2.2 requires it); many people may share one credentialHeaders key.
          requiredClaims: ['exp', 'sub'],
        });
      try {
        ({ payload, protectedHeader } = await verify().catch(async (error: unknown) => {
          // A provider that signs with a new key under a kid it used before (some rotate so) has a cached key
          // fail the signature: the set is read again (jose's cooldown bounds how often) and the token checked
          // once more, else its valid tokens were refused until the cache aged out (cacheMaxAge, 10 minutes).
          if (!(error instanceof joseErrors.JWSSignatureVerificationFailed) || !jwks || jwks.coolingDown) throw error;
          // A set that cannot be read now leaves the cached key's verdict standing.
          await jwks.reload().catch(() => {
            throw error;
          });
          return verify();
        }));
      } catch (error) {
        const claimError = error instanceof joseErrors.JWTClaimValidationFailed || error instanceof joseErrors.JWTExpired ? error : undefined;
        if (claimError?.claim === 'iat') return invalid(issuedAtRefusal(claimError, external));
        if (error instanceof joseErrors.JWTExpired) return invalid('The access token expired');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') return invalid('The access token was issued for another resource');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'nbf') return invalid('The access token is not valid yet');
        if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'sub') return invalid('The access token names no subject (sub)');
        if (error instanceof KeysUnavailable) {
          const reason = error.message;
          warnUnavailable((notLogged) =>
            log.warn({ reason, ...(notLogged ? { notLogged } : {}) }, 'identity provider keys unavailable: tokens whose key is not cached get 503'),
          );
          return {
            kind: 'unavailable',
            description: "the identity provider's signing keys cannot be read right now",
            retryAfterSeconds: KEYS_TIMEOUT_MS / 1000,
          };
        }
        return invalid('The access token is not valid here');
      }
      // RFC 9068 §4 (and RFC 8725 §3.11): an ID token or another JWT of the same issuer, signed by the same
      // keys, is no access token. Checked once the signature holds, so the typ quoted back is the issuer's.
      const typ: unknown = protectedHeader.typ;
      if (!(typ === undefined ? tokenTypes.has('') : typeof typ === 'string' && tokenTypes.has(mediaType(typ)))) {
        const had = typ === undefined ? 'absent' : typeof typ === 'string' ? JSON.stringify(typ.slice(0, 40)) : `not a string (${typeof typ})`;
        return invalid(`The access token's typ header is ${had}, which oauth.external.tokenTypes (${accepted}) does not accept`);
      }
      // RFC 7519 §4.1.2: sub is a StringOrURI. Stringified, an object would be "[object Object]" and every
      // such token one account; an empty one names nobody.
      const sub = payload.sub as unknown;
      if (typeof sub !== 'string' || sub === '') return invalid("The access token's sub is not a non-empty string");
      const claim = payload[external.scopeClaim];
      const raw =
        typeof claim === 'string' ? claim.split(' ').filter(Boolean) : Array.isArray(claim) ? claim.filter((s): s is string => typeof s === 'string') : [];
      return {
        kind: 'ok',
        credentialHeaders: { ...external.credentialHeaders },
        scopes: mapScopes(raw),
        subject: sub,
        // Issuer and subject (OIDC Core §2: unique together), NUL-separated; the edge keys it (accountDigest) before anything counts it.
        account: `oauth\0${issuer}\0${sub}`,
        clientId: String(payload.client_id ?? payload.azp ?? ''),
        // What holds the token's standing (scopes, a private list, a listen stream) ends when it stops being taken here.
        ...expiryOf(Math.min(payload.exp!, payload.iat! + external.maxTokenAgeSeconds)),
      };
    },
    async close() {},
  };
}

/** RFC 6749 §3.3 scope-token: what a `scope` parameter or `scopes_supported` entry can hold. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** How long one read of the JWKS may take; a 503 for unreadable keys asks the client to retry after as long. */
const KEYS_TIMEOUT_MS = 5000;

/** The identity provider's keys could not be read: not the token's fault. Its message names no token. */
class KeysUnavailable extends Error {}

/** A failed read's cause in a few words: jose's timeout, fetch's "fetch failed" with its cause (ECONNREFUSED ...), or the message. */
function readError(error: unknown): string {
  if (error instanceof joseErrors.JWKSTimeout) return `nothing within ${KEYS_TIMEOUT_MS} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return `${(error as Error).message}${detail ? ` (${detail})` : ''}`;
}

/**
 * A `typ` value as RFC 7515 §4.1.9 compares it: a media type, case-insensitive, whose `application/` may be
 * left out when no other `/` is in it (`at+jwt` is `application/at+jwt`); '' (no typ) stays ''.
 */
function mediaType(typ: string): string {
  const lower = typ.toLowerCase();
  return lower === '' || lower.includes('/') ? lower : `application/${lower}`;
}

/**
 * Why a token's `iat` (RFC 7519 §4.1.6) is refused, from jose's `maxTokenAge` check: absent (RFC 9068 §2.2
 * requires it), not a NumericDate, ahead of the clock by more than `clockSkewSeconds`, or older than
 * `maxTokenAgeSeconds`. Names the settings, never a claim's value.
 */
function issuedAtRefusal(error: InstanceType<typeof joseErrors.JWTExpired | typeof joseErrors.JWTClaimValidationFailed>, external: ExternalConfig): string {
  if (error.reason === 'missing') return 'The access token has no iat (issued-at), which RFC 9068 §2.2 requires of a JWT access token';
  if (error.reason === 'invalid') return "The access token's iat (issued-at) is not a number of seconds (RFC 7519 §2 NumericDate)";
  if (error instanceof joseErrors.JWTExpired)
    return `The access token was issued more than ${external.maxTokenAgeSeconds} s ago (oauth.external.maxTokenAgeSeconds), though its exp is later`;
  return `The access token's iat (issued-at) is more than ${external.clockSkewSeconds} s ahead of the gateway's clock (oauth.external.clockSkewSeconds)`;
}

function invalid(description: string): BearerResolution {
  return { kind: 'invalid', error: 'invalid_token', description };
}
