import { unwrapCredential, wrap, type OAuthKeys } from './keys.ts';
import type { OAuthStore } from './store.ts';

/** The additional-data label of a grant's wrapped credential (keys.ts `wrap`), bound to its grant id. */
const CREDENTIAL_CONTEXT = 'platform-credential';

/** The store key of a grant's wrapped credential (adapter.ts deletes it with the grant). */
export const grantCredentialKey = (grantId: string) => `grant-credential:${grantId}`;

/** The platform credential a grant was signed in with, as its access tokens carry it: credential headers. */
export interface GrantCredential {
  headers: Record<string, string>;
}

/**
 * Each grant's platform credential (the key and secret entered at sign-in), wrapped (AES-256-GCM, bound
 * to the grant id) under the credential key: kept in the store beside the grant, for as long as it and
 * an access token's life more, and copied into every access token issued from the grant (`cpz_cred`).
 * Its presence is what keeps the grant's access tokens good (sealed-tokens.ts): revoking or losing it
 * ends them.
 */
export function grantCredentials(store: OAuthStore, keys: OAuthKeys) {
  return {
    async save(grantId: string, credential: GrantCredential, ttlSeconds: number): Promise<void> {
      await store.set(grantCredentialKey(grantId), wrap(keys.credential, credential, `${CREDENTIAL_CONTEXT}:${grantId}`), ttlSeconds);
    },
    /** The wrapped form, to seal into an access token; undefined once the grant is revoked or expired. */
    wrapped: (grantId: string): Promise<string | undefined> => store.get(grantCredentialKey(grantId)),
    async load(grantId: string): Promise<GrantCredential | undefined> {
      const blob = await store.get(grantCredentialKey(grantId));
      return blob ? this.open(blob, grantId) : undefined;
    },
    /** Opens a wrapped credential of `grantId` (from the store or a token); undefined when it is not one. */
    open: (blob: string, grantId: string): GrantCredential | undefined => unwrapCredential<GrantCredential>(keys, blob, `${CREDENTIAL_CONTEXT}:${grantId}`),
  };
}

export type GrantCredentials = ReturnType<typeof grantCredentials>;
