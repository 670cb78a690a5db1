import type { Middleware } from 'koa';
import type { OAuthAdmin } from './admin.ts';

/**
 * What a bearer token resolves to: the credential headers to use upstream and for scope lookups
 * (never the token itself: MCP 2026-07-28 authorization, "Token Passthrough"), and the token's
 * effective scopes; or why it is refused, as an RFC 6750 §3.1 error code and a description that
 * is safe to send (it names no token, key or secret).
 */
export type BearerResolution =
  | {
      kind: 'ok';
      credentialHeaders: Record<string, string>;
      scopes: string[];
      subject: string;
      clientId: string;
      /**
       * The account the token's calls count against (rate budgets, listen streams, run_code runs), as an
       * id the edge digests (never stored raw): external, the token's issuer and `sub` (the person, whatever
       * service credential goes upstream); absent (builtin): the account of the key behind the grant.
       */
      account?: string;
      /** The token's `exp` (RFC 7519 §4.1.4) in epoch ms, when it has one. */
      expiresAt?: number;
    }
  | { kind: 'invalid'; error: 'invalid_token'; description: string }
  /**
   * The token could not be checked (its store is unreachable, the identity provider's keys cannot be
   * read): a 503 with Retry-After (`retryAfterSeconds`, else the store's operation timeout), so the client keeps its token.
   */
  | { kind: 'unavailable'; description: string; retryAfterSeconds?: number };

/** A JWT's `exp` (NumericDate, RFC 7519 §2: seconds) as `expiresAt` in epoch ms; nothing when absent. */
export function expiryOf(exp: unknown): { expiresAt?: number } {
  return typeof exp === 'number' && Number.isFinite(exp) ? { expiresAt: exp * 1000 } : {};
}

/** The one interface the gateway's edge uses (gateway/auth/oauth/index.ts builds it from `oauth:`). */
export interface OAuth {
  mode: 'builtin' | 'external';
  /** Authorization server endpoints and pages (builtin); a pass-through in external mode. */
  routes: Middleware;
  /**
   * Validates `token` for the protected resource `resourceUrl` (the endpoint's canonical URL,
   * e.g. `https://gw.example/mcp`). Never rejects.
   */
  resolveBearer(token: string, resourceUrl: string): Promise<BearerResolution>;
  /** The fields this mode adds to the RFC 9728 documents. */
  metadata: { authorization_servers: string[]; scopes_supported: string[] };
  /** builtin: the console's view of clients and grants, with revocation (admin.ts). */
  admin?: OAuthAdmin;
  /** external: answer a call the token's scopes do not reach with 403 `insufficient_scope`. */
  insufficientScope: boolean;
  /**
   * The scopes a client asks the authorization server for so that its token carries these gateway
   * scopes, in the authorization server's terms (the `scope` of a step-up challenge, RFC 6750 §3; MCP
   * authorization §Step-Up Authorization): external with a `scopeMap`, the provider's scopes mapping to
   * each, else the scope itself. Absent: the gateway's scope names are the authorization server's.
   */
  scopesToRequest?(scopes: readonly string[]): string[];
  /** builtin without `oauth.tokenSecret`: an id of the root key it generated (kept in Redis, or this process's), for the shared-key check. */
  generatedKeyId?: string;
  /** Why this mode cannot serve now (builtin: its Redis store is not connected), for `/readyz`; undefined while it can. */
  unready?(): string | undefined;
  close(): Promise<void>;
}
