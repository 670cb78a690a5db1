/**
 * How long a caller's standing holds (`Standing.validUntil`, gateway/auth/authenticate.ts), which bounds
 * the `ttlMs` of its private tools/list (SEP-2549): the source's answer (the scope entry's expiry), an
 * OAuth token's `exp` when sooner, `Infinity` where nothing at the edge expires it (config API keys,
 * anonymous, no scope source), absent when not known (a failed lookup).
 */
import { describe, expect, it } from 'vitest';
import { ApiKeySource } from '../../gateway/auth/api-keys.ts';
import { apiKeySource, Authenticator, type CredentialSource, type SourceVerdict, type Standing } from '../../gateway/auth/authenticate.ts';
import type { Credential } from '../../gateway/auth/credentials.ts';

const CREDENTIALS = { keyHeader: 'X-Key', secretHeader: 'X-Secret', bearer: true, apiKeys: [] };
const KEY = Buffer.from('server-key-server-key-server-key!');
const ENTRY_ENDS = Date.UTC(2026, 6, 28, 12, 0, 0);
const TOKEN_ENDS = ENTRY_ENDS - 30_000;

/** A scope endpoint stand-in: answers `verdict` for any credential. */
const endpoint = (verdict: SourceVerdict): CredentialSource => ({ name: 'scope_endpoint', resolve: () => verdict });
const configKeys = apiKeySource(new ApiKeySource([{ name: 'ops', key: 'ops-id', secret: 'ops-secret', scopes: ['a'] }], CREDENTIALS, KEY))!;

async function standingOf(
  sources: CredentialSource[],
  headers: Record<string, string>,
  options: { anonymous?: boolean; granted?: Credential['granted'] } = {},
): Promise<Standing> {
  const authenticator = new Authenticator({ credentials: CREDENTIALS, anonymous: options.anonymous ?? false }, KEY, sources);
  const exchange = options.granted
    ? async (credential: Credential) => ({ kind: 'credential' as const, credential: { ...credential, granted: options.granted } })
    : undefined;
  const outcome = await authenticator.authenticate(headers, { exchange });
  if (outcome.kind !== 'authenticated') throw new Error(`not authenticated: ${outcome.kind}`);
  return outcome.standing;
}

const validUntilOf = (standing: Standing) => (standing.kind === 'unverified' ? undefined : standing.validUntil);

describe('Standing.validUntil', () => {
  it("is the scope entry's expiry, and an OAuth token's exp when that comes first", async () => {
    const entry = endpoint({ kind: 'scopes', scopes: ['a'], validUntil: ENTRY_ENDS });
    expect(await standingOf([entry], { 'x-key': 'k', 'x-secret': 's' })).toEqual({ kind: 'scopes', scopes: ['a'], validUntil: ENTRY_ENDS });
    const token = { authorization: 'Bearer opaque' };
    const granted = { scopes: ['a'], replacesLookup: false, expiresAt: TOKEN_ENDS };
    expect(await standingOf([entry], token, { granted })).toEqual({ kind: 'scopes', scopes: ['a'], validUntil: TOKEN_ENDS });
    // A token that outlives the entry: the entry.
    expect(validUntilOf(await standingOf([entry], token, { granted: { ...granted, expiresAt: ENTRY_ENDS + 1 } }))).toBe(ENTRY_ENDS);
  });

  it("is an external identity provider's token's exp (no lookup), and a config key's or an anonymous caller's never ends", async () => {
    const granted = { scopes: ['a'], replacesLookup: true, expiresAt: TOKEN_ENDS };
    expect(await standingOf([configKeys], { authorization: 'Bearer jws' }, { granted })).toEqual({ kind: 'scopes', scopes: ['a'], validUntil: TOKEN_ENDS });
    expect(validUntilOf(await standingOf([configKeys], { 'x-key': 'ops-id', 'x-secret': 'ops-secret' }))).toBe(Infinity);
    expect(await standingOf([configKeys], {}, { anonymous: true })).toEqual({ kind: 'scopes', scopes: [], validUntil: Infinity });
    expect(await standingOf([], { 'x-key': 'k', 'x-secret': 's' })).toEqual({ kind: 'unchecked', validUntil: Infinity });
  });

  it('is not known for an answer that was not kept, nor for a failed lookup', async () => {
    expect(await standingOf([endpoint({ kind: 'scopes', scopes: ['a'] })], { 'x-key': 'k', 'x-secret': 's' })).toEqual({ kind: 'scopes', scopes: ['a'] });
    expect(await standingOf([endpoint({ kind: 'unknown', reason: 'timeout', validUntil: ENTRY_ENDS })], { 'x-key': 'k', 'x-secret': 's' })).toEqual({
      kind: 'unverified',
      reason: 'timeout',
    });
    // A failed lookup for a token is as unverified as for its key (its grant alone is no answer: scope-cache.ts narrowToGrant).
    const granted = { scopes: ['a'], replacesLookup: false, expiresAt: TOKEN_ENDS };
    expect(await standingOf([endpoint({ kind: 'unknown', reason: 'error' })], { authorization: 'Bearer opaque' }, { granted })).toEqual({
      kind: 'unverified',
      reason: 'error',
    });
  });
});
