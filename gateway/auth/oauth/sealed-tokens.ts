import { jwtDecrypt, errors as joseErrors, type JWTPayload } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { loggableUrl, type Logger } from '../../obs/log.ts';
import { revokedGrantKey, revokedTokenKey } from './adapter.ts';
import { grantCredentialKey, type GrantCredentials } from './grant-credential.ts';
import type { OAuthKeys } from './keys.ts';
import type { ResourceSet } from './resource-url.ts';
import { noteRevocation } from './revocation.ts';
import type { OAuthStore } from './store.ts';
import { expiryOf, type BearerResolution } from './types.ts';

export interface SealedTokenDeps {
  issuer: string;
  keys: OAuthKeys;
  store: OAuthStore;
  credentials: GrantCredentials;
  resources: ResourceSet;
  supported: readonly string[];
  log: Logger;
}

/**
 * The built-in server's access tokens as the gateway reads them: JWEs (`dir`/`A256GCM`, RFC 7516) that
 * no store holds, opened with the sealing key (or the previous root key's, during a rotation) by any
 * replica holding the root key. A token is good at one of the MCP endpoints it was issued for (RFC 8707
 * audience, loopback spellings alike), while neither it (`jti`) nor its grant (`gid`) carries a
 * revocation mark, while the store still holds its grant's credential (grant-credential.ts: kept as long
 * as the grant, plus an access token's life), and it carries the platform credential wrapped for its grant.
 */
export function sealedTokens(deps: SealedTokenDeps) {
  const { issuer, keys, store, credentials, resources, supported, log } = deps;
  let lastUnheldLogged = 0;
  const options = { issuer, clockTolerance: 5, contentEncryptionAlgorithms: ['A256GCM'], keyManagementAlgorithms: ['dir'] };

  async function open(token: string): Promise<JWTPayload> {
    try {
      return (await jwtDecrypt(token, keys.accessToken, options)).payload;
    } catch (error) {
      // Sealed before the secret was rotated: the previous key opens it until it expires.
      if (!keys.previous || !(error instanceof joseErrors.JWEDecryptionFailed)) throw error;
      return (await jwtDecrypt(token, keys.previous.accessToken, options)).payload;
    }
  }

  return {
    /** Validates `token` for the endpoint `resourceUrl`: the credential behind it and its scopes, or why not. Never rejects. */
    async resolve(token: string, resourceUrl: string): Promise<BearerResolution> {
      let payload: JWTPayload;
      try {
        payload = await open(token);
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) return invalid('The access token expired');
        return invalid('The access token is not valid here');
      }
      const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
      if (!resources.accepts(audiences, resourceUrl)) return invalid('The access token was issued for another resource');
      const jti = String(payload.jti ?? '');
      const grantId = String(payload.gid ?? '');
      if (!jti || !grantId) return invalid('The access token is not valid here');
      let held: string | undefined;
      try {
        const [tokenMark, grantMark, grantCredential] = await Promise.all([
          store.get(revokedTokenKey(jti)),
          store.get(revokedGrantKey(grantId)),
          store.get(grantCredentialKey(grantId)),
        ]);
        if (tokenMark || grantMark) return invalid('The access token was revoked');
        held = grantCredential;
      } catch {
        return { kind: 'unavailable', description: 'the access token cannot be checked right now (its store is unreachable)' };
      }
      // An allow-list, not only a deny-list: a store that lost its data (flushed, evicted, replaced) lost the
      // revocation marks too, so a token is honoured only while its grant is held. Losing the store signs
      // users out (their refresh fails too), never un-revokes a token.
      if (!held) {
        // Once a second at most: a client replaying a dead token must not flood the log.
        if (Date.now() - lastUnheldLogged > 1000) {
          lastUnheldLogged = Date.now();
          log.warn({ grant: grantId.slice(0, 8) }, 'access token refused: its grant is not in the store (ended, or the store lost its data)');
        }
        return invalid('The access token is no longer valid: its sign-in ended; sign in again');
      }
      const credential = typeof payload.cpz_cred === 'string' ? credentials.open(payload.cpz_cred, grantId) : undefined;
      if (!credential) return invalid('The access token is not valid here');
      const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => supported.includes(s)) : [];
      return {
        kind: 'ok',
        credentialHeaders: credential.headers,
        scopes,
        subject: String(payload.sub ?? ''),
        clientId: String(payload.client_id ?? ''),
        ...expiryOf(payload.exp),
      };
    },

    /**
     * oidc-provider middleware, RFC 7009 for our sealed access tokens: oidc-provider refuses to revoke
     * structured tokens (`unsupported_token_type`); for one we sealed and the requesting client owns, we
     * record its `jti` as revoked (until it would expire) and answer 200 as RFC 7009 §2.2 asks.
     */
    async revocation(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
      await next();
      if (ctx.oidc?.route !== 'revocation' || ctx.status !== 400 || (ctx.body as { error?: string })?.error !== 'unsupported_token_type') return;
      const token = ctx.oidc.params?.token;
      const client = ctx.oidc.client;
      if (typeof token !== 'string' || !client) return;
      const payload = await open(token).catch(() => undefined);
      if (payload && payload.client_id === client.clientId && typeof payload.jti === 'string') {
        await store.set(revokedTokenKey(payload.jti), '1', Math.max(1, Number(payload.exp) - Math.floor(Date.now() / 1000)));
        log.info({ client: loggableUrl(client.clientId) }, 'access token revoked');
        noteRevocation(ctx, 'revoked');
      } else noteRevocation(ctx, payload && payload.client_id !== client.clientId ? 'token_of_another_client' : 'unknown_token');
      ctx.status = 200;
      ctx.body = '';
    },
  };
}

function invalid(description: string): BearerResolution {
  return { kind: 'invalid', error: 'invalid_token', description };
}
