import type { OAuthStore } from './store.ts';

/** The payload oidc-provider hands an adapter (its models' serialised fields). */
export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** Resolves a URL-form client_id (a client ID metadata document) to client metadata, or undefined. */
export type UrlClientResolver = (clientId: string) => Promise<Record<string, unknown> | undefined>;

interface Stored {
  p: AdapterPayload;
  /** Expiry, epoch ms; 0: none. */
  e: number;
}

/** Keys of the revocation marks resolveBearer checks for sealed access tokens (which no store holds). */
export const revokedGrantKey = (grantId: string) => `revoked-grant:${grantId}`;
export const revokedTokenKey = (jti: string) => `revoked-at:${jti}`;

/**
 * oidc-provider's storage adapter interface (example/my_adapter.js in panva/node-oidc-provider) over an
 * {@link OAuthStore}: one instance per model name, keys `<Model>:<id>`. Artifacts issued from a grant
 * are indexed under `grant:<grantId>`, so `revokeByGrantId` (code reuse, refresh-token reuse,
 * revocation) destroys the whole family, and leaves a revocation mark for `markTtlSeconds` (the access
 * token lifetime), because access tokens are sealed JWEs that no store holds. `Client` lookups of a
 * URL-form client_id go to the client ID metadata document resolver.
 */
export function adapterClass(store: OAuthStore, options: { markTtlSeconds: number; resolveUrlClient?: UrlClientResolver }) {
  return class StoreAdapter {
    constructor(readonly name: string) {}

    private key(id: string): string {
      return `${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const ttl = expiresIn && expiresIn > 0 ? expiresIn : undefined;
      const stored: Stored = { p: payload, e: ttl ? Date.now() + ttl * 1000 : 0 };
      await store.set(this.key(id), JSON.stringify(stored), ttl);
      if (payload.grantId) await store.addToSet(`grant:${payload.grantId}`, this.key(id), ttl);
      if (payload.uid) await store.set(`uid:${payload.uid}`, id, ttl);
      if (payload.userCode) await store.set(`user-code:${payload.userCode}`, id, ttl);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const raw = await store.get(this.key(id));
      if (raw) {
        const stored = JSON.parse(raw) as Stored;
        return stored.e && stored.e < Date.now() ? undefined : stored.p;
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

    async consume(id: string): Promise<void> {
      const raw = await store.get(this.key(id));
      if (!raw) return;
      const stored = JSON.parse(raw) as Stored;
      stored.p.consumed = Math.floor(Date.now() / 1000);
      const remaining = stored.e ? (stored.e - Date.now()) / 1000 : undefined;
      if (remaining !== undefined && remaining <= 0) return;
      await store.set(this.key(id), JSON.stringify(stored), remaining);
    }

    async destroy(id: string): Promise<void> {
      await store.delete(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.set(revokedGrantKey(grantId), '1', options.markTtlSeconds);
      for (const key of await store.members(`grant:${grantId}`)) await store.delete(key);
      await store.delete(`grant:${grantId}`);
      await store.delete(`Grant:${grantId}`);
      await store.delete(`grant-credential:${grantId}`);
    }
  };
}
