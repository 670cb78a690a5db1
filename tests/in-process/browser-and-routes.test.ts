/**
 * The paths outside the MCP endpoints, as an operator and a person with a browser meet them:
 * - every request to the built-in authorization server and the console is counted under a route label
 *   of its own (http_request_duration_seconds{route}), bounded (no uid, no made-up endpoint name), not `unmatched`;
 * - a browser opening `/` gets a page naming the MCP endpoints and the console (or how to turn it on);
 *   one opening an unknown console page, or the console while it is off, gets a page saying so;
 * - MCP clients, scripts (`Accept: *\/*`) and other paths keep the JSON-RPC 404.
 * In process, through the real app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { inProcessGateway, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN = 'admin-token-for-route-tests';
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** A gateway with the console on and the built-in authorization server started. */
async function consoleGateway(): Promise<InProcessGateway> {
  const started = inProcessGateway({ console: { adminToken: ADMIN } }, { fake: { tools: [] } });
  await started.runtime.startOAuth(started.gatewayUrl);
  return started;
}

let gateway: InProcessGateway;
let off: InProcessGateway;
beforeAll(async () => {
  gateway = await consoleGateway();
  const config = loadConfig({ env: {}, overrides: { listen: { port: 0 }, upstreams: [{ url: 'http://fake.upstream.invalid/mcp' }] } });
  delete config.console.adminToken;
  off = inProcessGateway(config);
});
afterAll(async () => {
  await gateway?.close();
  await off?.close();
});

const get = (g: InProcessGateway, path: string, headers: Record<string, string> = {}) => routedFetch(`${g.gatewayUrl}${path}`, { headers });

describe('route labels', () => {
  // A gateway of its own: the other tests' requests to paths that are not routes are counted as unmatched, rightly.
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = await consoleGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('name the authorization server and console routes, bounded, never unmatched', async () => {
    for (const path of [
      '/oauth/authorize?client_id=x',
      '/oauth/jwks',
      '/oauth/interaction/uid-4711/login',
      '/oauth/interaction/uid-4711',
      '/oauth/register/client-4711',
      '/oauth/made-up-4711',
      '/.well-known/oauth-authorization-server',
    ])
      await (await get(gateway, path)).arrayBuffer();
    await (await get(gateway, '/console/catalog', { authorization: `Bearer ${ADMIN}` })).arrayBuffer();
    const want = [
      '/oauth/authorize',
      '/oauth/jwks',
      '/oauth/interaction/{uid}/login',
      '/oauth/interaction/{uid}',
      '/oauth/register/{clientId}',
      '/oauth/{*rest}',
      '/.well-known/oauth-authorization-server',
      '/console/catalog',
    ];
    const routes = await waitFor('every request to be counted', async () => {
      const text = await (await get(gateway, '/metrics')).text();
      const labels = new Set([...text.matchAll(/^http_request_duration_seconds_count\{route="([^"]+)"/gm)].map((m) => m[1]!));
      return want.every((route) => labels.has(route)) && labels;
    });
    expect([...routes].filter((route) => /4711/.test(route))).toEqual([]);
    expect(routes.has('unmatched')).toBe(false);
  });
});

describe('a browser', () => {
  it('opening / gets a page naming the MCP endpoints and the console', async () => {
    const response = await get(gateway, '/', BROWSER);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toContain('<code>/mcp</code>');
    expect(page).toContain('<code>/mcp/compact</code>');
    expect(page).toContain('<a href="/console">/console</a>');
  });

  it('opening an unknown console page gets a page pointing to /console (after the admin check)', async () => {
    expect((await get(gateway, '/console/nope', BROWSER)).status).toBe(401);
    const response = await get(gateway, '/console/nope', { ...BROWSER, authorization: `Bearer ${ADMIN}` });
    expect(response.status).toBe(404);
    const page = await response.text();
    expect(page).toContain('Nothing is at <code>/console/nope</code>');
    expect(page).toContain('<a href="/console">/console</a>');
  });

  it('cannot frame any console answer, a refusal included: every one forbids framing and sniffing', async () => {
    const admin = { authorization: `Bearer ${ADMIN}` };
    const answers: [string, Promise<Response>][] = [
      ['200 page', get(gateway, '/console', { ...BROWSER, ...admin })],
      ['401 page', get(gateway, '/console', BROWSER)],
      ['401 asset', get(gateway, '/console/console.css')],
      ['404 page', get(gateway, '/console/nope', { ...BROWSER, ...admin })],
      ['403 form post', routedFetch(`${gateway.gatewayUrl}/console/credential`, { method: 'POST', headers: { ...admin, 'sec-fetch-site': 'cross-site' } })],
    ];
    for (const [what, pending] of answers) {
      const response = await pending;
      await response.arrayBuffer();
      expect(response.headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), what).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
    }
  });

  it('gets a page, not a JSON-RPC body, for a console form post refused at the edge for its origin, naming why', async () => {
    const response = await routedFetch(`${gateway.gatewayUrl}/console/credential`, {
      method: 'POST',
      headers: { ...BROWSER, authorization: `Bearer ${ADMIN}`, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'key=k&secret=s',
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const page = await response.text();
    expect(page).toMatch(/^<!doctype html>/u);
    expect(page).toContain('<p>Invalid Origin: evil.example</p>');
    // An MCP client refused for its origin keeps the JSON-RPC error.
    const mcp = await routedFetch(`${gateway.gatewayUrl}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(mcp.status).toBe(403);
    expect(((await mcp.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
  });

  it('is given an icon that needs no request by every console page, the 401 and the not-found ones too', async () => {
    const admin = { authorization: `Bearer ${ADMIN}` };
    for (const [path, headers] of [
      ['/console', { ...BROWSER, ...admin }],
      ['/console/catalog', { ...BROWSER, ...admin }],
      ['/console', BROWSER],
      ['/console/nope', { ...BROWSER, ...admin }],
      ['/', BROWSER],
    ] as const)
      expect(await (await get(gateway, path, headers)).text(), path).toContain('<link rel="icon" href="data:,">');
  });

  it('opening the console while it is off is told how to turn it on', async () => {
    for (const path of ['/console', '/console/catalog']) {
      const response = await get(off, path, BROWSER);
      expect(response.status, path).toBe(404);
      const page = await response.text();
      expect(page).toContain('The console is off');
      expect(page).toContain('<code>console.adminToken</code>');
      expect(page).toContain('<code>GATEWAY_CONSOLE_ADMIN_TOKEN</code>');
    }
    expect(await (await get(off, '/', BROWSER)).text()).toContain('The operator console is off');
  });
});

describe('everything else', () => {
  it('keeps the JSON-RPC 404: scripts, MCP spellings, other paths, other methods', async () => {
    const cases: [string, RequestInit][] = [
      ['/', { headers: { accept: '*/*' } }],
      ['/', { method: 'POST', headers: { ...BROWSER, 'content-type': 'application/json' }, body: '{}' }],
      ['/MCP', { headers: BROWSER }],
      ['/mcp/', { headers: BROWSER }],
      ['/nowhere', { headers: BROWSER }],
    ];
    for (const [path, init] of cases) {
      const response = await routedFetch(`${gateway.gatewayUrl}${path}`, init);
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.stringContaining('is not an endpoint') } });
    }
    const consoleOff = await get(off, '/console', { accept: 'application/json' });
    expect(consoleOff.status).toBe(404);
    expect(((await consoleOff.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
  });
});
