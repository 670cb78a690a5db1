import { errors as oidcErrors } from 'oidc-provider';
import type { OAuthConfig } from '../../../config/types.ts';
import { grantCredentialKey } from './grant-credential.ts';
import type { OAuthStore, Tier } from './store.ts';

/** The payload oidc-provider hands an adapter (its models' serialised fields). */
export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** Resolves a URL-form client_id (a client ID metadata document) to client metadata, or undefined. */
export type UrlClientResolver = (clientId: string) => Promise<Record<string, unknown> | undefined>;

interface Stored {
  p: AdapterPayload;
  /** Expiry, epoch ms (0 in records of older versions, which had none). */
  e: number;
}

/** Keys of the revocation marks resolveBearer checks for sealed access tokens (which no store holds). */
export const revokedGrantKey = (grantId: string) => `revoked-grant:${grantId}`;
export const revokedTokenKey = (jti: string) => `revoked-at:${jti}`;
const consumedKey = (model: string, id: string) => `consumed:${model}:${id}`;

/**
 * The invalid_grant detail of oidc-provider's refresh and code grants when a consumed artifact comes
 * back (reuse detection), and the audit reason of each.
 */
export const REUSE_REASONS: ReadonlyMap<string, 'refresh_token_reuse' | 'authorization_code_reuse'> = new Map([
  ['refresh token already used', 'refresh_token_reuse'],
  ['authorization code already consumed', 'authorization_code_reuse'],
]);

/**
 * The set listing the ids of a model's records, for the console (admin.ts): registered clients and
 * grants. A member whose record expired or was evicted is dropped when the list is read.
 */
export const modelIndexKey = (model: 'Client' | 'Grant') => `index:${model}`;
const INDEXED_MODELS = new Set(['Client', 'Grant']);

/** Models whose records may be evicted from the in-process store under its byte bound (store.ts `Tier`). */
const BOUNDED_MODELS = new Set(['Session', 'Interaction']);

export interface AdapterOptions {
  /** How long a revocation mark outlives the revocation: as long as an access token issued just before it. */
  markTtlSeconds: number;
  /** A registered client's life until it completes an authorization ({@link promoteClient} then extends it). */
  unusedClientTtlSeconds: number;
  /** The life of a record oidc-provider gives none (none of the models the server uses, but nothing is kept for ever). */
  fallbackTtlSeconds: number;
  resolveUrlClient?: UrlClientResolver;
}

/** The adapter's lifetimes for `oauth` (provider.ts and admin.ts build their adapters with the same). */
export function adapterLifetimes(config: OAuthConfig): Omit<AdapterOptions, 'resolveUrlClient'> {
  return {
    // An access token issued just before a revocation lives this long after it; a minute's margin for clocks and races.
    markTtlSeconds: config.accessTokenTtlSeconds + 60,
    unusedClientTtlSeconds: config.clients.unusedTtlSeconds,
    fallbackTtlSeconds: config.refreshTokenTtlSeconds,
  };
}

/**
 * oidc-provider's storage adapter interface (example/my_adapter.js in panva/node-oidc-provider) over an
 * {@link OAuthStore}: one instance per model name, keys `<Model>:<id>`, every record with a TTL.
 * Artifacts issued from a grant are indexed under `grant:<grantId>`, so `revokeByGrantId` (code reuse,
 * refresh-token reuse, revocation) destroys the whole family, and leaves a revocation mark for
 * `markTtlSeconds`, because access tokens are sealed JWEs that no store holds. Consuming a code or a
 * refresh token is atomic on every store (a `consumed:` marker claimed with `SET NX`): of two requests
 * racing with one refresh token, on one replica or two, exactly one rotates it; the other is reuse,
 * which revokes the family as RFC 9700 §4.14.2 asks. A registered client lives
 * `unusedClientTtlSeconds` until an authorization completes ({@link promoteClient}). `Client` lookups
 * of a URL-form client_id go to the client ID metadata document resolver.
 */
export function adapterClass(store: OAuthStore, options: AdapterOptions) {
  return class StoreAdapter {
    constructor(readonly name: string) {}

    private key(id: string): string {
      return `${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const ttl = expiresIn && expiresIn > 0 ? expiresIn : this.name === 'Client' ? options.unusedClientTtlSeconds : options.fallbackTtlSeconds;
      const tier: Tier = BOUNDED_MODELS.has(this.name) || this.name === 'Client' ? 'bounded' : 'kept';
      const stored: Stored = { p: payload, e: Date.now() + ttl * 1000 };
      await store.set(this.key(id), JSON.stringify(stored), ttl, tier);
      if (payload.grantId) await store.addToSet(`grant:${payload.grantId}`, this.key(id), ttl);
      if (INDEXED_MODELS.has(this.name)) await store.addToSet(modelIndexKey(this.name as 'Client' | 'Grant'), id, ttl);
      if (payload.uid) await store.set(`uid:${payload.uid}`, id, ttl, tier);
      if (payload.userCode) await store.set(`user-code:${payload.userCode}`, id, ttl, tier);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const raw = await store.get(this.key(id));
      if (raw) {
        const stored = JSON.parse(raw) as Stored;
        // `e` 0: a record written before every record had a TTL (its key's own expiry still applies).
        if (stored.e && stored.e < Date.now()) return undefined;
        // The marker is written before the record: a request that reads the record in between still sees it consumed.
        if (stored.p.consumed === undefined && (this.name === 'RefreshToken' || this.name === 'AuthorizationCode')) {
          const consumed = await store.get(consumedKey(this.name, id));
          if (consumed) stored.p.consumed = Number(consumed);
        }
        return stored.p;
      }
      if (this.name === 'Client' && options.resolveUrlClient && /^https?:\/\//i.test(id)) return options.resolveUrlClient(id);
      return undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = await store.get(`uid:${uid}`);
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const id = await store.get(`user-code:${userCode}`);
      return id ? this.find(id) : undefined;
    }

    /**
     * Marks a code or refresh token consumed, atomically: the first caller claims the marker; a caller
     * that finds it claimed lost a race with another use of the same artifact, which is reuse: the
     * grant's family is revoked and the request refused as oidc-provider refuses a consumed one.
     */
    async consume(id: string): Promise<void> {
      const raw = await store.get(this.key(id));
      if (!raw) throw new oidcErrors.InvalidGrant('grant request is invalid');
      const stored = JSON.parse(raw) as Stored;
      const remaining = stored.e ? (stored.e - Date.now()) / 1000 : options.fallbackTtlSeconds;
      if (remaining <= 0) throw new oidcErrors.InvalidGrant('grant request is invalid');
      const now = Math.floor(Date.now() / 1000);
      if (!(await store.claim(consumedKey(this.name, id), String(now), remaining))) {
        if (stored.p.grantId) await this.revokeByGrantId(stored.p.grantId);
        throw new oidcErrors.InvalidGrant(this.name === 'RefreshToken' ? 'refresh token already used' : 'authorization code already consumed');
      }
      stored.p.consumed = now;
      await store.set(this.key(id), JSON.stringify(stored), remaining);
    }

    async destroy(id: string): Promise<void> {
      await store.delete(this.key(id));
      if (INDEXED_MODELS.has(this.name)) await store.removeFromSet(modelIndexKey(this.name as 'Client' | 'Grant'), id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.set(revokedGrantKey(grantId), '1', options.markTtlSeconds);
      for (const key of await store.members(`grant:${grantId}`)) await store.delete(key);
      await store.delete(`grant:${grantId}`);
      await store.delete(`Grant:${grantId}`);
      await store.removeFromSet(modelIndexKey('Grant'), grantId);
      await store.delete(grantCredentialKey(grantId));
    }
  };
}

/**
 * Keeps a registered client for `ttlSeconds` more, out of reach of the in-process store's eviction:
 * called when one of its authorizations completes and at each token it is issued, so a client in use
 * stays registered and one left idle that long expires. No-op for clients the store does not hold
 * (client ID metadata documents).
 */
export async function promoteClient(store: OAuthStore, clientId: string, ttlSeconds: number): Promise<void> {
  const key = `Client:${clientId}`;
  const raw = await store.get(key);
  if (!raw) return;
  const stored = JSON.parse(raw) as Stored;
  stored.e = Date.now() + ttlSeconds * 1000;
  await store.set(key, JSON.stringify(stored), ttlSeconds, 'kept');
}
