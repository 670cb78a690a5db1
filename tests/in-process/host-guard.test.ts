/**
 * One Host/Origin guard in front of every route (issue 28): on a loopback bind, a request naming a
 * foreign Host (what a DNS-rebinding page sends) is 403 `forbidden_host` on every route the gateway
 * serves: MCP, the RFC 9728 and RFC 8414 metadata, the built-in authorization server's endpoints and
 * pages, the console; only the probes (`/healthz`, `/readyz`, `/metrics` asked by no browser) answer any
 * Host. The authorization server's paths take a foreign Origin (browser-based clients call the token
 * endpoint from their own origin), the MCP endpoints do not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { AUTHORIZATION_SERVER_ROUTES, INTERACTION_PREFIX } from '../../gateway/auth/oauth/paths.ts';

let gateway: InProcessGateway;

beforeAll(async () => {
  gateway = inProcessGateway(
    {
      listen: { host: '127.0.0.1' },
      console: { adminToken: 'console-admin-token-for-tests' },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-host-guard', scopes: ['a:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
});
afterAll(async () => {
  await gateway?.close();
});

const REGISTRATION = JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1:1/cb'], token_endpoint_auth_method: 'none' });
const MCP_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

/** Every route the gateway serves, as a browser or client would ask it. */
const ROUTES: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
  { method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: MCP_BODY },
  { method: 'POST', path: '/mcp/compact', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: MCP_BODY },
  { method: 'GET', path: '/mcp' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' },
  { method: 'GET', path: '/.well-known/oauth-authorization-server' },
  { method: 'GET', path: '/.well-known/openid-configuration' },
  { method: 'GET', path: '/oauth/jwks' },
  { method: 'POST', path: '/oauth/register', headers: { 'content-type': 'application/json' }, body: REGISTRATION },
  { method: 'GET', path: '/oauth/authorize?client_id=x&response_type=code' },
  { method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x' },
  { method: 'POST', path: '/oauth/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x' },
  { method: 'GET', path: '/oauth/interaction/abc' },
  { method: 'GET', path: '/console', headers: { authorization: 'Bearer console-admin-token-for-tests' } },
  { method: 'GET', path: '/console/catalog', headers: { authorization: 'Bearer console-admin-token-for-tests' } },
  { method: 'OPTIONS', path: '/mcp', headers: { 'access-control-request-method': 'POST' } },
  { method: 'GET', path: '/nope' },
];

function send(route: (typeof ROUTES)[number], host: string, extra: Record<string, string> = {}): Promise<Response> {
  return gateway.fetch(
    new Request(`${gateway.gatewayUrl}${route.path}`, { method: route.method, headers: { ...route.headers, host, ...extra }, body: route.body }),
  );
}

describe('the Host guard on a loopback bind', () => {
  it('answers 403 forbidden_host to a foreign Host on every route but the probes', async () => {
    for (const route of ROUTES) {
      const response = await send(route, 'evil.example:3000');
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      expect(((await response.json()) as { error: { data: { kind: string } } }).error.data.kind, route.path).toBe('forbidden_host');
    }
  });

  it('serves the same routes to the gateway own loopback Host (so the 403s above are the guard, not the route)', async () => {
    const own = new URL(gateway.gatewayUrl).host;
    for (const route of ROUTES) {
      const response = await send(route, own);
      expect(response.status, `${route.method} ${route.path}`).not.toBe(403);
    }
  });

  it('leaves no route out: every path of the router (each of its methods) and every authorization server endpoint is 403 to a foreign Host', async () => {
    type Layer = { path: string; methods: string[] };
    const router = (gateway.runtime.app.middleware as { router?: { stack: Layer[] } }[]).find((m) => m.router)?.router;
    expect(router, 'the Koa app mounts one @koa/router').toBeDefined();
    // A concrete path for each pattern: a value for each parameter and wildcard.
    const concrete = (path: string) => path.replace(/:\w+/g, 'x').replace(/\{\*\w+\}/g, 'x/y');
    const probes = new Set(['/healthz', '/readyz', '/metrics']);
    const asked = [
      // (CONNECT and TRACE, which router.all lists, cannot be sent with fetch.)
      ...router!.stack.flatMap((layer) =>
        layer.methods.filter((method) => !['CONNECT', 'TRACE', 'TRACK'].includes(method)).map((method) => ({ method, path: concrete(layer.path) })),
      ),
      ...Object.values(AUTHORIZATION_SERVER_ROUTES).flatMap((path) => ['GET', 'POST'].map((method) => ({ method, path }))),
      ...['', '/login', '/consent', '/abort'].map((step) => ({ method: step ? 'POST' : 'GET', path: `${INTERACTION_PREFIX}uid${step}` })),
    ].filter((route) => !probes.has(route.path));
    // Every MCP endpoint, the RFC 9728 documents, the console pages and APIs are among the router's paths.
    expect(asked.length).toBeGreaterThan(40);
    for (const path of ['/mcp', '/mcp/compact', '/.well-known/oauth-protected-resource/mcp', '/console', '/console/api/pins'])
      expect(
        asked.some((r) => r.path === path),
        path,
      ).toBe(true);
    for (const route of asked) {
      const response = await send(route, 'evil.example:3000');
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      if (route.method !== 'HEAD') expect(((await response.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('forbidden_host');
    }
  });

  it('answers the probes whatever the Host, when no browser asks', async () => {
    for (const path of ['/healthz', '/metrics']) {
      expect((await gateway.fetch(new Request(`${gateway.gatewayUrl}${path}`, { headers: { host: 'evil.example:3000' } }))).status, path).toBe(200);
    }
  });

  it('takes a foreign Origin on the authorization server (browser-based clients), not on the MCP endpoints', async () => {
    const own = new URL(gateway.gatewayUrl).host;
    const origin = { origin: 'https://client.example' };
    expect((await send(ROUTES.find((r) => r.path === '/.well-known/oauth-authorization-server')!, own, origin)).status).toBe(200);
    const mcp = await send(ROUTES[0]!, own, origin);
    expect(mcp.status).toBe(403);
    expect(((await mcp.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('forbidden_origin');
  });
});

// A loopback bind behind a proxy on the same host that passes the public name on (try-out): the gateway's own
// name (publicUrl) is no foreign Host, and its own origin no foreign Origin; any other name still is.
describe('the Host guard on a loopback bind with publicUrl', () => {
  let behind: InProcessGateway;
  beforeAll(() => {
    behind = inProcessGateway(
      { listen: { host: '127.0.0.1' }, publicUrl: 'https://GW.example/', anonymous: true, upstreams: [{ health: { intervalMs: 0 } }] },
      { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] } },
    );
  });
  afterAll(async () => {
    await behind?.close();
  });
  const post = (host: string, extra: Record<string, string> = {}) =>
    behind.fetch(new Request(`${behind.gatewayUrl}/mcp`, { method: 'POST', headers: { ...ROUTES[0]!.headers, host, ...extra }, body: MCP_BODY }));

  it("takes publicUrl's host as Host and as Origin, and refuses any other", async () => {
    for (const host of ['gw.example', 'gw.example:443', 'GW.EXAMPLE']) expect((await post(host)).status, host).toBe(200);
    expect((await post('gw.example', { origin: 'https://gw.example' })).status).toBe(200);
    for (const host of ['evil.example', 'gw.example.evil.example']) {
      const refused = await post(host);
      expect(refused.status, host).toBe(403);
      expect(((await refused.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('forbidden_host');
    }
    const origin = await post('gw.example', { origin: 'https://evil.example' });
    expect(((await origin.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('forbidden_origin');
  });
});
