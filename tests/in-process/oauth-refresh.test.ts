/**
 * Refresh tokens under attack (issue 28), through the real handler in process: concurrent refreshes of
 * one token rotate it at most once, and the losers count as reuse, so the whole family dies (one
 * `refresh_token_reuse` audit line and counter each); a refresh naming a resource that is not granted is
 * `invalid_target` and consumes nothing; a refresh re-checks the key behind the grant (revoked: the grant
 * ends; narrowed: the new access token holds only what the key still does); loopback spellings of the
 * gateway's URL are one resource; while the scope endpoint fails, a token is served as its key would be
 * (its last good answer narrowed to the grant, `failureMode` deciding), never its grant alone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, oauthClient, REDIRECT_URI, signInFlow, tokenRequest, type OAuthClient } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const tool = (name: string, scope: string) => ({
  definition: { name, inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: [scope] } } } as Tool,
});
const SCOPES = { alice: ['ledger:read', 'orders:read'], bob: ['ledger:read', 'orders:read'], carol: ['ledger:read', 'orders:read'] };
const user = (key: keyof typeof SCOPES) => ({ key, secret: `${key}-secret`, scope: 'ledger:read orders:read' });

const audit = new LogCapture();
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;
let clientId: string;

beforeAll(async () => {
  endpoint = await startScopeEndpoint(structuredClone(SCOPES));
  gateway = inProcessGateway(
    {
      // Every refresh asks the endpoint again: no scope entry outlives a test step.
      scopes: { endpoint: endpoint.url, ttlMs: 0, unauthorizedTtlMs: 0 },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-refresh', scopes: ['ledger:read', 'orders:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [tool('read_ledger', 'ledger:read'), tool('read_orders', 'orders:read')] }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
  clientId = (await oauth.register()).client_id;
});
afterEach(() => {
  endpoint.mode = 'ok';
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

const metric = async (name: string) =>
  Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text())?.[1] ?? 0);

describe('refresh token rotation', () => {
  it('rotates at most once under 20 concurrent refreshes of one token, and the family is dead afterwards', async () => {
    for (let round = 0; round < 5; round++) {
      const signedIn = await oauth.tokens(clientId, user('alice'));
      const reuseBefore = await metric('mcp_oauth_refresh_reuse_total');
      const answers = await Promise.all(Array.from({ length: 20 }, () => oauth.refresh(clientId, String(signedIn.body.refresh_token))));
      const succeeded = answers.filter((a) => a.status === 200);
      expect(succeeded.length, `round ${round}`).toBeLessThanOrEqual(1);
      for (const refused of answers.filter((a) => a.status !== 200)) expect(refused.body.error).toBe('invalid_grant');
      // Every token of the family is refused: the first access token, any rotated pair.
      expect((await oauth.listTools(String(signedIn.body.access_token))).status).toBe(401);
      for (const won of succeeded) {
        expect((await oauth.refresh(clientId, String(won.body.refresh_token))).body.error).toBe('invalid_grant');
        expect((await oauth.listTools(String(won.body.access_token))).status).toBe(401);
      }
      expect(await metric('mcp_oauth_refresh_reuse_total')).toBeGreaterThan(reuseBefore);
    }
    expect(authDecisionsOf(audit).filter((r) => r.reason === 'refresh_token_reuse').length).toBeGreaterThanOrEqual(5);
  });

  it('refuses a refresh for a resource that was not granted with invalid_target, and leaves both tokens alive', async () => {
    const signedIn = await oauth.tokens(clientId, user('bob'));
    const refresh = String(signedIn.body.refresh_token);
    for (const resource of ['https://elsewhere.example/mcp', `${gateway.gatewayUrl}/mcp/compact`]) {
      const refused = await oauth.refresh(clientId, refresh, { resource });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_target');
    }
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'token', outcome: 'refused', reason: 'invalid_target', grantType: 'refresh_token' });
    expect((await oauth.listTools(String(signedIn.body.access_token))).status).toBe(200);
    const rotated = await oauth.refresh(clientId, refresh);
    expect(rotated.status).toBe(200);
  });
});

describe('a refresh re-checks the key behind the grant', () => {
  it('ends the grant when the key was revoked: invalid_grant, and every token of the family refused', async () => {
    const signedIn = await oauth.tokens(clientId, user('carol'));
    expect((await oauth.listTools(String(signedIn.body.access_token))).status).toBe(200);
    endpoint.mode = 'unauthorized';
    const refused = await oauth.refresh(clientId, String(signedIn.body.refresh_token));
    expect(refused.body.error).toBe('invalid_grant');
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'token', outcome: 'refused', reason: 'key_revoked' });
    endpoint.mode = 'ok';
    expect((await oauth.listTools(String(signedIn.body.access_token))).status).toBe(401);
    expect((await oauth.refresh(clientId, String(signedIn.body.refresh_token))).body.error).toBe('invalid_grant');
  });

  it('narrows the new access token to what the key still holds', async () => {
    const signedIn = await oauth.tokens(clientId, user('alice'));
    expect(signedIn.body.scope).toBe('ledger:read orders:read');
    const narrower = await startScopeEndpoint({ alice: ['ledger:read'] });
    try {
      gateway.runtime.state.config.scopes.endpoint = narrower.url;
      const rotated = await oauth.refresh(clientId, String(signedIn.body.refresh_token));
      expect(rotated.status).toBe(200);
      expect(rotated.body.scope).toBe('ledger:read');
      expect(await oauth.listTools(String(rotated.body.access_token))).toEqual({ status: 200, tools: ['read_ledger'] });
    } finally {
      gateway.runtime.state.config.scopes.endpoint = endpoint.url;
      await narrower.close();
    }
  });
});

describe('a token while the scope endpoint fails', () => {
  // config/cpzai.yaml's failureMode open: what a key pair gets, a token gets, narrowed to its grant.
  it('is served its last good answer, and refused (503) once its key was refused since, as a key pair is', async () => {
    const signedIn = await oauth.tokens(clientId, user('bob'));
    const token = String(signedIn.body.access_token);
    expect((await oauth.listTools(token)).status).toBe(200);
    endpoint.mode = 'error';
    expect(await oauth.listTools(token)).toEqual({ status: 200, tools: ['read_ledger', 'read_orders'] });
    // A token granted less than its key holds gets the last good answer narrowed to its grant (review: untested).
    endpoint.mode = 'ok';
    const narrow = String((await oauth.tokens(clientId, { ...user('carol'), grant: ['ledger:read'] })).body.access_token);
    expect(await oauth.listTools(narrow)).toEqual({ status: 200, tools: ['read_ledger'] });
    endpoint.mode = 'error';
    expect(await oauth.listTools(narrow)).toEqual({ status: 200, tools: ['read_ledger'] });
    endpoint.mode = 'unauthorized';
    expect((await oauth.listTools(token)).status).toBe(401);
    // The grant alone served it here: a key revoked while the endpoint failed kept its tokens working (review).
    endpoint.mode = 'error';
    expect((await oauth.listTools(token)).status).toBe(503);
  });

  it('is refused with 503 by a failureMode closed gateway, a refreshed one too, until the endpoint answers again', async () => {
    const closed = inProcessGateway(
      {
        scopes: { endpoint: endpoint.url, ttlMs: 0, unauthorizedTtlMs: 0, failureMode: 'closed' },
        oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-closed', scopes: ['ledger:read', 'orders:read'] },
        upstreams: [{ health: { intervalMs: 0 } }],
      },
      { fake: { tools: [tool('read_ledger', 'ledger:read'), tool('read_orders', 'orders:read')] } },
    );
    try {
      await closed.runtime.startOAuth(closed.gatewayUrl);
      const client = oauthClient(closed.gatewayUrl, closed.fetch);
      const id = (await client.register()).client_id;
      const signedIn = await client.tokens(id, user('bob'));
      expect((await client.listTools(String(signedIn.body.access_token))).status).toBe(200);
      endpoint.mode = 'error';
      expect((await client.listTools(String(signedIn.body.access_token))).status).toBe(503);
      const rotated = await client.refresh(id, String(signedIn.body.refresh_token));
      expect((await client.listTools(String(rotated.body.access_token))).status).toBe(503);
      endpoint.mode = 'ok';
      expect(await client.listTools(String(rotated.body.access_token))).toEqual({ status: 200, tools: ['read_ledger', 'read_orders'] });
    } finally {
      await closed.close();
    }
  });
});

describe('an authorization code redeemed for another resource', () => {
  it('is refused with invalid_target naming the resource and saying the code is used up', async () => {
    const flow = await signInFlow(gateway.gatewayUrl, { ...user('carol'), clientId, fetch: oauth.send });
    const redeem = (resource: string) =>
      tokenRequest(
        gateway.gatewayUrl,
        { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.pkce.verifier, redirect_uri: REDIRECT_URI, client_id: clientId, resource },
        oauth.send,
      );
    const wrong = await redeem(`${gateway.gatewayUrl}/mcp/compact`);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({
      error: 'invalid_target',
      error_description: `the resource ${gateway.gatewayUrl}/mcp/compact is not the one this authorization was for (the resource sent to /oauth/authorize, else ${gateway.gatewayUrl}/mcp); the code is used up: authorize again`,
    });
    expect((await redeem(`${gateway.gatewayUrl}/mcp`)).body.error).toBe('invalid_grant');
  });
});

describe('loopback spellings of the gateway URL', () => {
  it('are one resource: a token asked for localhost is issued, and works at 127.0.0.1 and at localhost', async () => {
    const port = new URL(gateway.gatewayUrl).port;
    const signedIn = await oauth.tokens(clientId, { ...user('bob'), resource: `http://localhost:${port}/mcp` });
    expect(signedIn.status).toBe(200);
    expect((await oauth.listTools(String(signedIn.body.access_token))).status).toBe(200);
    expect((await oauth.listTools(String(signedIn.body.access_token), '/mcp', `localhost:${port}`)).status).toBe(200);
    // Another port is another server: refused invalid_target, on the gateway's own page (never sent to the client before a sign-in).
    const authorize = await oauth.send(
      `${gateway.gatewayUrl}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
        resource: `http://localhost:${Number(port) + 1}/mcp`,
      })}`,
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(400);
    expect(authorize.headers.get('location')).toBeNull();
    expect(await authorize.text()).toContain('invalid_target');
  });
});
