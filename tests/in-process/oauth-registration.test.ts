/**
 * RFC 7591 registration as a bounded resource (issue 28), through the real handler in process:
 * registrations past the per-address budget are 429 `temporarily_unavailable` with Retry-After, each
 * refusal one audit line, a document refused as malformed (400) not counted; a client document over `oauth.clients.maxMetadataBytes` is
 * `invalid_client_metadata`; a plain-http redirect URI off loopback is `invalid_redirect_uri` whatever
 * the application type (OAuth 2.1 §2.3.1), and so is one with user info (`https://a.example@b.example/cb`); `oauth.initialAccessToken` makes registration need it
 * (RFC 7591 §3). A private-use redirect scheme (RFC 8252 §7.1) registers without application_type, as
 * native (it was refused as not a web URI), and under application_type web is refused naming it. And a flood of registrations evicts only other unused registrations from the memory
 * store: a revoked token and its refresh token stay refused, and a client that completed an
 * authorization keeps working.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, oauthClient, openSignInPage, REDIRECT_URI, step } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const SECRET = 'test-secret-0123456789abcdef-registration';
const TOOLS = [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } } } as Tool }];
const ALICE = { key: 'alice', secret: 'alice-secret', scope: 'ledger:read' };

let endpoint: ScopeEndpoint;
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: ['ledger:read'] });
});
afterAll(async () => {
  await endpoint?.close();
});

function gatewayWith(oauth: Record<string, unknown>, rateLimits: Record<string, unknown> = {}, audit?: LogCapture): Promise<InProcessGateway> {
  const gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: SECRET, scopes: ['ledger:read'], ...oauth },
      rateLimits,
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: TOOLS }, ...(audit ? { audit } : {}) },
  );
  return gateway.runtime.startOAuth(gateway.gatewayUrl).then(() => gateway);
}

describe('registration budgets', () => {
  const audit = new LogCapture();
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith({}, { registrations: { perAddress: { points: 3, durationMs: 3_600_000 } } }, audit);
  });
  afterAll(() => gateway?.close());

  it('refuses registrations past the per-address budget with 429 temporarily_unavailable and Retry-After, each with one audit line', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    for (let i = 0; i < 3; i++) await oauth.register();
    for (let i = 0; i < 2; i++) {
      const refused = await oauth.registerRaw({ client_name: 'x', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
      expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/registrations per address/) });
    }
    const lines = authDecisionsOf(audit).filter((r) => r.endpoint === 'register');
    expect(lines.filter((r) => r.outcome === 'ok')).toHaveLength(3);
    expect(lines.filter((r) => r.outcome === 'refused')).toEqual([
      expect.objectContaining({ reason: 'rate_limited', budget: 'registrations_per_address' }),
      expect.objectContaining({ reason: 'rate_limited', budget: 'registrations_per_address' }),
    ]);
    const metrics = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
    expect(metrics).toMatch(/^mcp_rate_limited_total\{budget="registrations_per_address"\} 2$/m);
    expect(metrics).toMatch(/^mcp_oauth_refusals_total\{endpoint="register",reason="rate_limited"\} 2$/m);
  });

  it('refuses the spellings oidc-provider would also route (another case, a trailing slash) with 404, so none registers past the budget', async () => {
    const document = JSON.stringify({ client_name: 'x', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    for (const path of ['/oauth/register/', '/oauth/REGISTER', '/oauth/Register/', '/OAUTH/register']) {
      const answer = await gateway.fetch(
        new Request(`${gateway.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: document }),
      );
      expect(answer.status, path).toBe(404);
      const body = (await answer.json()) as { error: string; error_description?: string };
      if (path.startsWith('/oauth/'))
        expect(body, path).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('paths are spelled exactly: /oauth/register') });
    }
    const bogus = await gateway.fetch(new Request(`${gateway.gatewayUrl}/oauth/TOKEN/`, { method: 'POST' }));
    expect(await bogus.json()).toMatchObject({ error_description: expect.stringContaining('/oauth/token') });
    const lines = authDecisionsOf(audit).filter((r) => r.endpoint === 'register');
    expect(lines.filter((r) => r.outcome === 'ok')).toHaveLength(3);
  });
});

describe('registration budgets and refused documents', () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith(
      { initialAccessToken: 'initial-access-token-0123456789-budgets' },
      { registrations: { perAddress: { points: 3, durationMs: 3_600_000 } } },
    );
  });
  afterAll(() => gateway?.close());

  it('counts only registrations made: malformed documents (400) give their point back, a wrong initial access token does not', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const auth = { authorization: 'Bearer initial-access-token-0123456789-budgets' };
    // A developer fixing a document by hand: ten refusals, then the budget is still whole.
    for (let i = 0; i < 10; i++) {
      const refused = await oauth.registerRaw({ redirect_uris: ['http://attacker.example/cb'], token_endpoint_auth_method: 'none' }, auth);
      expect(refused.status, `refusal ${i + 1}`).toBe(400);
    }
    const good = { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' };
    for (let i = 0; i < 2; i++) expect((await oauth.registerRaw(good, auth)).status).toBe(201);
    // A wrong initial access token is guessing: it stays counted, and the budget is spent.
    expect((await oauth.registerRaw(good, { authorization: 'Bearer not-the-token-0123456789-abcdef' })).status).toBe(401);
    const over = await oauth.registerRaw(good, auth);
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error: 'temporarily_unavailable' });
  });

  // The budget is what bounds how often a stranger has the server fetch a URL of their choosing (review).
  it('keeps the point of a refused document that names a URL the server fetches (sector_identifier_uri)', async () => {
    const other = await gatewayWith(
      { initialAccessToken: 'initial-access-token-0123456789-fetches' },
      { registrations: { perAddress: { points: 2, durationMs: 3_600_000 } } },
    );
    try {
      const oauth = oauthClient(other.gatewayUrl, other.fetch);
      const auth = { authorization: 'Bearer initial-access-token-0123456789-fetches' };
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await oauth.registerRaw(
          { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', sector_identifier_uri: `https://sector-${i}.invalid/uris` },
          auth,
        );
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([400, 400, 429]);
    } finally {
      await other.close();
    }
  });
});

describe('registration documents', () => {
  const audit = new LogCapture();
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith({}, {}, audit);
  });
  afterAll(() => gateway?.close());

  it('refuses a document over oauth.clients.maxMetadataBytes with invalid_client_metadata, and keeps nothing', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const refused = await oauth.registerRaw({ client_name: 'x'.repeat(6000), redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/at most 5120 are accepted/) });
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'register', outcome: 'refused', reason: 'invalid_client_metadata' });
  });

  it('refuses metadata nested deeper than 8 levels with invalid_client_metadata naming where (5,000 deep was a 500: a stack overflow)', async () => {
    const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    for (const [field, depth] of [
      ['redirect_uris', 5000],
      ['client_name', 9],
    ] as const) {
      const body = `{"redirect_uris":${field === 'redirect_uris' ? deep(depth) : '["http://127.0.0.1:9/cb"]'},"client_name":${field === 'client_name' ? deep(depth) : '"x"'}}`;
      const refused = await gateway.fetch(
        new Request(`${gateway.gatewayUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
      );
      expect(refused.status, field).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'invalid_client_metadata',
        error_description: `client metadata nests deeper than 8 levels (at /${field}/0/0/0/0/0/0/0)`,
      });
    }
    // An inline JWK Set (4 levels) is metadata as RFC 7591 §2 has it.
    const jwk = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', x5c: ['MIIB'] };
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    expect((await oauth.registerRaw({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', jwks: { keys: [jwk] } })).status).toBe(201);
  });

  it('takes https and loopback http redirect URIs only, for web clients too (OAuth 2.1: http for loopback only)', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    // A loopback host spelled otherwise than the authorize step matches it on any port: registered, it could never be used (try-out).
    for (const uri of [
      'http://attacker.example/cb',
      'http://192.168.1.10/cb',
      'http://127.0.0.2/cb',
      'http://0x7f000001/cb',
      'http://2130706433/cb',
      'http://127.1/cb',
    ]) {
      const refused = await oauth.registerRaw({ redirect_uris: [uri], application_type: 'web', token_endpoint_auth_method: 'none' });
      expect(refused.status, uri).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    }
    // User info names one host and goes to another: refused, naming it, whatever the scheme.
    for (const uri of ['https://accounts.google.com@evil.example/cb', 'https://user:pw@app.example/cb', 'http://me@127.0.0.1:9/cb']) {
      const refused = await oauth.registerRaw({ redirect_uris: ['https://app.example/cb', uri], token_endpoint_auth_method: 'none' });
      expect(refused.status, uri).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'invalid_redirect_uri',
        error_description: `redirect_uris must not hold user info (a user name or password before '@'): item 2 does, and would send the user to ${new URL(uri).host}`,
      });
    }
    for (const uri of ['https://app.example/cb', 'http://127.0.0.1:9/cb', 'http://localhost:9/cb', 'http://[::1]:9/cb']) {
      const accepted = await oauth.registerRaw({ redirect_uris: [uri], application_type: 'web', token_endpoint_auth_method: 'none' });
      expect(accepted.status, uri).toBe(201);
    }
  });
});

describe('malformed redirect URIs', () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith({});
  });
  afterAll(() => gateway?.close());

  it('refuses a redirect URI no URI parser would take as written (RFC 3986 §2, RFC 7591 §3.2.2): invalid_redirect_uri naming the problem', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const unencoded = (what: string, at: number) => `holds ${what} at position ${at}, which a URI cannot hold unencoded (RFC 3986 §2: percent-encode it)`;
    for (const [uri, problem] of [
      ['https://app.example/cb\r\nSet-Cookie: x=1', unencoded('a carriage return (CR)', 23)],
      ['https://app.example/cb\nx', unencoded('a line feed (LF)', 23)],
      ['https://app.example/cb\t', unencoded('a tab', 23)],
      ['https://app.example/c b', unencoded('a space', 22)],
      ['https://app.example\\@evil.example/cb', unencoded("a backslash ('\\')", 20)],
      ['https://app.example/cb?x=<script>', unencoded("the character '<'", 26)],
      ['https://app.example/cb\u0000', unencoded('the character U+0000', 23)],
      ['https://bücher.example/cb', unencoded('the character U+00FC', 10)],
      ['https://app.example/cb?x=%zz', "has a '%' not followed by two hex digits (RFC 3986 §2.1)"],
      ['https://*.example.com/cb', "has a '*' in its host (*.example.com): redirect URIs are matched exactly, wildcards are not supported"],
    ]) {
      const refused = await oauth.registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(refused.status, JSON.stringify(uri)).toBe(400);
      expect(await refused.json()).toEqual({ error: 'invalid_redirect_uri', error_description: `redirect_uris item 1 ${problem}` });
    }
    // Scheme and host are case-insensitive (RFC 3986 §6.2.2.1), loopback URIs matched as written: the refusal gives the spelling to use.
    const upper = await oauth.registerRaw({ redirect_uris: ['HTTP://LOCALHOST:9/cb'], token_endpoint_auth_method: 'none' });
    expect(await upper.json()).toEqual({
      error: 'invalid_redirect_uri',
      error_description:
        'redirect_uris item 1 has upper-case letters in its scheme or host: write it http://localhost:9/cb (loopback redirect URIs are matched as written, on any port)',
    });
    // What RFC 3986 allows stays taken: sub-delimiters, a percent-encoded space, a '*' in the path.
    for (const uri of ["https://app.example/cb?a=1&b=(x)*!$'+,;=", 'https://app.example/c%20b', 'https://app.example/*/cb']) {
      expect((await oauth.registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status, uri).toBe(201);
    }
  });
});

describe("a native client's private-use redirect scheme (RFC 8252 §7.1)", () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith({});
  });
  afterAll(() => gateway?.close());

  it('is shown whole on the consent page, with a warning that an app on this device gets the code, never as a website host', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const redirectUri = 'x-https://claude.ai/api/mcp/auth_callback';
    const registered = await oauth.registerRaw({
      client_name: 'Claude',
      redirect_uris: [redirectUri],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const opened = await openSignInPage(gateway.gatewayUrl, { clientId, redirectUri, scope: 'ledger:read', fetch: oauth.send });
    let answer = await step(opened.jar, `${opened.interaction}/login`, { csrf: opened.csrf, key: ALICE.key, secret: ALICE.secret }, {}, oauth.send);
    expect(answer.status).toBe(303);
    answer = await step(opened.jar, opened.interaction, undefined, {}, oauth.send);
    const consent = await answer.text();
    expect(consent).toContain('<dt>Returns to</dt><dd><code>x-https://claude.ai/api/mcp/auth_callback</code></dd>');
    expect(consent).toContain('This returns to an application on this device that opens <code>x-https:</code> links, not to a website');
  });

  it('is taken without application_type, as MCP clients register (the client is registered native); refused under web, saying so', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const cursor = 'cursor://anysphere.cursor-retrieval/oauth/callback';
    for (const uris of [[cursor], ['com.example.app:/cb'], [cursor, 'http://127.0.0.1/cb', 'https://app.example/cb']]) {
      const registered = await oauth.registerRaw({ client_name: 'Cursor', redirect_uris: uris, token_endpoint_auth_method: 'none' });
      expect(registered.status, uris.join(' ')).toBe(201);
      const client = (await registered.json()) as { client_id: string; application_type: string; redirect_uris: string[] };
      expect(client).toMatchObject({ application_type: 'native', redirect_uris: uris });
      const opened = await openSignInPage(gateway.gatewayUrl, { clientId: client.client_id, redirectUri: uris[0], scope: 'ledger:read', fetch: oauth.send });
      expect(opened.page.status).toBe(200);
    }
    // Web URIs alone stay a web client.
    const web = await oauth.registerRaw({ redirect_uris: ['https://app.example/cb', 'http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' });
    expect(await web.json()).toMatchObject({ application_type: 'web' });
    const refused = await oauth.registerRaw({ redirect_uris: ['https://app.example/cb', cursor], application_type: 'web', token_endpoint_auth_method: 'none' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'invalid_redirect_uri',
      error_description:
        'redirect_uris item 2 has the private-use scheme cursor: (RFC 8252 §7.1), which only a native app receives: register with application_type native, or without application_type',
    });
    // What no native app may register stays refused without application_type too (RFC 8252 §8.1, OAuth 2.1 §7.5).
    for (const [uri, why] of [
      ['javascript:alert(1)//', 'must not use the javascript URI scheme'],
      ['data:text/html,x', 'must not use the data URI scheme'],
      ['file:///tmp/x', 'must not use the file URI scheme'],
    ]) {
      const answer = await oauth.registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(answer.status, uri).toBe(400);
      expect(await answer.json()).toEqual({ error: 'invalid_redirect_uri', error_description: `redirect_uris ${why}` });
    }
  });
});

describe('client metadata URLs the authorization server fetches (SSRF)', () => {
  const audit = new LogCapture();
  let gateway: InProcessGateway;
  let hits: string[];
  let listener: Server;
  let port: number;
  beforeAll(async () => {
    const many = { points: 1000, durationMs: 3_600_000 };
    gateway = await gatewayWith({}, { registrations: { perAddress: many, total: many } }, audit);
    hits = [];
    listener = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([REDIRECT_URI]));
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  it('refuses jwks_uri and sector_identifier_uri on loopback, private, link-local, unspecified or plain-http hosts with invalid_client_metadata naming the field, and fetches nothing', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const jwt = { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'private_key_jwt' };
    const hosts = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.10',
      '169.254.169.254',
      '[fd00::1]',
      '[fe80::1]',
      '0.0.0.0',
      '[::]',
      '[::ffff:127.0.0.1]',
      '2130706433',
      'metadata.localhost',
    ];
    const cases: [string, Record<string, unknown>][] = [
      ...hosts.flatMap((host): [string, Record<string, unknown>][] => [
        ['jwks_uri', { ...jwt, jwks_uri: `https://${host}/jwks` }],
        ['jwks_uri', { ...jwt, jwks_uri: `http://${host}/jwks` }],
        ['sector_identifier_uri', { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', sector_identifier_uri: `https://${host}/sector` }],
      ]),
      ['jwks_uri', { ...jwt, jwks_uri: 'http://keys.example/jwks' }],
    ];
    for (const [field, document] of cases) {
      const refused = await oauth.registerRaw(document);
      const label = JSON.stringify(document);
      expect(refused.status, label).toBe(400);
      const body = (await refused.json()) as { error: string; error_description: string };
      expect(body.error, label).toBe('invalid_client_metadata');
      expect(body.error_description, label).toMatch(new RegExp(`^${field} `));
    }
    expect(hits).toEqual([]);
    expect(authDecisionsOf(audit).at(-1)).toMatchObject({ endpoint: 'register', outcome: 'refused', reason: 'invalid_client_metadata' });
  });

  it('takes a jwks_uri on a public https host', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const accepted = await oauth.registerRaw({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://keys.example/jwks',
    });
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({ jwks_uri: 'https://keys.example/jwks' });
  });
});

describe('oauth.initialAccessToken (RFC 7591 §3)', () => {
  let gateway: InProcessGateway;
  const token = 'initial-access-token-0123456789-abcdef';
  beforeAll(async () => {
    gateway = await gatewayWith({ initialAccessToken: token });
  });
  afterAll(() => gateway?.close());

  it('refuses a registration without it or with another, and takes one with it', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const document = { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' };
    for (const headers of [{}, { authorization: 'Bearer not-the-token-0123456789-abcdef' }] as Record<string, string>[]) {
      const refused = await oauth.registerRaw(document, headers);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: 'invalid_token' });
    }
    expect((await oauth.registerRaw(document, { authorization: `Bearer ${token}` })).status).toBe(201);
  });
});

describe('a flood of registrations against the memory store', () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await gatewayWith(
      { memoryStoreBytes: 1024 * 1024 },
      { registrations: { perAddress: { points: 100_000, durationMs: 3_600_000 }, total: { points: 100_000, durationMs: 3_600_000 } } },
    );
  });
  afterAll(() => gateway?.close());

  it('evicts only unused registrations: revocations stick, and a client that signed in keeps working', async () => {
    const oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
    const honest = await oauth.register();
    const kept = await oauth.tokens(honest.client_id, ALICE);
    const revoked = await oauth.tokens(honest.client_id, ALICE);
    expect((await oauth.revoke(honest.client_id, String(revoked.body.access_token))).status).toBe(200);
    const revokedRefresh = await oauth.tokens(honest.client_id, ALICE);
    expect((await oauth.revoke(honest.client_id, String(revokedRefresh.body.refresh_token))).status).toBe(200);
    const unused = await oauth.register();
    // About 5 KiB each (near the 5,120 bytes of metadata a registration may carry): 240 of them are more than
    // the 1 MiB (the least allowed) the memory store keeps of unused registrations.
    for (let i = 0; i < 240; i++) await oauth.register({ client_name: `flood ${i} ${'x'.repeat(4_600)}` });
    // The first unused registration was evicted (the flood reached the bound) ...
    const authorize = await oauth.send(
      `${gateway.gatewayUrl}/oauth/authorize?client_id=${unused.client_id}&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&code_challenge=x&code_challenge_method=S256`,
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(400);
    expect(await authorize.text()).toContain('invalid_client');
    // ... but no revocation mark, grant or used client was.
    expect((await oauth.listTools(String(revoked.body.access_token))).status).toBe(401);
    expect((await oauth.refresh(honest.client_id, String(revokedRefresh.body.refresh_token))).body.error).toBe('invalid_grant');
    expect((await oauth.listTools(String(revokedRefresh.body.access_token))).status).toBe(401);
    expect(await oauth.listTools(String(kept.body.access_token))).toEqual({ status: 200, tools: ['read_ledger'] });
    const refreshed = await oauth.refresh(honest.client_id, String(kept.body.refresh_token));
    expect(refreshed.status).toBe(200);
    expect(await oauth.listTools(String(refreshed.body.access_token))).toEqual({ status: 200, tools: ['read_ledger'] });
    // 400 registrations of 4 KiB and three sign-ins one after another took 28 s at a load of 25 on 2 cores.
  }, 180_000);
});
