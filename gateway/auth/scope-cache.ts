import { LRUCache } from 'lru-cache';
import type { GatewayConfig } from '../../config/types.ts';
import { inSpan } from '../obs/tracing.ts';
import type { Credential } from './credentials.ts';
import type { KvStore } from '../store/kv-store.ts';
import { loggableUrl, type Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { requestLog } from '../obs/request-context.ts';

/**
 * A caller's scopes, or why they are not known. Unknown is not none: each upstream's failure mode
 * (`scopes.failureMode`) decides what it gets (open: `lastKnown`, the last good answer's scopes;
 * closed: 503), logged and counted; `unauthorized` (the endpoint answered 401 or 403: an authoritative
 * no) becomes a 401 to the caller. `account`: the account id the answer named (`scopes.accountField`).
 * `validUntil` (epoch ms): when the answer stops holding, i.e. its cache entry's expiry (`scopes.ttlMs`,
 * `unknownTtlMs`), bounded by an OAuth token's expiry; `Infinity` when nothing expires it (config API
 * keys); absent when not known (an answer not cached, or stored before the field existed). It bounds the
 * `ttlMs` of the caller's private tools/list (policy/caller.ts `VisibleCatalog.validUntil`).
 */
export type ScopeResult =
  | { kind: 'scopes'; scopes: readonly string[]; validUntil?: number; account?: string }
  | { kind: 'unknown'; reason: UnknownReason; validUntil?: number; lastKnown?: LastKnown; detail?: string }
  | { kind: 'unauthorized' };

/** A credential's last good answer, kept `scopes.staleIfErrorMs` for a failed lookup to fall back on (RFC 5861 stale-if-error). */
export interface LastKnown {
  scopes: readonly string[];
  account?: string;
  /** When the endpoint gave it, epoch ms. */
  at: number;
}

export type UnknownReason = 'error' | 'timeout' | 'no_scopes_field' | 'not_configured';

/** Longest a scope entry is served from process memory without reading the (possibly shared) store. */
const LOCAL_COPY_MS = 10_000;
/** The store key of a credential's last good answer (beside its entry, which is keyed by the digest alone). */
const lastKnownKey = (digest: string) => `good:${digest}`;

/**
 * Looks up caller scopes at `scopes.endpoint` with the caller's own credential headers, under its own
 * time budget (`scopes.timeoutMs`, AbortSignal.timeout), cached per credential digest for
 * `scopes.ttlMs` in the keyv store. Concurrent misses for one digest share one request. A 401/403 is
 * never cached (a key created a second ago works at once). Every MCP request is authenticated through
 * it (gateway/auth/authenticate.ts).
 */
export class ScopeCache {
  private readonly inflight = new Map<string, Promise<ScopeResult>>();
  /**
   * In-process copy in front of the store, so a warm lookup (every MCP request is authenticated) adds
   * no network round trip even on the Redis store. Entries read back from the store live at most
   * {@link LOCAL_COPY_MS} here, bounding how long a replica trails the shared entry.
   */
  private readonly local: LRUCache<string, ScopeResult>;
  private readonly sweeper?: NodeJS.Timeout;

  constructor(
    private readonly config: GatewayConfig['scopes'],
    private readonly store: KvStore,
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {
    this.local = new LRUCache({ max: config.maxEntries, ttl: Math.max(1, Math.min(config.ttlMs, LOCAL_COPY_MS)) });
    if (config.sweepIntervalMs > 0) {
      this.sweeper = setInterval(() => store.sweep(), config.sweepIntervalMs);
      this.sweeper.unref();
    }
  }

  /**
   * The caller's scopes: from the cache, else from the endpoint (sent with `requestId` as X-Request-Id
   * when given), narrowed to an OAuth token's grant ({@link narrowToGrant}). Never rejects.
   */
  lookup(credential: Credential, requestId?: string): Promise<ScopeResult> {
    // A `scope lookup` span of the traced request (obs/tracing.ts): the result kind, never whose scopes.
    return inSpan('scope lookup', {}, async (span) => {
      const result = credential.granted?.replacesLookup
        ? grantOnly(credential.granted)
        : narrowToGrant(await this.lookupOwn(credential, requestId), credential);
      span?.setAttribute('ai.cpz.gateway.scopes.result', result.kind === 'unknown' ? `unknown:${result.reason}` : result.kind);
      return result;
    });
  }

  private async lookupOwn(credential: Credential, requestId?: string): Promise<ScopeResult> {
    if (!this.config.endpoint) return { kind: 'unknown', reason: 'not_configured' };
    const local = live(this.local.get(credential.digest));
    if (local) {
      this.metrics.scopeLookups.inc({ result: 'hit' });
      return local;
    }
    const cached = live(await this.stored(credential));
    if (cached) {
      this.metrics.scopeLookups.inc({ result: 'hit' });
      if (cached.kind === 'scopes') this.local.set(credential.digest, cached);
      return cached;
    }
    const pending = this.inflight.get(credential.digest);
    if (pending) {
      // Coalesced with a lookup already in flight: no request of its own, counted as a hit.
      this.metrics.scopeLookups.inc({ result: 'hit' });
      return pending;
    }
    const started = this.fetchAndStore(credential, requestId).finally(() => this.inflight.delete(credential.digest));
    this.inflight.set(credential.digest, started);
    return started;
  }

  /** Whether this process holds a live answer granting `credential` scopes (its local copy; synchronous, never a lookup). */
  verified(credential: Credential): boolean {
    return live(this.local.get(credential.digest))?.kind === 'scopes';
  }

  /**
   * The caller's scopes when already cached (or `not_configured` without an endpoint), else undefined:
   * for paths that must never trigger a lookup (the direct tools/call path). Not counted in
   * `mcp_scope_lookups_total`, which counts lookups.
   */
  async cached(credential: Credential): Promise<ScopeResult | undefined> {
    if (credential.granted?.replacesLookup) return grantOnly(credential.granted);
    if (!this.config.endpoint) return narrowToGrant({ kind: 'unknown', reason: 'not_configured' }, credential);
    const found = live(await this.stored(credential));
    return found && narrowToGrant(found, credential);
  }

  /** The stored entry of `credential`, else (during a `cache.key` rotation) the one stored under its previous digest. */
  private async stored(credential: Credential): Promise<ScopeResult | undefined> {
    const found = await this.store.get<ScopeResult>(credential.digest);
    if (found || !credential.previousDigest) return found;
    return this.store.get<ScopeResult>(credential.previousDigest);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private async fetchAndStore(credential: Credential, requestId: string | undefined): Promise<ScopeResult> {
    const started = performance.now();
    const fetched = await this.fetchScopes(credential, requestId);
    const keepMs = fetched.kind === 'scopes' ? this.config.ttlMs : fetched.kind === 'unknown' ? this.config.unknownTtlMs : 0;
    // The answer holds as long as its cache entry; one that is not kept holds for this request only.
    const result: ScopeResult = fetched.kind === 'unauthorized' || keepMs <= 0 ? fetched : { ...fetched, validUntil: Date.now() + keepMs };
    this.metrics.scopeLookupDuration.observe((performance.now() - started) / 1000);
    this.metrics.scopeLookups.inc({ result: result.kind === 'scopes' ? 'miss' : result.kind === 'unknown' ? result.reason : 'unauthorized' });
    // ttlMs 0 keeps no entry (a store ttl of 0 would mean "for ever").
    if (result.kind === 'scopes' && this.config.ttlMs > 0) {
      this.local.set(credential.digest, result);
      await this.store.set(credential.digest, result, this.config.ttlMs);
    }
    if (result.kind === 'scopes' && this.config.staleIfErrorMs > 0) {
      const good: LastKnown = { scopes: result.scopes, ...(result.account !== undefined ? { account: result.account } : {}), at: Date.now() };
      await this.store.set(lastKnownKey(credential.digest), good, this.config.staleIfErrorMs);
    }
    if (result.kind === 'unauthorized') await this.store.delete(lastKnownKey(credential.digest));
    if (result.kind === 'unknown') {
      const good = this.config.staleIfErrorMs > 0 ? await this.store.get<LastKnown>(lastKnownKey(credential.digest)) : undefined;
      if (good && Date.now() - good.at <= this.config.staleIfErrorMs) result.lastKnown = good;
      requestLog(this.log, requestId).warn(
        {
          reason: result.reason,
          ...(result.detail !== undefined ? { detail: result.detail } : {}),
          endpoint: loggableUrl(this.config.endpoint!),
          caller: credential.digest.slice(0, 12),
          failureMode: this.config.failureMode,
        },
        `caller scopes unknown; failure mode ${this.config.failureMode} applies (per upstream where overridden)`,
      );
      if (this.config.unknownTtlMs > 0) await this.store.set(credential.digest, result, this.config.unknownTtlMs);
    }
    // Remembered briefly so that a caller repeating a refused credential costs the endpoint one lookup per
    // window, not one per request; short, so a key created a moment ago is usable soon.
    if (result.kind === 'unauthorized' && this.config.unauthorizedTtlMs > 0) await this.store.set(credential.digest, result, this.config.unauthorizedTtlMs);
    return result;
  }

  private async fetchScopes(credential: Credential, requestId: string | undefined): Promise<ScopeResult> {
    let response: Response;
    try {
      response = await fetch(this.config.endpoint!, {
        headers: { accept: 'application/json', ...credential.headers, ...(requestId ? { 'x-request-id': requestId } : {}) },
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
    } catch (error) {
      return { kind: 'unknown', reason: (error as Error).name === 'TimeoutError' ? 'timeout' : 'error', detail: failureDetail(error) };
    }
    // RFC 6750 §3.1: 401 invalid_token and 403 insufficient_scope are both the platform saying no.
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      return { kind: 'unauthorized' };
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { kind: 'unknown', reason: 'error', detail: `HTTP ${response.status}` };
    }
    try {
      const body: unknown = await response.json();
      const scopes = valueAt(body, this.config.field);
      if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return { kind: 'unknown', reason: 'no_scopes_field' };
      const account = this.config.accountField ? valueAt(body, this.config.accountField) : undefined;
      return {
        kind: 'scopes',
        scopes: [...new Set(scopes as string[])].sort(),
        ...(typeof account === 'string' || typeof account === 'number' ? { account: String(account) } : {}),
      };
    } catch (error) {
      return { kind: 'unknown', reason: (error as Error).name === 'TimeoutError' ? 'timeout' : 'error', detail: failureDetail(error) };
    }
  }
}

/**
 * Why a lookup failed, for the log: the system error's code (`ECONNREFUSED`) or the error's name, never its
 * message (fetch's quotes the URL, and a URL can carry a credential: SRE try-out).
 */
function failureDetail(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; name?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.name === 'string' && cause.name !== 'Error') return cause.name;
  return error instanceof Error ? error.name : 'error';
}

/**
 * Least privilege for OAuth tokens: the effective scopes are the credential's own intersected with
 * the token's grant. Without a scope endpoint (`not_configured`) the grant alone applies (it was checked
 * against the key's scopes at consent). When the endpoint cannot tell (down, timing out), the token is
 * as unknown as a key pair would be, so `scopes.failureMode` decides for it as for one: `closed` refuses,
 * `open` serves the last good answer narrowed to the grant, and a key refused since has none (review:
 * the grant alone let a revoked key's token through a `closed` upstream while the endpoint failed).
 */
export function narrowToGrant(result: ScopeResult, credential: Credential): ScopeResult {
  const granted = credential.granted;
  if (!granted || result.kind === 'unauthorized') return result;
  // Valid while both the credential's own answer and the token are.
  const validUntil = Math.min(result.validUntil ?? 0, granted.expiresAt ?? Infinity);
  if (result.kind === 'unknown' && result.reason === 'not_configured') return { kind: 'scopes', scopes: granted.scopes, validUntil };
  const allowed = new Set(granted.scopes);
  if (result.kind === 'unknown') {
    const known = result.lastKnown;
    const lastKnown = known && { ...known, scopes: known.scopes.filter((s) => allowed.has(s)) };
    return { kind: 'unknown', reason: result.reason, validUntil, ...(lastKnown ? { lastKnown } : {}) };
  }
  return { kind: 'scopes', scopes: result.scopes.filter((s) => allowed.has(s)), validUntil };
}

/** An external identity provider's token: its scopes alone, valid until it expires (`exp`, required there). */
function grantOnly(granted: NonNullable<Credential['granted']>): ScopeResult {
  return { kind: 'scopes', scopes: granted.scopes, ...(granted.expiresAt !== undefined ? { validUntil: granted.expiresAt } : {}) };
}

/** The value at a dotted path of a JSON answer (`scopes.field`, `scopes.accountField`). */
function valueAt(body: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | null)?.[key], body);
}

/** A cached answer still within its validity (copies kept in process can outlive the store's entry); else undefined. */
function live(result: ScopeResult | undefined): ScopeResult | undefined {
  return result && (result.kind === 'unauthorized' || result.validUntil === undefined || result.validUntil > Date.now()) ? result : undefined;
}
