import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../config/types.ts';
import { ApiKeySource } from './api-keys.ts';
import { accountDigest, extractCredential, type Credential } from './credentials.ts';
import { narrowToGrant, type LastKnown, type ScopeCache, type UnknownReason } from './scope-cache.ts';
import type { BearerOutcome } from './oauth/credential.ts';
import type { RefusedCredentials } from './refused-credentials.ts';
import { withFields } from '../wire/objects.ts';

/** The account id of a configured key (`credentials.apiKeys[]`): this prefix, then its name. */
const API_KEY_ACCOUNT = 'api-key:';

/**
 * What one credential source says about a credential: its scopes; that it cannot tell right now (the
 * lookup failed: each upstream's failure mode decides); or an authoritative no. `validUntil` (epoch ms)
 * as on scope-cache.ts `ScopeResult`: when the answer stops holding (`Infinity`: never; absent: not known).
 */
export type SourceVerdict =
  | { kind: 'scopes'; scopes: readonly string[]; validUntil?: number; account?: string }
  | { kind: 'unknown'; reason: UnknownReason; validUntil?: number; lastKnown?: LastKnown }
  | { kind: 'unauthorized' };

/**
 * A pluggable credential source (config API keys, the scope endpoint, later OAuth access tokens).
 * `resolve` answers undefined when the credential is not one of its own, so the next source is asked;
 * a source that can vouch for any credential (the scope endpoint) always answers. Must not reject.
 */
export interface CredentialSource {
  readonly name: 'api_keys' | 'scope_endpoint' | (string & {});
  resolve(credential: Credential, requestId?: string): SourceVerdict | undefined | Promise<SourceVerdict | undefined>;
  /** Whether a credential it does not know names one of its own keys with a wrong secret (only the config's keys can tell). */
  wrongSecret?(credential: Credential): boolean;
  /** Whether a credential names one of its own key ids: it alone decides it, and no later source is asked (the config's keys). */
  owns?(credential: Credential): boolean;
  /** Whether it accepts `credential` now without asking anyone (a configured key, a live cached answer): synchronous. */
  verified?(credential: Credential): boolean;
}

/**
 * Why a credential was refused, for the audit trail only (the caller's answer does not say): none sent,
 * an OAuth bearer token that is not valid, a configured key with a wrong secret, a credential no source
 * knows, or one the scope endpoint refused (it does not say whether the key or the secret was wrong).
 */
export type RefusalCause = 'no_credential' | 'invalid_token' | 'wrong_secret' | 'unknown_credential' | 'refused_by_scope_endpoint';

/**
 * The caller's standing once authenticated:
 * - `scopes`: what a source granted (an anonymous caller has none);
 * - `unchecked`: no scope source is configured, so the gateway checks no credential (each upstream that
 *   receives the caller's credential decides; one that does not treats the caller as anonymous);
 * - `unverified`: the lookup failed (timeout, 5xx, no scopes field): `open` upstreams serve the scopes
 *   of the credential's last good answer (`lastKnown`, at most `scopes.staleIfErrorMs` old), `closed`
 *   ones refuse with 503 (upstreams[].scopes.failureMode); without a last good answer the edge refuses
 *   the request with 503: a credential never seen valid is never served.
 * `validUntil` (epoch ms): until when the standing holds: the scope entry's expiry (scope-cache.ts), an
 * OAuth token's `exp`, whichever is sooner; `Infinity` when nothing at the edge expires it (config API
 * keys, anonymous, no scope source: only a configuration reload changes those); absent when not known
 * (never on `unverified`: unknown scopes are the opposite of a standing that holds).
 */
export type Standing =
  | { kind: 'scopes'; scopes: readonly string[]; validUntil?: number }
  | { kind: 'unchecked'; validUntil?: number }
  | { kind: 'unverified'; reason: UnknownReason; lastKnown?: { scopes: readonly string[] } };

/** The outcome of {@link Authenticator.authenticate} for one HTTP request. */
export type Authentication =
  | { kind: 'authenticated'; credential: Credential; standing: Standing; source: string }
  /** `keyId`: with `wrong_secret`, the key id presented (a source knows it; for the audit line's account). */
  | { kind: 'invalid'; reason: 'missing' | 'refused'; cause: RefusalCause; description?: string; keyId?: string }
  /** The credential could not be checked now (an OAuth token's store is unreachable): 503 with Retry-After, never 401. */
  | { kind: 'unavailable'; description: string; retryAfterSeconds?: number }
  /**
   * A key pair whose refused secrets from this address spent `rateLimits.refusedCredentials.perKey`
   * (refused-credentials.ts): 429, its secret not checked. `blocked`: refused by a block already known.
   */
  | { kind: 'throttled'; retryAfterMs: number; keyId: string; blocked: boolean }
  /**
   * An OAuth token presented where the gateway cannot tell whether the URL the request names is its own
   * (`oauth.mode: external` without publicUrl, reached on another port than its Host names): 421, never 401,
   * which would have the client fetch a new token that is refused again, forever.
   */
  | { kind: 'misdirected'; description: string };

export interface AuthenticateOptions {
  /** Sent to the scope endpoint as X-Request-Id. */
  requestId?: string;
  /**
   * OAuth (gateway/auth/oauth, when `oauth.mode` is on): turns a bearer access token into the credential
   * behind it, carrying the token's grant (`Credential.granted`); its `invalid` is a 401.
   */
  exchange?: (credential: Credential) => Promise<BearerOutcome>;
  /** Bounds guessing a key pair's secret from `address` (refused-credentials.ts); absent: not bounded. */
  guesses?: RefusedCredentials | undefined;
  /** The client address `guesses` counts by. */
  address?: string;
}

/** The credential of a caller who sent none (`anonymous: true`): no headers to forward, one shared digest. */
export const ANONYMOUS: Credential = Object.freeze({ kind: 'anonymous', headers: Object.freeze({}), digest: 'anonymous' }) as Credential;

/**
 * Authentication at the edge: the ONE function every MCP request goes through before anything reaches
 * an upstream. Reads the credential (credentials.ts: normalised, keyed digest), then asks the sources
 * in order (config API keys, then the scope endpoint: cached per digest, single-flight), and answers:
 * - no credential: anonymous (scopes `[]`) under `anonymous: true`, else invalid `missing`;
 * - a credential no source knows, or that one refuses (401/403 from the endpoint): invalid `refused`;
 * - an OAuth access token (`options.exchange`): the credential behind it, its grant narrowing the
 *   sources' scopes (an external IdP's token: its scopes alone); an invalid token: invalid `refused`; one
 *   presented where no audience can be told (http/protected-resource.ts `tokenAudience`): `misdirected`;
 * - a credential with no source configured at all: authenticated, `unchecked`; under `oauth.mode: external`
 *   (the identity provider is the source) one that is not its token: invalid `refused`;
 * - else authenticated with the scopes, or `unverified` when the lookup failed.
 * Warm: one HMAC, one map read and one cache read; no network.
 */
export class Authenticator {
  /** `credentials.keyHeader` as Node names headers (lower case). */
  private readonly keyHeader: string;
  /** The checks under way of key pairs not verified already, by credential digest and address ({@link authenticate}). */
  private readonly guardedChecks = new Map<string, Promise<Authentication>>();
  /** Account id (a key id or the id a source named, not a secret) -> its keyed digest; bounded by count. */
  private readonly accounts = new LRUCache<string, string>({ max: 10_000 });

  /**
   * @param key - the digest key (`cache.key`); `options.previousKey` the one being rotated out.
   */
  constructor(
    private readonly config: Pick<GatewayConfig, 'credentials' | 'anonymous'> & { oauth?: Pick<GatewayConfig['oauth'], 'mode'> },
    private readonly key: Buffer,
    private readonly sources: readonly CredentialSource[],
    private readonly options: { previousKey?: Buffer } = {},
  ) {
    this.keyHeader = config.credentials.keyHeader.toLowerCase();
  }

  async authenticate(headers: IncomingHttpHeaders, options: AuthenticateOptions = {}): Promise<Authentication> {
    const { exchange, guesses: guard } = options;
    const credentials = exchange && !this.config.credentials.bearer ? { ...this.config.credentials, bearer: true } : this.config.credentials;
    const credential = extractCredential(headers, credentials, this.key, this.options.previousKey);
    // A key pair (no bearer token taken) is checked only within its budget of refused secrets from this address: a
    // block known here refuses it unchecked; one not verified already (a configured key's, a live cached answer) spends a
    // point BEFORE its check, given back when accepted, so a burst sent at once is bounded too (review: 60 guesses at
    // once, each counted only once refused, were all checked, the right one answered 200). The key id counted is
    // the one the credential carries (trimmed: review, a padded id had a budget of its own).
    const keyId = guard && credential?.kind === 'key' ? credential.headers[this.keyHeader] : undefined;
    if (keyId === undefined || !guard) return this.authenticateCredential(credential, options);
    const address = options.address ?? '';
    const blockedMs = guard.blockedFor(address, keyId);
    if (blockedMs > 0) return { kind: 'throttled', retryAfterMs: blockedMs, keyId, blocked: true };
    if (this.verified(credential!)) return this.authenticateCredential(credential, options);
    // One point per credential checked at a time, not per request: a client's cold burst of one key pair joins the
    // check under way (as the scope cache joins its lookup), where each made-up secret is a check of its own.
    const key = `${credential!.digest}\0${address}`;
    const joined = this.guardedChecks.get(key);
    if (joined) return joined;
    const check = (async (): Promise<Authentication> => {
      const over = await guard.spend(address, keyId);
      if (over) return { kind: 'throttled', retryAfterMs: over.retryAfterMs, keyId, blocked: false };
      const outcome = await this.authenticateCredential(credential, options);
      if (outcome.kind !== 'invalid') void guard.giveBack(address, keyId);
      return outcome;
    })().finally(() => this.guardedChecks.delete(key));
    this.guardedChecks.set(key, check);
    return check;
  }

  /** Whether a source accepts `credential` without asking anyone ({@link CredentialSource.verified}); a loop, no closure per request. */
  private verified(credential: Credential): boolean {
    for (const source of this.sources) if (source.verified?.(credential)) return true;
    return false;
  }

  private async authenticateCredential(credential: Credential | undefined, options: AuthenticateOptions): Promise<Authentication> {
    const { requestId, exchange } = options;
    if (!credential) {
      return this.config.anonymous
        ? { kind: 'authenticated', credential: ANONYMOUS, standing: { kind: 'scopes', scopes: [], validUntil: Infinity }, source: 'anonymous' }
        : { kind: 'invalid', reason: 'missing', cause: 'no_credential' };
    }
    if (exchange && credential.headers.authorization) {
      const outcome = await exchange(credential);
      if (outcome.kind === 'invalid') return { kind: 'invalid', reason: 'refused', cause: 'invalid_token', description: outcome.description };
      if (outcome.kind === 'unavailable' || outcome.kind === 'misdirected') return outcome;
      if (outcome.kind === 'credential') credential = outcome.credential;
    }
    // An external identity provider's token carries the scopes and the account (its issuer + sub) themselves: no source is asked.
    const granted = credential.granted;
    if (granted?.replacesLookup) {
      const standing: Standing = { kind: 'scopes', scopes: granted.scopes, ...validity(granted.expiresAt) };
      return { kind: 'authenticated', credential: this.withAccount(credential, granted.account), standing, source: 'oauth' };
    }
    if (this.sources.length === 0) {
      // An external identity provider is a scope source: what is not its token (a key pair, an opaque or JWE bearer)
      // is known to nobody, never `unchecked` (security try-out: any made-up credential listed and called every tool).
      if (!granted && this.config.oauth?.mode === 'external')
        return {
          kind: 'invalid',
          reason: 'refused',
          cause: 'unknown_credential',
          description: 'only an access token of the identity provider (oauth.external.issuer) is accepted here',
        };
      const standing: Standing = granted
        ? { kind: 'scopes', scopes: granted.scopes, ...validity(granted.expiresAt) }
        : { kind: 'unchecked', validUntil: Infinity };
      return { kind: 'authenticated', credential: this.withAccount(credential), standing, source: credential.granted ? 'oauth' : 'none' };
    }
    const found = await this.firstVerdict(credential, requestId);
    if (!found) return this.refusedCredential(credential);
    // Least privilege for OAuth tokens: the grant narrows what the source says (scope-cache.ts).
    const verdict = narrowToGrant(found.verdict, credential);
    if (verdict.kind === 'unauthorized') {
      return found.source === 'scope_endpoint'
        ? { kind: 'invalid', reason: 'refused', cause: 'refused_by_scope_endpoint' }
        : this.refusedCredential(credential);
    }
    if (verdict.kind === 'scopes') {
      const standing: Standing = { kind: 'scopes', scopes: verdict.scopes, ...validity(verdict.validUntil) };
      return { kind: 'authenticated', credential: this.withAccount(credential, verdict.account, found.source === 'api_keys'), standing, source: found.source };
    }
    const lastKnown = verdict.lastKnown;
    const standing: Standing = { kind: 'unverified', reason: verdict.reason, ...(lastKnown ? { lastKnown: { scopes: lastKnown.scopes } } : {}) };
    return { kind: 'authenticated', credential: this.withAccount(credential, lastKnown?.account), standing, source: found.source };
  }

  /** A credential no source accepts: `wrong_secret` with the key id when a source knows that id, else `unknown_credential`. */
  private refusedCredential(credential: Credential): Authentication {
    if (!this.sources.some((source) => source.wrongSecret?.(credential))) return { kind: 'invalid', reason: 'refused', cause: 'unknown_credential' };
    return { kind: 'invalid', reason: 'refused', cause: 'wrong_secret', keyId: credential.headers[this.keyHeader] };
  }

  /**
   * `credential` with its `account` (the rate budgets, run_code's runs and listen streams count per
   * account): the account id its source named (an external identity provider's token: its issuer + sub,
   * never the service key forwarded for it), else the key id it presents (a key pair, or the one behind
   * a built-in server's grant), else the credential itself. `configuredKey`: the answer came from `credentials.apiKeys`,
   * whose key name the credential then carries as `apiKey`.
   */
  private withAccount(credential: Credential, named?: string, configuredKey = false): Credential {
    const given = named ?? credential.headers[this.keyHeader];
    if (given === undefined) return withFields(credential, { account: credential.digest });
    // A configured key's account id space is its own: a scope endpoint's account, or a key id, spelt `api-key:ops`
    // would otherwise share configured key ops's budgets and runs (review).
    const id = !configuredKey && given.startsWith(API_KEY_ACCOUNT) ? `other:${given}` : given;
    // Remembered per account id: every authenticated request names one, and an HMAC is a few µs of the hop.
    let account = this.accounts.get(id);
    if (account === undefined) {
      account = accountDigest(id, this.key);
      this.accounts.set(id, account);
    }
    // A configured key is named in the audit log by its name (config: "Names the key in logs"; SRE try-out); by the
    // source that answered, never by the account id's text, which a scope endpoint names too (review).
    return configuredKey && named?.startsWith(API_KEY_ACCOUNT)
      ? withFields(credential, { account, apiKey: named.slice(API_KEY_ACCOUNT.length) })
      : withFields(credential, { account });
  }

  /**
   * What the sources say of a credential a person typed rather than sent (the OAuth sign-in page: a
   * key and secret as credential headers): the first source that knows it, asked in the order
   * {@link authenticate} asks them, so a config API key signs in like a platform key; no source knows
   * it: `unauthorized`; no source configured: `unknown` (`not_configured`), and nothing is issued.
   */
  async resolveScopes(credential: Credential, requestId?: string): Promise<SourceVerdict> {
    if (this.sources.length === 0) return { kind: 'unknown', reason: 'not_configured' };
    return (await this.firstVerdict(credential, requestId))?.verdict ?? { kind: 'unauthorized' };
  }

  /**
   * The verdict of the first source, in order, that knows `credential`, and that source's name; none knows it:
   * undefined. A credential naming a key id of a source's own (`credentials.apiKeys`, {@link CredentialSource.owns})
   * that the source does not accept is its `unauthorized`, and no later source is asked: the near-miss secret of a
   * configured key never reaches the scope endpoint, and the refusal is audited `wrong_secret` with the key's
   * account (try-out).
   */
  private async firstVerdict(credential: Credential, requestId?: string): Promise<{ verdict: SourceVerdict; source: string } | undefined> {
    for (const source of this.sources) {
      const verdict = await source.resolve(credential, requestId);
      if (verdict !== undefined) return { verdict, source: source.name };
      if (source.owns?.(credential)) return { verdict: { kind: 'unauthorized' }, source: source.name };
    }
    return undefined;
  }
}

/** `{ validUntil }` when known, else nothing (absent: not known). */
function validity(validUntil: number | undefined): { validUntil?: number } {
  return validUntil === undefined ? {} : { validUntil };
}

/** The config's API keys as a source (none configured: not a source at all). */
export function apiKeySource(keys: ApiKeySource): CredentialSource | undefined {
  if (keys.size === 0) return undefined;
  return {
    name: 'api_keys',
    resolve: (credential) => {
      const match = keys.resolve(credential);
      // A config key's scopes change only with the configuration (a reload builds a new runtime); each config key is one account.
      return match && { kind: 'scopes', scopes: match.scopes, validUntil: Infinity, account: `${API_KEY_ACCOUNT}${match.name}` };
    },
    wrongSecret: (credential) => keys.wrongSecret(credential),
    owns: (credential) => keys.owns(credential),
    verified: (credential) => keys.resolve(credential) !== undefined,
  };
}

/** The scope endpoint as a source: it vouches for any credential, so it always answers (cached, single-flight). */
export function scopeEndpointSource(cache: ScopeCache, configured: boolean): CredentialSource | undefined {
  if (!configured) return undefined;
  return {
    name: 'scope_endpoint',
    resolve: (credential, requestId) => cache.lookup(credential, requestId),
    verified: (credential) => cache.verified(credential),
  };
}

/** The sources of a configuration, in the order they are asked. */
export function credentialSources(config: GatewayConfig, key: Buffer, scopeCache: ScopeCache): CredentialSource[] {
  return [
    apiKeySource(new ApiKeySource(config.credentials.apiKeys, config.credentials, key)),
    scopeEndpointSource(scopeCache, config.scopes.endpoint !== undefined),
  ].filter((s): s is CredentialSource => s !== undefined);
}
