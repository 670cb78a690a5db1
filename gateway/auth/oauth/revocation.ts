/**
 * What one RFC 7009 revocation did, for its audit line: RFC 7009 §2.2 answers 200 whether or not a
 * token was revoked (a token of another client, or one the server does not know, is no error, so a
 * client cannot probe tokens), so the answer alone cannot tell the audit what happened. The sites that
 * decide note it here on the request's context (the provider's revocation policy, sealed-tokens.ts).
 */
export type RevocationResult = 'revoked' | 'token_of_another_client' | 'unknown_token';

const results = new WeakMap<object, RevocationResult>();

/** Notes what the revocation request `ctx` did (the last note wins). */
export function noteRevocation(ctx: object, result: RevocationResult): void {
  results.set(ctx, result);
}

/** What the revocation request `ctx` was noted to have done, if a site noted it. */
export function revocationResult(ctx: object): RevocationResult | undefined {
  return results.get(ctx);
}
