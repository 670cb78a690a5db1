import type { OAuthConfig } from '../../../config/types.ts';
import { shownName } from '../../checks/invisible-text.ts';
import type { AuthDecisions } from '../decisions.ts';
import { adapterClass, adapterLifetimes, modelIndexKey, readRecord, type RecordKeys } from './adapter.ts';
import type { OAuthStore } from './store.ts';

/** A client registered with the built-in authorization server (RFC 7591), as the console lists it. */
export interface ClientSummary {
  clientId: string;
  name?: string;
  redirectUris: string[];
  /** RFC 7591 §3.2.1 `client_id_issued_at`, epoch ms. */
  registeredAt?: number;
  /** When the registration is forgotten unless used again, epoch ms. */
  expiresAt?: number;
}

/** A live grant: what one account consented to for one client, per MCP endpoint (RFC 8707 resource). */
export interface GrantSummary {
  grantId: string;
  clientId: string;
  /** The account's id as the authorization server keys it (a keyed digest of the platform key id, never the key). */
  account: string;
  /** Resource URL -> the scopes granted for it. */
  resources: Record<string, string[]>;
  issuedAt?: number;
  expiresAt?: number;
}

/** What the console does with the built-in authorization server's records. */
export interface OAuthAdmin {
  clients(): Promise<ClientSummary[]>;
  grants(): Promise<GrantSummary[]>;
  /**
   * Revokes a grant and everything issued from it, as a refresh-token reuse or an RFC 7009 revocation
   * does (adapter.ts `revokeByGrantId`: its codes and refresh tokens deleted, a revocation mark that
   * refuses its sealed access tokens), and writes one `auth_decision` line (`endpoint: console_revoke`).
   * @returns false when no such grant is live (nothing written).
   */
  revokeGrant(grantId: string, requestId?: string): Promise<boolean>;
}

/** Longest list the console reads of either kind: the index is bounded by the registration budgets, the page is not. */
const MAX_LISTED = 500;

/**
 * The console's view of the built-in authorization server's store (store.ts): clients and grants read
 * through the indexes the adapter keeps (adapter.ts `modelIndexKey`), each record found where the adapter
 * names it (adapter.ts `recordKeys`, under `keys`); an index member whose record is gone (expired,
 * evicted, revoked) is dropped as it is read.
 */
export function oauthAdmin(store: OAuthStore, config: OAuthConfig, keys: RecordKeys, decide: AuthDecisions): OAuthAdmin {
  const Grants = new (adapterClass(store, { ...adapterLifetimes(config), keys }))('Grant');
  const records = async (model: 'Client' | 'Grant') => {
    const ids = (await store.members(modelIndexKey(model))).sort().slice(0, MAX_LISTED);
    const found: [string, Record<string, unknown>][] = [];
    for (const id of ids) {
      const stored = (await readRecord(store, keys, model, id))?.stored;
      if (!stored || (stored.e && stored.e < Date.now())) await store.removeFromSet(modelIndexKey(model), id);
      else found.push([id, { ...stored.p, _expires: stored.e || undefined }]);
    }
    return found;
  };
  const seconds = (value: unknown) => (typeof value === 'number' ? value * 1000 : undefined);
  return {
    async clients() {
      return (await records('Client')).map(([id, p]) => {
        // Shown on the console: a self-declared name without its invisible characters (interaction.ts clientView).
        const name = typeof p.client_name === 'string' ? shownName(p.client_name) : '';
        return {
          clientId: id,
          ...(name ? { name } : {}),
          redirectUris: Array.isArray(p.redirect_uris) ? p.redirect_uris.filter((u): u is string => typeof u === 'string') : [],
          ...(seconds(p.client_id_issued_at) ? { registeredAt: seconds(p.client_id_issued_at) } : {}),
          ...(typeof p._expires === 'number' ? { expiresAt: p._expires } : {}),
        };
      });
    },
    async grants() {
      return (await records('Grant')).map(([id, p]) => ({
        grantId: id,
        clientId: String(p.clientId ?? ''),
        account: String(p.accountId ?? ''),
        resources: Object.fromEntries(
          Object.entries((p.resources ?? {}) as Record<string, unknown>).map(([url, scope]) => [
            url,
            typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [],
          ]),
        ),
        ...(seconds(p.iat) ? { issuedAt: seconds(p.iat) } : {}),
        ...(seconds(p.exp) ? { expiresAt: seconds(p.exp) } : {}),
      }));
    },
    async revokeGrant(grantId, requestId) {
      const grant = await Grants.find(grantId);
      if (!grant) return false;
      await Grants.revokeByGrantId(grantId);
      decide({
        ...(requestId ? { requestId } : {}),
        endpoint: 'console_revoke',
        outcome: 'ok',
        ...(typeof grant.clientId === 'string' ? { client: grant.clientId } : {}),
        ...(typeof grant.accountId === 'string' ? { account: grant.accountId } : {}),
      });
      return true;
    },
  };
}
