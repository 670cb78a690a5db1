/**
 * The built-in authorization server while its Redis is unreachable (the link cut, Redis and its data
 * intact), through the real handler in process: registration and a refresh answer 503 with Retry-After
 * and the RFC 6749 code `temporarily_unavailable` (never 500 server_error), each with an
 * `auth_decision` audit line; a sign-in form posted meanwhile gets a 503 page saying to try again (not
 * "expired"), and the same form works once Redis is back. A Redis that lost its data signs users out:
 * no token, revoked or live, is honoured at /mcp. Needs `redis-server` (skipped only outside CI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessOAuthLedger, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, authorizeUrl, oauthClient, openSignInPage, REDIRECT_URI, step, type OAuthClient } from '../helpers/oauth-harness.ts';
import { hasRedis, redisLink, startRedis, type RedisLink, type RedisServer } from '../helpers/redis.ts';
import { waitFor } from '../helpers/wait.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const SCOPES = ['ledger:read'];
const audit = new LogCapture();
let redis: RedisServer;
let link: RedisLink;
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;

describe.skipIf(!hasRedis)('the authorization server while Redis is unreachable', () => {
  beforeAll(async () => {
    redis = await startRedis();
    link = await redisLink(redis.port);
    endpoint = await startScopeEndpoint({ alice: SCOPES });
    gateway = await inProcessOAuthLedger(
      endpoint.url,
      {
        cache: { store: 'redis', redisUrl: link.url, operationTimeoutMs: 2000 },
        oauth: { tokenSecret: 'test-secret-0123456789abcdef-outage' },
      },
      audit,
    );
    oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
  });
  afterAll(async () => {
    link?.restore();
    await gateway?.close();
    await link?.close();
    await endpoint?.close();
    await redis?.kill();
  });

  it('answers 503 temporarily_unavailable with Retry-After, audits it, and the sign-in form works again once Redis is back', async () => {
    const clientId = (await oauth.register()).client_id;
    const signedIn = await oauth.tokens(clientId, { key: 'alice', secret: 'alice-secret', scope: 'ledger:read' });
    expect(signedIn.status).toBe(200);
    // A second sign-in, its page open in the browser when Redis goes away.
    const {
      jar,
      pkce: p,
      authorize,
      interaction,
      csrf,
    } = await openSignInPage(gateway.gatewayUrl, {
      clientId,
      scope: 'ledger:read',
      fetch: oauth.send,
    });
    expect(authorize.status).toBe(303);
    const form = { csrf, key: 'alice', secret: 'alice-secret' };

    link.cut();
    const registered = await oauth.registerRaw({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    expect(registered.status).toBe(503);
    expect(registered.headers.get('retry-after')).toBe('2');
    expect(await registered.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the authorization server cannot reach its store right now; retry after 2 s',
    });
    const refreshed = await oauth.refresh(clientId, String(signedIn.body.refresh_token));
    expect(refreshed.status).toBe(503);
    expect(refreshed.body.error).toBe('temporarily_unavailable');
    const authorizePage = await oauth.send(
      authorizeUrl(gateway.gatewayUrl, {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      }),
      { headers: { accept: 'text/html' }, redirect: 'manual' },
    );
    expect(authorizePage.status).toBe(503);
    expect(await authorizePage.text()).toContain('Sign-in is briefly unavailable');
    const posted = await step(jar, `${interaction}/login`, form, {}, oauth.send);
    expect(posted.status).toBe(503);
    expect(posted.headers.get('retry-after')).toBe('2');
    const page = await posted.text();
    expect(page).toContain('Sign-in is briefly unavailable');
    expect(page).not.toMatch(/Sign-in expired|start again/i);
    const refused = authDecisionsOf(audit).filter((r) => r.reason === 'temporarily_unavailable');
    expect(refused.map((r) => r.endpoint)).toEqual(['register', 'token', 'authorize', 'sign_in']);
    expect(refused[1]).toMatchObject({ outcome: 'refused', grantType: 'refresh_token' });
    expect(gateway.logs.text).not.toContain('authorization server error');

    link.restore();
    await waitFor(
      'the store to answer again',
      async () => (await oauth.registerRaw({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' })).status === 201,
    );
    expect((await step(jar, `${interaction}/login`, form, {}, oauth.send)).status).toBe(303);
    expect((await oauth.refresh(clientId, String(signedIn.body.refresh_token))).status).toBe(200);
  });

  it('after Redis lost its data (FLUSHALL) a token revoked by refresh-token reuse, and a live one, answer 401 at /mcp, not 200', async () => {
    const clientId = (await oauth.register()).client_id;
    const user = { key: 'alice', secret: 'alice-secret', scope: 'ledger:read' };
    const revoked = await oauth.tokens(clientId, user);
    expect((await oauth.refresh(clientId, String(revoked.body.refresh_token))).status).toBe(200);
    expect((await oauth.refresh(clientId, String(revoked.body.refresh_token))).body.error).toBe('invalid_grant');
    const live = await oauth.tokens(clientId, user);
    expect(await oauth.listTools(String(revoked.body.access_token))).toEqual({ status: 401 });
    expect(await oauth.listTools(String(live.body.access_token))).toMatchObject({ status: 200, tools: ['read_ledger'] });
    expect(redis.cli('FLUSHALL').trim()).toBe('OK');
    for (const token of [revoked.body.access_token, live.body.access_token]) expect(await oauth.listTools(String(token))).toEqual({ status: 401 });
  });
});
