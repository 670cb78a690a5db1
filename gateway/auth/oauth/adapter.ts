import { createHmac } from 'node:crypto';
import { errors as oidcErrors } from 'oidc-provider';
import type { OAuthConfig } from '../../../config/types.ts';
import { grantCredentialKey } from './grant-credential.ts';
import { unwrap, wrap, type OAuthKeys } from './keys.ts';
import type { OAuthStore, Tier } from './store.ts';

/** The payload oidc-provider hands an adapter (its models' serialised fields). */
export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** Resolves a URL-form client_id (a client ID metadata document) to client metadata, or undefined. */
export type UrlClientResolver = (clientId: string) => Promise<Record<string, unknown> | undefined>;

interface Stored {
  p: AdapterPayload;
  /** Expiry, epoch ms (0 in records of older versions, which had none). */
  e: number;
  /** 1: the payload's `jti`, the record's id (the token itself, for a code or refresh token), was left out; `find(id)` puts it back. */
  i?: 1;
}

/**
 * Keys of the revocation marks resolveBearer checks for sealed access tokens (which no store holds):
 * a grant id and an access token's `jti`, identifiers that redeem nothing (the access token is the
 * sealed JWE, not its `jti`), kept as they are so that every replica, whatever keys it holds during a
 * rotation, reads the marks every other one writes.
 */
export const revokedGrantKey = (grantId: string) => `revoked-grant:${grantId}`;
export const revokedTokenKey = (jti: string) => `revoked-at:${jti}`;
/** The consumed marker of the code or refresh token stored at `recordKey` (named after the record, so never after the token). */
const consumedKey = (recordKey: string) => `consumed:${recordKey}`;

/** The keys naming records and wrapping the ids lookups lead to (keys.ts), the previous root key's during a rotation. */
export type RecordKeys = Pick<OAuthKeys, 'records' | 'recordIds'> & { previous?: Pick<OAuthKeys, 'records' | 'recordIds'> };

/**
 * The model whose records are named by their id as it is: a client's id is public (every authorization
 * request carries it, the console lists it), and its registration outlives key rotations.
 */
const NAMED_BY_ID = 'Client';

/** HMAC-SHA256 of `label` NUL `value` under `key`, base64url (43 characters): what a store key names instead of an id. */
function keyedDigest(key: Buffer, label: string, value: string): string {
  return createHmac('sha256', key).update(`${label}\0${value}`).digest('base64url');
}

/**
 * Where the record of `model` with id `id` may be, first the key new records are written at: `Client:<id>`;
 * for every other model `<Model>:<keyed digest of the id>` under `keys.records`, then under the previous
 * root key's (rotation). oidc-provider's id of a code, refresh token, session or interaction is the secret
 * itself (a bearer value), so no store key, set member or value holds it: the project's rule that stores
 * key by a keyed digest (README "Credentials are digested"), which a reviewer found broken here (the
 * store's key names were live refresh tokens).
 */
export function recordKeys(keys: RecordKeys, model: string, id: string): string[] {
  if (model === NAMED_BY_ID) return [`${model}:${id}`];
  return [keys.records, ...(keys.previous ? [keys.previous.records] : [])].map((key) => `${model}:${keyedDigest(key, model, id)}`);
}

/**
 * The record of `model` with id `id` as stored (its payload without the id), at the first of its
 * {@link recordKeys} that holds one, with that key; undefined when none does. Expiry is not checked.
 */
export async function readRecord(store: OAuthStore, keys: RecordKeys, model: string, id: string): Promise<{ key: string; stored: Stored } | undefined> {
  for (const key of recordKeys(keys, model, id)) {
    const raw = await store.get(key);
    if (raw) return { key, stored: JSON.parse(raw) as Stored };
  }
  return undefined;
}

/** The store keys of a lookup (`uid`, `user-code`) of `model` by `value`: under the current key, then the previous one; each with the key that wraps the id it holds. */
function lookupKeys(keys: RecordKeys, kind: 'uid' | 'user-code', model: string, value: string): { key: string; ids: Buffer }[] {
  return [keys, ...(keys.previous ? [keys.previous] : [])].map((k) => ({
    key: `${kind}:${model}:${keyedDigest(k.records, `${kind}:${model}`, value)}`,
    ids: k.recordIds,
  }));
}

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
 * grants, by their ids (identifiers the console shows, which redeem nothing). A member whose record
 * expired or was evicted is dropped when the list is read.
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
  /** What names the records and wraps the ids a lookup leads to ({@link recordKeys}). */
  keys: RecordKeys;
  resolveUrlClient?: UrlClientResolver;
}

/** The adapter's lifetimes for `oauth` (provider.ts and admin.ts build their adapters with the same). */
export function adapterLifetimes(config: OAuthConfig): Omit<AdapterOptions, 'resolveUrlClient' | 'keys'> {
  return {
    // An access token issued just before a revocation lives this long after it; a minute's margin for clocks and races.
    markTtlSeconds: config.accessTokenTtlSeconds + 60,
    unusedClientTtlSeconds: config.clients.unusedTtlSeconds,
    fallbackTtlSeconds: config.refreshTokenTtlSeconds,
  };
}

/**
 * oidc-provider's storage adapter interface (example/my_adapter.js in panva/node-oidc-provider) over an
 * {@link OAuthStore}: one instance per model name, every record with a TTL. A record is named by a keyed
 * digest of its id ({@link recordKeys}; a client by its id), and its payload is stored without the id
 * (`jti`), which `find(id)` puts back: oidc-provider's id of a code or refresh token is the token, and
 * whoever reads the store (SCAN, MONITOR, a backup, a replica) must not find one there. `findByUid` and
 * `findByUserCode` go through lookups named by keyed digests too, holding the id wrapped (AES-256-GCM,
 * keys.ts `recordIds`). During a rotation (`oauth.tokenSecretPrevious`) a record is looked for under the
 * current key, then the previous one, and written under the current one.
 * Artifacts issued from a grant are indexed under `grant:<grantId>` (members: their record keys), so
 * `revokeByGrantId` (code reuse, refresh-token reuse, revocation) destroys the whole family, and leaves a
 * revocation mark for `markTtlSeconds`, because access tokens are sealed JWEs that no store holds.
 * Consuming a code or a refresh token is atomic on every store (a `consumed:<record key>` marker claimed
 * with `SET NX`): of two requests racing with one refresh token, on one replica or two, exactly one
 * rotates it; the other is reuse, which revokes the family as RFC 9700 §4.14.2 asks. A registered client
 * lives `unusedClientTtlSeconds` until an authorization completes ({@link promoteClient}). `Client`
 * lookups of a URL-form client_id go to the client ID metadata document resolver.
 */
export function adapterClass(store: OAuthStore, options: AdapterOptions) {
  const { keys } = options;
  return class StoreAdapter {
    constructor(readonly name: string) {}

    /** The record of `id` and the key it was found at (the current key's first), or undefined. */
    private locate(id: string) {
      return readRecord(store, keys, this.name, id);
    }

    /** The payload of a stored record of `id`, its `jti` put back. */
    private payloadOf(stored: Stored, id: string): AdapterPayload {
      return stored.i ? { ...stored.p, jti: id } : stored.p;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const ttl = expiresIn && expiresIn > 0 ? expiresIn : this.name === 'Client' ? options.unusedClientTtlSeconds : options.fallbackTtlSeconds;
      const tier: Tier = BOUNDED_MODELS.has(this.name) || this.name === 'Client' ? 'bounded' : 'kept';
      const key = recordKeys(keys, this.name, id)[0]!;
      const { jti, ...rest } = payload;
      const stored: Stored =
        this.name !== NAMED_BY_ID && jti === id ? { p: rest, e: Date.now() + ttl * 1000, i: 1 } : { p: payload, e: Date.now() + ttl * 1000 };
      await store.set(key, JSON.stringify(stored), ttl, tier);
      if (payload.grantId) await store.addToSet(`grant:${payload.grantId}`, key, ttl);
      if (INDEXED_MODELS.has(this.name)) await store.addToSet(modelIndexKey(this.name as 'Client' | 'Grant'), id, ttl);
      for (const [kind, value] of [
        ['uid', payload.uid],
        ['user-code', payload.userCode],
      ] as const) {
        if (!value) continue;
        const lookup = lookupKeys(keys, kind, this.name, value)[0]!;
        await store.set(lookup.key, wrap(lookup.ids, id, `record-id:${this.name}`), ttl, tier);
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const found = await this.locate(id);
      if (found) {
        const { stored } = found;
        // `e` 0: a record written before every record had a TTL (its key's own expiry still applies).
        if (stored.e && stored.e < Date.now()) return undefined;
        // The marker is written before the record: a request that reads the record in between still sees it consumed.
        if (stored.p.consumed === undefined && (this.name === 'RefreshToken' || this.name === 'AuthorizationCode')) {
          const consumed = await store.get(consumedKey(found.key));
          if (consumed) stored.p.consumed = Number(consumed);
        }
        return this.payloadOf(stored, id);
      }
      if (this.name === 'Client' && options.resolveUrlClient && /^https?:\/\//i.test(id)) return options.resolveUrlClient(id);
      return undefined;
    }

    /** The record a `uid` or `user-code` lookup leads to: the wrapped id it holds, opened, then {@link find}. */
    private async findBy(kind: 'uid' | 'user-code', value: string): Promise<AdapterPayload | undefined> {
      for (const lookup of lookupKeys(keys, kind, this.name, value)) {
        const blob = await store.get(lookup.key);
        const id = blob === undefined ? undefined : unwrap<string>(lookup.ids, blob, `record-id:${this.name}`);
        if (typeof id === 'string') return this.find(id);
      }
      return undefined;
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findBy('uid', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findBy('user-code', userCode);
    }

    /**
     * Marks a code or refresh token consumed, atomically: the first caller claims the marker; a caller
     * that finds it claimed lost a race with another use of the same artifact, which is reuse: the
     * grant's family is revoked and the request refused as oidc-provider refuses a consumed one.
     * The marker is named after the record as found (under the previous key during a rotation), so
     * replicas holding either key race for the same one.
     */
    async consume(id: string): Promise<void> {
      const found = await this.locate(id);
      if (!found) throw new oidcErrors.InvalidGrant('grant request is invalid');
      const { key, stored } = found;
      const remaining = stored.e ? (stored.e - Date.now()) / 1000 : options.fallbackTtlSeconds;
      if (remaining <= 0) throw new oidcErrors.InvalidGrant('grant request is invalid');
      const now = Math.floor(Date.now() / 1000);
      if (!(await store.claim(consumedKey(key), String(now), remaining))) {
        if (stored.p.grantId) await this.revokeByGrantId(stored.p.grantId);
        throw new oidcErrors.InvalidGrant(this.name === 'RefreshToken' ? 'refresh token already used' : 'authorization code already consumed');
      }
      stored.p.consumed = now;
      await store.set(key, JSON.stringify(stored), remaining);
    }

    async destroy(id: string): Promise<void> {
      for (const key of recordKeys(keys, this.name, id)) await store.delete(key);
      if (INDEXED_MODELS.has(this.name)) await store.removeFromSet(modelIndexKey(this.name as 'Client' | 'Grant'), id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.set(revokedGrantKey(grantId), '1', options.markTtlSeconds);
      for (const key of await store.members(`grant:${grantId}`)) await store.delete(key);
      await store.delete(`grant:${grantId}`);
      for (const key of recordKeys(keys, 'Grant', grantId)) await store.delete(key);
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
