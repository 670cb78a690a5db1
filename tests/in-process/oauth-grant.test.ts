/**
 * An OAuth token's grant through the real handler, in process (createRuntime + Runtime.startOAuth,
 * no socket for the gateway): the sign-in grants fewer scopes than the key holds; tools/list shows the
 * grant's tools only; a direct call of a tool outside the grant is refused as unknown without reaching
 * the upstream even under the default `policy.hiddenToolCalls: forward`, while the same key sent as
 * headers is still forwarded; the upstream sees the key, never the token. A private tools/list's `ttlMs`
 * is bounded by the token's expiry when that comes before the scope entry's and the catalogue's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { registerClient, redeemCode, signInFlow } from '../helpers/oauth-harness.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { READ_LEDGER } from '../fixtures/ledger-tools.ts';

const tools = [
  READ_LEDGER,
  {
    definition: {
      name: 'read_orders',
      description: 'reads orders',
      inputSchema: { type: 'object', properties: {} },
      _meta: { 'ai.cpz/tool': { requiredScopes: ['orders:read'] } },
    } as Tool,
  },
  { definition: { name: 'get_time', description: 'the time', inputSchema: { type: 'object', properties: {} } } as Tool },
];

/** Registers a client, signs in with `key` + `secret` granting `grant`, and redeems the code: the token response body. */
async function signedInToken(gateway: InProcessGateway, user: { key: string; secret: string; scope: string; grant: string[] }) {
  const base = gateway.gatewayUrl;
  const send = ((url: string | URL | Request, init: RequestInit = {}) => gateway.fetch(new Request(url, init))) as typeof fetch;
  const { client_id } = await registerClient(base, {}, send);
  const flow = await signInFlow(base, { clientId: client_id, ...user, fetch: send });
  const tokens = await redeemCode(base, flow, client_id, { fetch: send });
  return tokens.body;
}

/** The shortest access token the configuration allows (`oauth.accessTokenTtlSeconds`), and scope entries and a catalogue that outlive it. */
const TOKEN_TTL_S = 60;
const LONG_TTL_MS = 600_000;

/** The `ttlMs` of a 2026-07-28 tools/list sent with `credential` headers. */
async function listTtlMs(gateway: InProcessGateway, credential: Record<string, string>): Promise<unknown> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body) }));
  return ((await response.json()) as { result: { ttlMs?: unknown } }).result.ttlMs;
}

describe('an OAuth grant in process', () => {
  let endpoint: ScopeEndpoint;
  let gateway: InProcessGateway;
  let token: string;
  /** The token was issued between these two moments (epoch ms). */
  let issued: { after: number; before: number };
  beforeAll(async () => {
    endpoint = await startScopeEndpoint({ reader: ['ledger:read', 'orders:read'] });
    gateway = inProcessGateway(
      {
        scopes: { endpoint: endpoint.url, ttlMs: LONG_TTL_MS },
        oauth: {
          mode: 'builtin',
          tokenSecret: 'test-secret-0123456789abcdef-in-process',
          scopes: ['ledger:read', 'orders:read'],
          accessTokenTtlSeconds: TOKEN_TTL_S,
        },
      },
      { fake: { tools, toolsListHint: { ttlMs: LONG_TTL_MS, cacheScope: 'public' } } },
    );
    await gateway.runtime.startOAuth(gateway.gatewayUrl);
    const after = Date.now();
    const tokens = await signedInToken(gateway, { key: 'reader', secret: 'any', scope: 'ledger:read orders:read', grant: ['ledger:read'] });
    issued = { after, before: Date.now() };
    expect(tokens.scope).toBe('ledger:read');
    token = String(tokens.access_token);
  });
  afterAll(async () => {
    await gateway?.close();
    await endpoint?.close();
  });

  const connect = async (headers: Record<string, string>) => {
    const client = new Client({ name: 'oauth-grant', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(gateway.mcpUrl, { fetch: gateway.fetchWith(headers) }));
    return client;
  };

  it("lists the grant's tools only, refuses a tool outside it without contacting the upstream, and sends the key upstream, not the token", async () => {
    const client = await connect({ authorization: `Bearer ${token}` });
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['get_time', 'read_ledger']);
      const calls = () => gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call').length;
      const before = calls();
      await expect(client.callTool({ name: 'read_orders', arguments: {} })).rejects.toThrow(/Unknown tool: read_orders/);
      expect(calls()).toBe(before);
      await client.callTool({ name: 'read_ledger', arguments: {} });
      const last = gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call').at(-1)!;
      expect(last.headers['x-cpz-key']).toBe('reader');
      expect(last.headers.authorization).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("a private tools/list's ttlMs ends with the token, while the same key as headers keeps its scope entry's", async () => {
    const sent = Date.now();
    const withToken = await listTtlMs(gateway, { authorization: `Bearer ${token}` });
    const answered = Date.now();
    // exp = the issuing second (RFC 7519 NumericDate: whole seconds, rounded down) + the token's life.
    expect(withToken).toBeLessThanOrEqual(issued.before + TOKEN_TTL_S * 1000 - sent);
    expect(withToken).toBeGreaterThanOrEqual(issued.after - 1000 + TOKEN_TTL_S * 1000 - answered);
    const withKey = await listTtlMs(gateway, { 'x-cpz-key': 'reader', 'x-cpz-secret': 'any' });
    expect(withKey).toBeGreaterThan(TOKEN_TTL_S * 1000 * 2);
    expect(withKey).toBeLessThanOrEqual(LONG_TTL_MS);
  });

  it('the same key as headers keeps the configured rule (forward): the platform decides', async () => {
    const client = await connect({ 'x-cpz-key': 'reader', 'x-cpz-secret': 'any' });
    try {
      const before = gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call').length;
      await client.callTool({ name: 'read_orders', arguments: {} });
      expect(gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call').length).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('offers every supported scope the key holds to a request naming none (RFC 6749 §3.3 default), where oidc-provider alone answered access_denied', async () => {
    const tokens = await signedInToken(gateway, { key: 'reader', secret: 'any', scope: '', grant: ['ledger:read', 'orders:read'] });
    expect(tokens.scope).toBe('ledger:read orders:read');
    // A client registered with a scope (RFC 7591 §2) asks for that one: every supported scope would be invalid_scope.
    const base = gateway.gatewayUrl;
    const send = ((url: string | URL | Request, init: RequestInit = {}) => gateway.fetch(new Request(url, init))) as typeof fetch;
    const { client_id } = await registerClient(base, { scope: 'orders:read' }, send);
    const flow = await signInFlow(base, { clientId: client_id, key: 'reader', secret: 'any', scope: '', fetch: send });
    const narrow = await redeemCode(base, flow, client_id, { fetch: send });
    expect(narrow.body.scope).toBe('orders:read');
  });

  it('lists this authorization server in the RFC 9728 documents', async () => {
    const prm = (await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/.well-known/oauth-protected-resource/mcp/compact`))).json()) as Record<
      string,
      unknown
    >;
    expect(prm).toMatchObject({
      resource: `${gateway.gatewayUrl}/mcp/compact`,
      authorization_servers: [gateway.gatewayUrl],
      scopes_supported: ['ledger:read', 'orders:read'],
    });
  });
});

describe('signing in with a config API key (credentials.apiKeys, no scope endpoint)', () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = inProcessGateway(
      {
        credentials: { apiKeys: [{ name: 'reader', key: 'k_reader', secret: 'reader-secret-0123', scopes: ['ledger:read'] }] },
        oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-in-process', scopes: ['ledger:read', 'orders:read'] },
      },
      { fake: { tools } },
    );
    await gateway.runtime.startOAuth(gateway.gatewayUrl);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("issues a token holding the key's scopes, and its tools/list is the key's", async () => {
    const tokens = await signedInToken(gateway, { key: 'k_reader', secret: 'reader-secret-0123', scope: 'ledger:read', grant: ['ledger:read'] });
    expect(tokens.scope).toBe('ledger:read');
    const client = new Client({ name: 'oauth-api-key', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(gateway.mcpUrl, { fetch: gateway.fetchWith({ authorization: `Bearer ${tokens.access_token}` }) }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['get_time', 'read_ledger']);
    } finally {
      await client.close();
    }
  });

  it('refuses a wrong secret on the sign-in page', async () => {
    await expect(signedInToken(gateway, { key: 'k_reader', secret: 'not-the-secret', scope: 'ledger:read', grant: ['ledger:read'] })).rejects.toThrow(
      /sign-in answered 401/,
    );
  });
});
