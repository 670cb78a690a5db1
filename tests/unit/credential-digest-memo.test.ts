/**
 * The credential digest's memo (auth/credentials.ts): remembering digests changes no digest. Each is
 * still the HMAC-SHA-256 under its own server key over the sorted pairs as JSON (the form stored digests
 * were made in), a credential past the memo's bound is computed again, never answered with another's.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DIGEST_MEMO_SIZE, credentialDigest } from '../../gateway/auth/credentials.ts';

const KEY = Buffer.from('a-server-key-of-at-least-thirty-two-bytes');
const OTHER_KEY = Buffer.from('another-server-key-of-thirty-two-bytes!!');

/** The digest as it was defined before the memo: HMAC over JSON.stringify of the entries sorted by name. */
function reference(headers: Record<string, string>, key: Buffer): string {
  const canonical = JSON.stringify(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return createHmac('sha256', key).update(canonical).digest('hex');
}

describe('credentialDigest memo', () => {
  it('gives the digest of the unmemoised definition, first and when remembered, for any header names and values', () => {
    const cases: Record<string, string>[] = [
      { authorization: 'Bearer tok-1' },
      { 'x-cpz-secret': 's', 'x-cpz-key': 'k' },
      { 'x-cpz-key': 'k', authorization: 'Bearer t', 'x-cpz-secret': 's' },
      { 'x-cpz-key': 'quote " and \\ backslash', 'x-cpz-secret': 'ünïcödé \u2028 \u0001' },
      { 'x-cpz-key': '', 'x-cpz-secret': ']]["' },
    ];
    for (const headers of cases)
      for (let round = 0; round < 2; round++) expect(credentialDigest(headers, KEY), JSON.stringify(headers)).toBe(reference(headers, KEY));
  });

  it('keeps the server keys apart: the same credential has a digest under each key', () => {
    const headers = { authorization: 'Bearer shared' };
    expect(credentialDigest(headers, KEY)).toBe(reference(headers, KEY));
    expect(credentialDigest(headers, OTHER_KEY)).toBe(reference(headers, OTHER_KEY));
    expect(credentialDigest(headers, KEY)).not.toBe(credentialDigest(headers, OTHER_KEY));
  });

  it('does not confuse pairs that concatenate alike', () => {
    const a = { 'x-cpz-key': 'ab', 'x-cpz-secret': 'c' };
    const b = { 'x-cpz-key': 'a', 'x-cpz-secret': 'bc' };
    expect(credentialDigest(a, KEY)).not.toBe(credentialDigest(b, KEY));
    expect(credentialDigest(b, KEY)).toBe(reference(b, KEY));
  });

  it('stays correct past its bound: the evicted credentials are computed again', () => {
    const key = Buffer.from('a-third-key-for-the-bound-of-the-memo!!!');
    const count = DIGEST_MEMO_SIZE + 10;
    const credential = (i: number) => ({ authorization: `Bearer token-${i}` });
    for (let i = 0; i < count; i++) credentialDigest(credential(i), key);
    for (const i of [0, 1, 9, 10, count - 1]) expect(credentialDigest(credential(i), key)).toBe(reference(credential(i), key));
  });
});
