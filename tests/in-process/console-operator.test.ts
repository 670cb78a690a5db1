/**
 * The console's operator pages (issue 33) through the real handler, in process: OAuth clients and
 * grants with revocation (its audit line; the token refused at once; every way an attacker would try
 * the revoke form refused), the configuration redacted, scopes with the tools each unlocks, the
 * credential view naming whose view it is and explaining an audience mismatch, and the search
 * playground's hints. The same pages in Chromium: tests/e2e/ops/console-operator-browser.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { authDecisionsOf, oauthClient } from '../helpers/oauth-harness.ts';
import { LogCapture } from '../helpers/log-capture.ts';

const ADMIN = 'console-operator-admin-token-0123456789';
const TOKEN_SECRET = 'console-operator-token-secret-0123456789';
const tools = ['read_ledger', 'read_orders', 'buy_stock', 'get_time'].map((name) => ({
  definition: {
    name,
    description: name === 'buy_stock' ? 'Buying shares at the market price' : `${name.replace('_', ' ')}`,
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: name !== 'buy_stock' },
    ...(name === 'get_time'
      ? {}
      : { _meta: { 'ai.cpz/tool': { requiredScopes: [name === 'read_ledger' ? 'ledger:read' : 'orders:read'], category: 'trading' } } }),
  } as Tool,
}));

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let audit: LogCapture;
let client: ReturnType<typeof oauthClient>;
let clientId: string;
let token: string;

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ reader: ['ledger:read', 'orders:read'] });
});
// A gateway and an audit trail of each test's own: one test revokes the grant, another issues a token.
beforeEach(async () => {
  audit = new LogCapture();
  gateway = inProcessGateway(
    {
      scopes: { endpoint: `${endpoint.url}?key=platform-query-secret` },
      console: { adminToken: ADMIN },
      oauth: {
        mode: 'builtin',
        tokenSecret: TOKEN_SECRET,
        scopes: ['ledger:read', 'orders:read', 'unused:scope'],
        scopeDescriptions: { 'ledger:read': 'Read the ledger' },
      },
    },
    { fake: { tools }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  client = oauthClient(gateway.gatewayUrl, (r) => gateway.fetch(r));
  clientId = (await client.register({ client_name: 'Ledger app' })).client_id;
  await client.register({ client_name: 'Unused app' });
  const tokens = await client.tokens(clientId, { key: 'reader', secret: 'any', scope: 'ledger:read orders:read' });
  token = String(tokens.body.access_token);
});
afterEach(async () => {
  await gateway?.close();
});
afterAll(async () => {
  await endpoint?.close();
});

function request(path: string, init: RequestInit & { admin?: string | null } = {}): Promise<Response> {
  const { admin = ADMIN, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (admin !== null) headers.set('authorization', `Bearer ${admin}`);
  return gateway.fetch(new Request(`${gateway.gatewayUrl}${path}`, { ...rest, headers }));
}
const page = async (path: string) => {
  const response = await request(path);
  expect(response.status).toBe(200);
  return response.text();
};
const revoke = (grant: string, init: RequestInit & { admin?: string | null } = {}) =>
  request('/console/oauth/revoke', {
    method: 'POST',
    body: new URLSearchParams({ grant }),
    ...init,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...init.headers },
  });

describe('OAuth clients and grants', () => {
  it('lists both registered clients and the one live grant, with its account and scopes per endpoint', async () => {
    const html = await page('/console/oauth');
    expect(html).toContain('<small data-count="clients">2</small>');
    expect(html).toContain('<small data-count="grants">1</small>');
    expect(html).toContain('Ledger app');
    expect(html).toContain('Unused app');
    expect(html).toMatch(/<code>\/mcp<\/code> <span class="scope">ledger:read<\/span> <span class="scope">orders:read<\/span>/);
    expect(html).not.toContain(token);
  });

  it('refuses the revoke form without the admin token, from another origin, and without a grant id; revokes nothing then', async () => {
    const grant = /data-grant="([^"]+)"/.exec(await page('/console/oauth'))![1]!;
    expect((await revoke(grant, { admin: null })).status).toBe(401);
    expect((await revoke(grant, { admin: 'wrong' })).status).toBe(401);
    expect((await revoke(grant, { headers: { origin: 'http://evil.example' } })).status).toBe(403);
    for (const bad of ['', '../../x', 'a'.repeat(200)]) expect((await revoke(bad)).status).toBe(400);
    const unknown = await revoke('no-such-grant');
    expect(unknown.status).toBe(303);
    expect(unknown.headers.get('location')).toMatch(/^\/console\/oauth\?refused=none&seal=[\w-]{22}$/);
    expect((await client.listTools(token)).status).toBe(200);
    expect(authDecisionsOf(audit).filter((d) => d.endpoint === 'console_revoke')).toEqual([]);
  });

  it('revokes a grant: one audit line, the token refused at once, the grant gone from the page', async () => {
    const grant = /data-grant="([^"]+)"/.exec(await page('/console/oauth'))![1]!;
    const revoked = await revoke(grant);
    expect(revoked.status).toBe(303);
    const location = revoked.headers.get('location')!;
    expect(location).toMatch(/^\/console\/oauth\?revoked=1&seal=[\w-]{22}$/);
    const lines = authDecisionsOf(audit).filter((d) => d.endpoint === 'console_revoke');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'auth_decision', endpoint: 'console_revoke', outcome: 'ok', client: clientId });
    expect(String(lines[0]!.account)).toMatch(/^[0-9a-f]{64}$/);
    expect((await client.listTools(token)).status).toBe(401);
    const after = await page(location);
    expect(after).toContain('<small data-count="grants">0</small>');
    expect(after).toContain('The grant is revoked');
    // Unsealed, the same words are not shown (a link cannot make the console say a grant was revoked).
    expect(await page('/console/oauth?revoked=1')).not.toContain('The grant is revoked');
    expect((await revoke(grant)).headers.get('location')).toMatch(/^\/console\/oauth\?refused=none&seal=/);
  });
});

describe('configuration, scopes, credential view and search', () => {
  it('shows the configuration in force without a secret or a URL query string', async () => {
    const html = await page('/console/config');
    for (const secret of [ADMIN, TOKEN_SECRET, 'platform-query-secret']) expect(html).not.toContain(secret);
    expect(html).toContain('[redacted]');
    expect(html).toContain('&quot;keyHeader&quot;: &quot;x-cpz-key&quot;');
  });

  it('lists each scope with its description, whether it is offered, and the tools it unlocks', async () => {
    const html = await page('/console/scopes');
    const row = (scope: string) => new RegExp(`<tr data-scope="${scope}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
    expect(row('ledger:read')).toContain('Read the ledger');
    expect(row('ledger:read')).toContain('data-count="1"');
    expect(row('orders:read')).toMatch(/<code title="read">read_orders<\/code>[\s\S]*<code title="write">buy_stock<\/code>/);
    expect(row('unused:scope')).toContain('data-count="0"');
    expect(row('unused:scope')).toContain('no description');
    expect(html).toMatch(/Public tools <small>1<\/small>[\s\S]*<code>get_time<\/code>/);
  });

  it('names whose view it is, and explains that a token for /mcp is refused on /mcp/compact by its audience', async () => {
    const fresh = await client.tokens(clientId, { key: 'reader', secret: 'any', scope: 'ledger:read' });
    const bearer = String(fresh.body.access_token);
    const response = await request('/console/credential', {
      method: 'POST',
      body: new URLSearchParams({ key: '', secret: '', bearer }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const html = await response.text();
    expect(html).toMatch(/Whose view:<\/strong> An OAuth access token of account acct_[\w-]+, issued to client [\w-]+, with the scopes ledger:read\./);
    expect(html).toContain('This token was issued for /mcp (its audience');
    expect(html).toContain(`resource=${gateway.gatewayUrl}/mcp/compact`);
    expect(html).not.toContain(bearer);
    const keyed = await request('/console/credential', {
      method: 'POST',
      body: new URLSearchParams({ key: 'reader-key-id', secret: 'any' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const text = await keyed.text();
    expect(text).toContain('Whose view:</strong> The key read…id, checked with the scope sources.');
    expect(text).not.toContain('reader-key-id');
  });

  it('search: the words that matched (not stems), a hint on an unknown category, a clamped limit said', async () => {
    const buy = await page('/console/search?q=buy');
    expect(buy).toContain('<b>description</b> buying');
    const unknown = await page('/console/search?q=ledger&category=nope&limit=999');
    expect(unknown).toContain('No tool has the category &quot;nope&quot;: it matches nothing. Known categories: trading.');
    expect(unknown).toMatch(/The limit 999 is out of range \(1 to compact.maxSearchLimit, \d+\): showing \d+, as search_tools would\./);
    expect(unknown).toContain('No tool matched in the category <code>nope</code>.');
    const twice = await page('/console/search?q=buy&q=ledger');
    expect(twice).toContain('The field &quot;q&quot; was given more than once: the first value is used.');
    expect(twice).toContain('<b>description</b> buying');
  });
});
