/**
 * The config's credential source (gateway/auth/api-keys.ts): keys resolve by the keyed digest of the
 * normalised credential, in either form; a wrong secret, an unknown token or two keys at once resolve
 * to nothing; the table holds digests only.
 */
import { describe, expect, it } from 'vitest';
import { ApiKeySource } from '../../gateway/auth/api-keys.ts';
import { extractCredential } from '../../gateway/auth/credentials.ts';

const CREDENTIALS = { keyHeader: 'X-Key', secretHeader: 'X-Secret', bearer: true, apiKeys: [] };
const KEY = Buffer.from('server-key-server-key-server-key!');
const source = new ApiKeySource(
  [
    { name: 'ops', key: 'ops-id', secret: 'ops-secret', scopes: ['b', 'a', 'a'] },
    { name: 'ci', token: 'ci-token', scopes: ['c'] },
  ],
  CREDENTIALS,
  KEY,
);
const resolve = (headers: Record<string, string>) => {
  const credential = extractCredential(headers, CREDENTIALS, KEY);
  return credential && source.resolve(credential);
};

describe('ApiKeySource', () => {
  it("resolves a key pair and a bearer token (any scheme case) to the key's name and sorted scopes", () => {
    expect(resolve({ 'x-key': 'ops-id', 'x-secret': 'ops-secret' })).toEqual({ name: 'ops', scopes: ['a', 'b'] });
    expect(resolve({ authorization: 'bearer   ci-token' })).toEqual({ name: 'ci', scopes: ['c'] });
  });

  it('resolves nothing for a wrong secret, an unknown token, a key id sent as a token, or two keys at once', () => {
    expect(resolve({ 'x-key': 'ops-id', 'x-secret': 'wrong' })).toBeUndefined();
    expect(resolve({ authorization: 'Bearer ops-secret' })).toBeUndefined();
    expect(resolve({ authorization: 'Bearer unknown' })).toBeUndefined();
    expect(resolve({ 'x-key': 'ops-id', 'x-secret': 'ops-secret', authorization: 'Bearer ci-token' })).toBeUndefined();
  });

  it('keeps no secret in its table', () => {
    const table = JSON.stringify([...(source as unknown as { byDigest: Map<string, unknown> }).byDigest]);
    expect(table).not.toMatch(/ops-secret|ci-token|ops-id/);
    expect(source.size).toBe(2);
  });
});
