/**
 * The built-in authorization server's store adapter (gateway/auth/oauth/adapter.ts) over the in-process
 * store: oidc-provider's id of a code, refresh token or session is the secret itself, so nothing the
 * adapter writes (key names, set members, values) holds one, while find, findByUid, consume and
 * revokeByGrantId work from the id alone; records written under a previous root key are found during
 * a rotation. The Redis store is checked end to end in tests/e2e/oauth/redis-replicas.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { adapterClass, type RecordKeys } from '../../gateway/auth/oauth/adapter.ts';
import { deriveKeys } from '../../gateway/auth/oauth/keys.ts';
import { createMemoryStore, type OAuthStore } from '../../gateway/auth/oauth/store.ts';

const LIFETIMES = { markTtlSeconds: 60, unusedClientTtlSeconds: 60, fallbackTtlSeconds: 60 };
const token = () => randomBytes(32).toString('base64url');

/** The in-process store, with every key, set member and value written to it kept in `written`. */
function recordingStore(): OAuthStore & { written: string[] } {
  const store = createMemoryStore(1 << 20);
  const written: string[] = [];
  return {
    ...store,
    written,
    set: (key, value, ttl, tier) => (written.push(key, value), store.set(key, value, ttl, tier)),
    claim: (key, value, ttl) => (written.push(key, value), store.claim(key, value, ttl)),
    setIfAbsent: (key, value, ttl) => (written.push(key, value), store.setIfAbsent(key, value, ttl)),
    addToSet: (key, member, ttl) => (written.push(key, member), store.addToSet(key, member, ttl)),
  };
}

describe('OAuth store adapter', () => {
  const stores: OAuthStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const adapters = (store: OAuthStore, keys: RecordKeys) => {
    const Adapter = adapterClass(store, { ...LIFETIMES, keys });
    return { refresh: new Adapter('RefreshToken'), code: new Adapter('AuthorizationCode'), session: new Adapter('Session'), grant: new Adapter('Grant') };
  };

  it('writes no code, refresh token or session id, and finds, consumes and revokes by them', async () => {
    const store = recordingStore();
    stores.push(store);
    const { refresh, code, session, grant } = adapters(store, deriveKeys('root-key-one-0123456789abcdef', 'secret'));
    const [grantId, refreshId, codeId, sessionId, sessionUid] = [token(), token(), token(), token(), token()];
    const exp = Math.floor(Date.now() / 1000) + 60;
    await grant.upsert(grantId, { jti: grantId, kind: 'Grant', exp }, 60);
    await code.upsert(codeId, { jti: codeId, kind: 'AuthorizationCode', grantId, exp }, 60);
    await refresh.upsert(refreshId, { jti: refreshId, kind: 'RefreshToken', grantId, exp }, 60);
    await session.upsert(sessionId, { jti: sessionId, kind: 'Session', uid: sessionUid, exp }, 60);

    expect(await refresh.find(refreshId)).toMatchObject({ jti: refreshId, grantId });
    expect(await session.findByUid(sessionUid)).toMatchObject({ jti: sessionId, uid: sessionUid });
    await code.consume(codeId);
    expect((await code.find(codeId))?.consumed).toBeTypeOf('number');
    await refresh.consume(refreshId);
    for (const secret of [refreshId, codeId, sessionId]) expect(store.written.filter((text) => text.includes(secret))).toEqual([]);

    // The refresh token presented again: reuse, the family (code, refresh token, grant) destroyed.
    await expect(refresh.consume(refreshId)).rejects.toMatchObject({ error: 'invalid_grant', error_detail: 'refresh token already used' });
    expect(await refresh.find(refreshId)).toBeUndefined();
    expect(await code.find(codeId)).toBeUndefined();
    expect(await grant.find(grantId)).toBeUndefined();
    expect(await refresh.find(token())).toBeUndefined();
  });

  it('finds records written under the previous root key during a rotation, and consumes them once', async () => {
    const store = recordingStore();
    stores.push(store);
    const before = adapters(store, deriveKeys('root-key-one-0123456789abcdef', 'secret'));
    const during = adapters(store, deriveKeys('root-key-two-0123456789abcdef', 'secret', 'root-key-one-0123456789abcdef'));
    const after = adapters(store, deriveKeys('root-key-two-0123456789abcdef', 'secret'));
    const [refreshId, sessionId, sessionUid] = [token(), token(), token()];
    const exp = Math.floor(Date.now() / 1000) + 60;
    await before.refresh.upsert(refreshId, { jti: refreshId, kind: 'RefreshToken', grantId: 'g', exp }, 60);
    await before.session.upsert(sessionId, { jti: sessionId, kind: 'Session', uid: sessionUid, exp }, 60);

    expect(await during.refresh.find(refreshId)).toMatchObject({ jti: refreshId });
    expect(await during.session.findByUid(sessionUid)).toMatchObject({ jti: sessionId });
    expect(await after.refresh.find(refreshId)).toBeUndefined();
    // One marker for the record, whichever key the replica consuming it holds.
    await during.refresh.consume(refreshId);
    await expect(before.refresh.consume(refreshId)).rejects.toMatchObject({ error_detail: 'refresh token already used' });
  });
});
