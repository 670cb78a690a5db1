/**
 * Where the built-in authorization server keeps its state, and who can resolve a token: with Redis
 * (no secret) every instance shares clients, grants, refresh tokens and the sealing key, across
 * restarts; with neither Redis nor GATEWAY_TOKEN_SECRET, tokens belong to one process (and it says so).
 * Needs `redis-server` on PATH (installed by .ci/run).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { registerClient, redeemCode, signInFlow, startOAuthHarness, tokenRequest, type OAuthHarness } from '../../helpers/oauth-harness.ts';

const SCOPES = ['accounts:read', 'positions:read', 'orders:read'];

/** Signs in through `base`'s pages and redeems the code at `tokenBase` (another instance, or the same): the token response. */
async function signIn(base: string, clientId: string, tokenBase = base) {
  return redeemCode(tokenBase, await signInFlow(base, { clientId }), clientId, { resource: `${base}/mcp` });
}

describe.skipIf(!hasRedis)('with Redis: every instance resolves every token', () => {
  let redis: RedisServer;
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let a: OAuthHarness;
  let b: OAuthHarness;
  let redisUrl: string;

  beforeAll(async () => {
    redis = await startRedis();
    redisUrl = redis.url;
    platform = await startPlatform({ port: 0 });
  });
  // Two instances of each test's own: one test restarts both (on other ports).
  beforeEach(async () => {
    a = await startOAuthHarness({ cache: { redisUrl }, oauth: { scopes: SCOPES } }, platform);
    b = await startOAuthHarness({ cache: { redisUrl }, oauth: { scopes: SCOPES, issuer: a.url } }, platform);
  });
  afterEach(async () => {
    await b?.close();
    await a?.close();
  });
  afterAll(async () => {
    await platform?.close();
    await redis?.kill();
  });

  it('a client registered on one instance signs in there; the token and refresh token work on the other; reuse on one revokes on both', async () => {
    expect(a.logs.text).toContain('kept in Redis');
    const { client_id } = await registerClient(a.url);
    const issued = await signIn(a.url, client_id, b.url);
    expect(issued.status).toBe(200);
    const access = String(issued.body.access_token);
    expect(await a.oauth.resolveBearer(access, `${a.url}/mcp`)).toMatchObject({ kind: 'ok', scopes: SCOPES });
    expect(await b.oauth.resolveBearer(access, `${a.url}/mcp`)).toMatchObject({ kind: 'ok', credentialHeaders: { 'x-cpz-key': 'cpz_demo_data' } });
    const rotated = await tokenRequest(a.url, { grant_type: 'refresh_token', refresh_token: String(issued.body.refresh_token), client_id });
    expect(rotated.status).toBe(200);
    const reused = await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: String(issued.body.refresh_token), client_id });
    expect(reused.body.error).toBe('invalid_grant');
    for (const instance of [a, b])
      expect(await instance.oauth.resolveBearer(String(rotated.body.access_token), `${a.url}/mcp`)).toMatchObject({
        kind: 'invalid',
        description: 'The access token was revoked',
      });
  });

  it('a Redis that loses its data signs users out: a revoked token stays refused, a live one is refused too, its refresh fails', async () => {
    const { client_id } = await registerClient(a.url);
    const revoked = (await signIn(a.url, client_id)).body;
    const rotated = await tokenRequest(a.url, { grant_type: 'refresh_token', refresh_token: String(revoked.refresh_token), client_id });
    expect((await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: String(revoked.refresh_token), client_id })).body.error).toBe(
      'invalid_grant',
    );
    const live = (await signIn(a.url, client_id)).body;
    expect(await b.oauth.resolveBearer(String(live.access_token), `${a.url}/mcp`)).toMatchObject({ kind: 'ok' });
    // Revocation marks, grants and credentials all gone at once (FLUSHALL, an eviction, a Redis replaced without persistence).
    expect(redis.cli('FLUSHALL').trim()).toBe('OK');
    for (const instance of [a, b])
      for (const token of [String(rotated.body.access_token), String(revoked.access_token), String(live.access_token)])
        expect(await instance.oauth.resolveBearer(token, `${a.url}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    expect(a.logs.text).toContain('its grant is not in the store');
    // The client's registration went too: invalid_client (else invalid_grant); the user signs in again either way.
    const refreshed = await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: String(live.refresh_token), client_id });
    expect(['invalid_client', 'invalid_grant']).toContain(refreshed.body.error);
  });

  it('tokens survive a restart of both instances', async () => {
    const { client_id } = await registerClient(a.url);
    const issued = await signIn(a.url, client_id);
    const issuer = a.url;
    await a.close();
    await b.close();
    a = await startOAuthHarness({ cache: { redisUrl }, oauth: { scopes: SCOPES, issuer } }, platform);
    b = await startOAuthHarness({ cache: { redisUrl }, oauth: { scopes: SCOPES, issuer } }, platform);
    expect(await b.oauth.resolveBearer(String(issued.body.access_token), `${issuer}/mcp`)).toMatchObject({ kind: 'ok' });
    const refreshed = await tokenRequest(a.url, { grant_type: 'refresh_token', refresh_token: String(issued.body.refresh_token), client_id });
    expect(refreshed.status).toBe(200);
  });
});

describe('without Redis or GATEWAY_TOKEN_SECRET', () => {
  it('warns loudly at start, and another instance cannot resolve its tokens', async () => {
    const platform = await startPlatform({ port: 0 });
    const a = await startOAuthHarness({ oauth: { scopes: SCOPES } }, platform);
    const b = await startOAuthHarness({ oauth: { scopes: SCOPES, issuer: a.url } }, platform);
    try {
      const warning = a.logs.records('WARNING');
      expect(warning).toHaveLength(1);
      expect(warning[0]!.level).toBe(40);
      expect(String(warning[0]!.msg)).toMatch(/GATEWAY_TOKEN_SECRET/);
      const { client_id } = await registerClient(a.url);
      const issued = await signIn(a.url, client_id);
      expect(await a.oauth.resolveBearer(String(issued.body.access_token), `${a.url}/mcp`)).toMatchObject({ kind: 'ok' });
      expect(await b.oauth.resolveBearer(String(issued.body.access_token), `${a.url}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    } finally {
      await b.close();
      await a.close();
      await platform.close();
    }
  });
});
