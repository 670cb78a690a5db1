/**
 * What the built-in authorization server does with odd authorization requests (a security try-out),
 * through the real handler in process, keys from `credentials.apiKeys` (no socket anywhere): a loopback
 * redirect URI whose port is out of range or not canonical decimal is refused at /oauth/authorize on the
 * gateway's own page (it passed as "any port", then the resume after consent answered 500); a scope of
 * only unknown values is invalid_scope, and `offline_access` alone is a request with no scope (both showed
 * a consent page offering, pre-ticked, every scope the key held, then ended in access_denied); a known
 * scope outside the client's registered one is invalid_scope saying so; a key holding none of the scopes
 * asked for gets a page saying so whose only way on is back to the client, with access_denied. And at
 * the token endpoint, a code_verifier outside RFC 7636 §4.1 is invalid_request naming its length, whatever the code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import {
  authorizeUrl,
  Jar,
  oauthClient,
  openSignInPage,
  pkce,
  REDIRECT_URI,
  signInFlow,
  step,
  tokenRequest,
  type OAuthClient,
} from '../helpers/oauth-harness.ts';

const TOOLS = [
  { definition: { name: 'read_accounts', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['accounts:read'] } } } as Tool },
];
const DATA = { key: 'k_data', secret: 'data-secret-0123', scopes: ['accounts:read'] };
const FULL = { key: 'k_full', secret: 'full-secret-0123', scopes: ['accounts:read', 'trade'] };

let gateway: InProcessGateway;
let oauth: OAuthClient;
beforeAll(async () => {
  gateway = inProcessGateway(
    {
      credentials: {
        apiKeys: [
          { name: 'data', ...DATA },
          { name: 'full', ...FULL },
        ],
      },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-authorize-requests', scopes: ['accounts:read', 'trade'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: TOOLS } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
});
afterAll(() => gateway?.close());

/** Registers a public client as MCP clients do (no application_type unless `extra` says), `redirect_uris` as given: its client_id. */
async function register(redirectUris: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await oauth.registerRaw({ client_name: 'T', redirect_uris: redirectUris, token_endpoint_auth_method: 'none', ...extra });
  expect(answer.status, await answer.clone().text()).toBe(201);
  return ((await answer.json()) as { client_id: string }).client_id;
}

/** Signs `user` in on the page `clientId`'s request for `scope` opens: the consent page's text, its jar and interaction URL, and the scopes it offers (ticked). */
async function consentPage(clientId: string, scope: string, user: { key: string; secret: string }) {
  const opened = await openSignInPage(gateway.gatewayUrl, { clientId, scope, fetch: oauth.send });
  const login = await step(opened.jar, `${opened.interaction}/login`, { csrf: opened.csrf, key: user.key, secret: user.secret }, {}, oauth.send);
  expect(login.status).toBe(303);
  const html = await (await step(opened.jar, opened.interaction, undefined, {}, oauth.send)).text();
  const offered = [...html.matchAll(/name="scope" value="([^"]+)" checked/g)].map((m) => m[1]!);
  return { ...opened, html, offered };
}

/** /oauth/authorize's answer to a request of `clientId` with `params` (PKCE S256, resource /mcp, state): status, Location, page text. */
async function authorize(clientId: string, params: Record<string, string | undefined>) {
  const answer = await step(
    new Jar(),
    authorizeUrl(gateway.gatewayUrl, {
      client_id: clientId,
      response_type: 'code',
      resource: `${gateway.gatewayUrl}/mcp`,
      state: 's1',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      ...params,
    }),
    undefined,
    {},
    oauth.send,
  );
  return { status: answer.status, location: answer.headers.get('location'), text: await answer.text() };
}

describe('a loopback redirect URI with a port that is not one (RFC 3986 §3.2.3, RFC 8252 §7.3)', () => {
  const BAD_PORTS = ['65536', '99999999999', '08080', '0', '', '+80', '-1', 'abc'];

  it('is refused at /oauth/authorize with invalid_redirect_uri on the gateway page, never redirected; a real port still matches', async () => {
    const web = await register(['http://127.0.0.1/cb']);
    const native = await register(['http://127.0.0.1/cb'], { application_type: 'native' });
    for (const clientId of [web, native]) {
      for (const port of BAD_PORTS) {
        const answer = await authorize(clientId, { redirect_uri: `http://127.0.0.1:${port}/cb`, scope: 'accounts:read' });
        expect(answer.status, port).toBe(400);
        expect(answer.location, port).toBeNull();
        expect(answer.text, port).toContain('invalid_redirect_uri');
      }
      for (const port of ['1', '5555', '65535']) {
        const answer = await authorize(clientId, { redirect_uri: `http://127.0.0.1:${port}/cb`, scope: 'accounts:read' });
        expect(answer.status, port).toBe(303);
        expect(answer.location, port).toMatch(/^\/oauth\/interaction\//);
      }
    }
  });

  it('is refused at registration with invalid_redirect_uri naming the port', async () => {
    for (const port of ['08080', '0', '']) {
      const refused = await oauth.registerRaw({ redirect_uris: ['https://app.example/cb', `http://127.0.0.1:${port}/cb`], token_endpoint_auth_method: 'none' });
      expect(refused.status, port).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'invalid_redirect_uri',
        error_description: `redirect_uris item 2 has the port '${port}': a loopback redirect URI's port is a number from 1 to 65535 written without a sign or leading zeros`,
      });
    }
  });
});

describe('a scope asking for no permission this server knows (RFC 6749 §3.3, §4.1.2.1)', () => {
  it('only unknown values: invalid_scope at /oauth/authorize on the gateway page, naming them and what is known; nobody signs in', async () => {
    const clientId = await register([REDIRECT_URI]);
    for (const scope of ['bogus:scope', 'bogus:scope other offline_access']) {
      const answer = await authorize(clientId, { redirect_uri: REDIRECT_URI, scope });
      expect(answer.status, scope).toBe(400);
      expect(answer.location, scope).toBeNull();
      expect(answer.text, scope).toContain('invalid_scope');
      expect(answer.text, scope).toContain('no scope asked for is one this server knows (bogus:scope');
      expect(answer.text, scope).toContain('this server&#39;s permissions are: accounts:read trade');
    }
  });

  it("a known scope the client did not register (RFC 7591 §2): invalid_scope saying so, not 'permissions this server does not know'", async () => {
    const clientId = await register([REDIRECT_URI], { scope: 'accounts:read' });
    const answer = await authorize(clientId, { redirect_uri: REDIRECT_URI, scope: 'accounts:read trade' });
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.text).toContain(
      'The application asked for permissions it did not register. (invalid_scope: trade is not in the scope this application registered)',
    );
    expect(answer.text).not.toContain('does not know');
  });

  it('unknown values beside a known one: ignored, the consent page offers the known one only', async () => {
    const clientId = await register([REDIRECT_URI]);
    expect((await consentPage(clientId, 'bogus:scope accounts:read', FULL)).offered).toEqual(['accounts:read']);
  });

  it('offline_access alone: the default of a request naming no scope (the registered scope, else every supported one), and a code', async () => {
    const clientId = await register([REDIRECT_URI]);
    expect((await consentPage(clientId, 'offline_access', FULL)).offered).toEqual(['accounts:read', 'trade']);
    const tokens = await oauth.tokens(clientId, { ...FULL, scope: 'offline_access' });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('accounts:read trade');
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const narrow = await register([REDIRECT_URI], { scope: 'accounts:read' });
    expect((await consentPage(narrow, 'offline_access', FULL)).offered).toEqual(['accounts:read']);
  });
});

/** Posts `form` to the consent action of `page` and follows the gateway's own redirects: where the browser is sent at the end. */
async function consent(page: { jar: Jar; interaction: string }, form: Record<string, string | string[]>): Promise<URL> {
  let answer = await step(page.jar, `${page.interaction}/consent`, form, {}, oauth.send);
  let location = new URL(answer.headers.get('location') ?? '', gateway.gatewayUrl);
  while (answer.status === 303 && location.origin === gateway.gatewayUrl) {
    answer = await step(page.jar, location.href, undefined, {}, oauth.send);
    location = new URL(answer.headers.get('location') ?? '', gateway.gatewayUrl);
  }
  expect([302, 303]).toContain(answer.status);
  return location;
}

describe('a key holding none of the scopes asked for', () => {
  it('gets a page saying so, without Allow, whose only button returns to the client with access_denied', async () => {
    const clientId = await register([REDIRECT_URI]);
    const page = await consentPage(clientId, 'trade', DATA);
    expect(page.offered).toEqual([]);
    expect(page.html).toContain('holds none of the permissions this application asked for');
    expect(page.html).toMatch(/<li>[^<]*<code[^>]*>trade<\/code><\/li>/);
    expect(page.html).not.toContain('value="allow"');
    expect(page.html).toContain('name="decision" value="deny">Return to T</button>');
    const back = await consent(page, { csrf: page.csrf, decision: 'deny' });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('state-123');
  });

  it('a posted Allow (no page offers it) also ends with access_denied at the client, not a page asking to choose', async () => {
    const clientId = await register([REDIRECT_URI]);
    const page = await consentPage(clientId, 'trade', DATA);
    const back = await consent(page, { csrf: page.csrf, decision: 'allow', scope: 'trade' });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('The signed-in key holds none of the requested permissions');
  });
});

describe('a code_verifier RFC 7636 §4.1 does not allow, at /oauth/token', () => {
  const redeem = (clientId: string, code: string, verifier: string) =>
    tokenRequest(
      gateway.gatewayUrl,
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT_URI,
        client_id: clientId,
        resource: `${gateway.gatewayUrl}/mcp`,
      },
      oauth.send,
    );

  it('is invalid_request naming its length or characters (it was invalid_grant with an unknown code), and leaves a real code usable', async () => {
    const clientId = await register([REDIRECT_URI]);
    const flow = await signInFlow(gateway.gatewayUrl, { clientId, ...FULL, scope: 'accounts:read', fetch: oauth.send });
    for (const code of ['not-a-code', flow.code]) {
      for (const [verifier, description] of [
        ['a'.repeat(200), 'code_verifier is 200 characters long; RFC 7636 §4.1 allows 43 to 128'],
        ['a'.repeat(42), 'code_verifier is 42 characters long; RFC 7636 §4.1 allows 43 to 128'],
        [`${'a'.repeat(42)}+`, "code_verifier holds a character RFC 7636 §4.1 does not allow (only A-Z, a-z, 0-9, '-', '.', '_', '~')"],
      ]) {
        const answer = await redeem(clientId, code, verifier!);
        expect(answer, `${code} ${verifier!.length}`).toEqual({ status: 400, body: { error: 'invalid_request', error_description: description } });
      }
    }
    // Recorded as what the client was told.
    const metrics = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
    expect(metrics).toMatch(/^mcp_oauth_refusals_total\{endpoint="token",reason="invalid_request"\} 6$/m);
    // A well-formed wrong verifier is still invalid_grant (RFC 7636 §4.6); the right one still redeems the code.
    expect((await redeem(clientId, 'not-a-code', 'a'.repeat(43))).body.error).toBe('invalid_grant');
    const redeemed = await redeem(clientId, flow.code, flow.pkce.verifier);
    expect(redeemed.status).toBe(200);
    // Another refusal stays what it is: an unknown client is invalid_client whatever its verifier (review).
    expect((await redeem('no-such-client', 'not-a-code', 'a'.repeat(200))).body.error).toBe('invalid_client');
  });
});
