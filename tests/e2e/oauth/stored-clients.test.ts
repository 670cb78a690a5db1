/**
 * A client stored before the registration rules on redirect URI text and loopback ports (a leading-zero port, a
 * wildcard host, a bad escape) still loads: authorize, token and revocation answer it as before, and only a new
 * registration is refused (review: every refresh token of such a client died, answered invalid_redirect_uri).
 * Among the e2e files because it replaces the OAuth store module (vi.mock), which only an isolated file can.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';

const captured: { store?: { get(key: string): Promise<string | undefined>; set(key: string, value: string, ttl: number, kind: string): Promise<void> } } = {};
vi.mock('../../../gateway/auth/oauth/store.ts', async (original) => {
  const module = await original<typeof import('../../../gateway/auth/oauth/store.ts')>();
  return { ...module, createMemoryStore: (n: number) => (captured.store = module.createMemoryStore(n) as unknown as typeof captured.store) };
});

import { inProcessGateway, type InProcessGateway } from '../../helpers/in-process.ts';
import { authorizeUrl, Jar, oauthClient, pkce, REDIRECT_URI, step, tokenRequest, type OAuthClient } from '../../helpers/oauth-harness.ts';

const TOOLS = [{ definition: { name: 'read_accounts', inputSchema: { type: 'object' } } as Tool }];
let gateway: InProcessGateway;
let oauth: OAuthClient;
beforeAll(async () => {
  gateway = inProcessGateway(
    {
      credentials: { apiKeys: [{ name: 'data', key: 'k_data', secret: 'data-secret-0123', scopes: ['accounts:read'] }] },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-stored-clients', scopes: ['accounts:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: TOOLS } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
});
afterAll(() => gateway?.close());

/** A client registered now, then stored as an older gateway would have kept it, with `uri` among its redirect URIs. */
async function storedWith(uri: string): Promise<string> {
  const answer = await oauth.registerRaw({ client_name: 'Old', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
  const id = ((await answer.json()) as { client_id: string }).client_id;
  const key = `Client:${id}`;
  const raw = JSON.parse((await captured.store!.get(key))!) as { p: { redirect_uris: string[] } };
  raw.p.redirect_uris = [REDIRECT_URI, uri];
  await captured.store!.set(key, JSON.stringify(raw), 3600, 'bounded');
  return id;
}

describe.each(['http://localhost:08080/cb', 'https://*.example/cb', 'https://app.example/a%zz'])('a client stored with %s', (uri) => {
  it('is refused at registration now', async () => {
    const refused = await oauth.registerRaw({ client_name: 'New', redirect_uris: [uri], token_endpoint_auth_method: 'none' });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_redirect_uri');
  });

  it('still loads: authorize goes on to sign-in, token and revocation answer as for any client', async () => {
    const id = await storedWith(uri);
    const authorize = await step(
      new Jar(),
      authorizeUrl(gateway.gatewayUrl, {
        client_id: id,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'accounts:read',
        resource: `${gateway.gatewayUrl}/mcp`,
        state: 's',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
      undefined,
      {},
      oauth.send,
    );
    expect(authorize.status).toBe(303);
    expect(authorize.headers.get('location')).toMatch(/\/oauth\/interaction\//);
    const token = await tokenRequest(gateway.gatewayUrl, { grant_type: 'refresh_token', refresh_token: 'x'.repeat(43), client_id: id }, oauth.send);
    expect(token.body).toMatchObject({ error: 'invalid_grant' });
    expect((await oauth.revoke(id, 'abc')).status).toBe(200);
  });
});
