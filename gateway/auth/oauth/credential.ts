import type { Credential } from '../credentials.ts';
import { credentialDigest } from '../credentials.ts';
import type { OAuth } from './types.ts';

/** What the edge does with an `Authorization: Bearer` credential when OAuth is on. */
export type BearerOutcome =
  | { kind: 'credential'; credential: Credential }
  | { kind: 'invalid'; description: string }
  | { kind: 'unavailable'; description: string; retryAfterSeconds?: number }
  /** The request names a URL the gateway cannot tell is its own (http/protected-resource.ts `tokenAudience`): no token is checked for it. */
  | { kind: 'misdirected'; description: string }
  /** Not a token of this OAuth mode: a platform API token when `credentials.bearer` allows those. */
  | { kind: 'not_oauth' };

/**
 * Turns a bearer credential into the credential the gateway works with: the token resolved by
 * {@link OAuth.resolveBearer} for `resourceUrl` (or `misdirected` with its `refused` description, when the request
 * names no URL a token may be checked for: http/protected-resource.ts `tokenAudience`) becomes the wrapped platform credential (builtin) or
 * the static service credential (external), carrying the token's scopes, and the token itself is
 * dropped (MCP 2026-07-28 authorization: no token passthrough). Which tokens are OAuth tokens is told by
 * their form: a JWE (five parts) is the built-in server's, a JWS (three parts) an external IdP's;
 * anything else is a platform API token, forwarded as before when `platformBearer` is on, refused otherwise.
 * The digest (HMAC under `digestKey`, credentials.ts; and under `previousDigestKey` during a rotation)
 * covers the granted scopes, so two tokens of one key with different grants share no cache entry, and
 * the token's account when it names one (external: issuer + `sub`), so two people sharing one service
 * credential share none either.
 */
export async function bearerCredential(
  oauth: OAuth,
  credential: Credential,
  resourceUrl: string | { refused: string },
  platformBearer: boolean,
  digestKey: Buffer,
  previousDigestKey?: Buffer,
): Promise<BearerOutcome> {
  const token = /^Bearer\s+(\S+)$/i.exec(credential.headers.authorization ?? '')?.[1];
  if (!token) return { kind: 'not_oauth' };
  const parts = token.split('.').length;
  const ours = oauth.mode === 'builtin' ? parts === 5 : parts === 3;
  if (!ours) return platformBearer ? { kind: 'not_oauth' } : { kind: 'invalid', description: 'The access token is not valid here' };
  if (typeof resourceUrl !== 'string') return { kind: 'misdirected', description: resourceUrl.refused };
  const resolved = await oauth.resolveBearer(token, resourceUrl);
  if (resolved.kind !== 'ok') return resolved.kind === 'invalid' ? { kind: 'invalid', description: resolved.description } : resolved;
  const headers = { ...resolved.credentialHeaders };
  const granted = {
    scopes: [...resolved.scopes].sort(),
    replacesLookup: oauth.mode === 'external',
    ...(resolved.account !== undefined ? { account: resolved.account } : {}),
    ...(resolved.expiresAt !== undefined ? { expiresAt: resolved.expiresAt } : {}),
  };
  // One service credential may stand for every person of an identity provider: the digest (what in-flight
  // calls, input requests and private lists are owned by) names the person too, so two people never share one.
  const digested = {
    ...headers,
    'x-gateway-oauth-scopes': granted.scopes.join(' '),
    'x-gateway-oauth-mode': oauth.mode,
    ...(resolved.account !== undefined ? { 'x-gateway-oauth-account': resolved.account } : {}),
  };
  const digest = credentialDigest(digested, digestKey);
  // During a cache.key rotation (`previousDigestKey`), what was keyed under the old key is still found.
  const previous = previousDigestKey ? { previousDigest: credentialDigest(digested, previousDigestKey) } : {};
  // The audit ties the token's calls to its sign-in (subject), its client and, for our own tokens, the key's own calls.
  const oauthHolder = {
    subject: resolved.subject,
    clientId: resolved.clientId,
    ...(oauth.mode === 'builtin' ? { keyDigest: credentialDigest(headers, digestKey) } : {}),
  };
  return { kind: 'credential', credential: { kind: 'key', headers, digest, granted, ...previous, oauth: oauthHolder } };
}
