/**
 * Behind a reverse proxy (`security.trustedProxies`), every per-address budget and the access log count
 * the client the proxy names in X-Forwarded-For, not the proxy: registrations, sign-in attempts and the
 * console's admin token of one user do not spend another's. A caller that is not a trusted proxy cannot
 * choose its address with the header. In process every request comes from 127.0.0.1 (runtime.ts), which
 * plays the proxy here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { REDIRECT_URI } from '../helpers/oauth-harness.ts';
import { waitFor } from '../helpers/wait.ts';

const CONSOLE_TOKEN = 'console-admin-token-trusted-proxies';
let gateway: InProcessGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(trustedProxies: string[]): Promise<InProcessGateway> {
  gateway = inProcessGateway(
    {
      security: { trustedProxies },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-trusted-proxies', scopes: ['a:read'] },
      rateLimits: {
        registrations: { perAddress: { points: 2, durationMs: 3_600_000 } },
        consoleSignIns: { perAddress: { points: 2, durationMs: 900_000, blockMs: 1_800_000 } },
      },
      console: { adminToken: CONSOLE_TOKEN },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  return gateway;
}

const register = (g: InProcessGateway, forwardedFor: string) =>
  g.fetch(
    new Request(`${g.gatewayUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ client_name: 'x', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    }),
  );
const consolePage = (g: InProcessGateway, forwardedFor: string, token: string) =>
  g.fetch(new Request(`${g.gatewayUrl}/console`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': forwardedFor } }));
const statuses = (answers: Response[]) => answers.map((a) => a.status);
/** The access line of the request to `path` (written when the response closes). */
async function accessLine(g: InProcessGateway, path: string): Promise<Record<string, unknown>> {
  const line = () => g.logs.records('request').find((r) => r.msg === 'request' && r.path === path);
  await waitFor(`the access line of ${path}`, () => line() !== undefined);
  return line()!;
}

describe('security.trustedProxies', () => {
  it('counts registrations per forwarded client: two users behind one proxy each have their own budget', async () => {
    const g = await start(['127.0.0.1']);
    const first = [];
    for (let i = 0; i < 3; i++) first.push(await register(g, '198.51.100.1'));
    expect(statuses(first)).toEqual([201, 201, 429]);
    expect(statuses([await register(g, '198.51.100.2'), await register(g, '198.51.100.2')])).toEqual([201, 201]);
    // What a caller writes left of the address the proxy appended is not its address.
    expect((await register(g, '192.0.2.50, 198.51.100.1')).status).toBe(429);
  });

  it('counts wrong admin tokens per forwarded client: one mistyping operator does not lock out another', async () => {
    const g = await start(['127.0.0.0/8']);
    expect(statuses([await consolePage(g, '198.51.100.1', 'wrong-1'), await consolePage(g, '198.51.100.1', 'wrong-2')])).toEqual([401, 401]);
    expect((await consolePage(g, '198.51.100.1', 'wrong-3')).status).toBe(429);
    expect((await consolePage(g, '198.51.100.2', CONSOLE_TOKEN)).status).toBe(200);
    expect((await consolePage(g, '198.51.100.2', 'wrong-4')).status).toBe(401);
  });

  it('counts an IPv6 client by its /64, however the address is written', async () => {
    const g = await start(['127.0.0.1']);
    // Two addresses of one /64 (a host is handed a whole /64), the second written out in full.
    expect(statuses([await register(g, '2001:db8:aaaa::1'), await register(g, '2001:db8:aaaa:0:1::9')])).toEqual([201, 201]);
    expect((await register(g, '2001:DB8:AAAA:0:0:0:0:1')).status).toBe(429);
    // Another /64 is another client.
    expect((await register(g, '2001:db8:aaab::1')).status).toBe(201);
  });

  it('writes the client address in the access line', async () => {
    const g = await start(['127.0.0.1']);
    await (await g.fetch(new Request(`${g.gatewayUrl}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9' } }))).text();
    const post = { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.10' }, body: '{}' };
    await (await g.fetch(new Request(`${g.gatewayUrl}/mcp`, post))).text();
    expect(await accessLine(g, '/healthz')).toMatchObject({ client: '203.0.113.9' });
    // The MCP POST, served outside Koa, is counted under the same address rule.
    expect(await accessLine(g, '/mcp')).toMatchObject({ client: '203.0.113.10' });
  });

  for (const [name, trusted] of [
    ['unset', []],
    ['naming other proxies', ['10.0.0.0/8']],
  ] as const) {
    it(`leaves a direct caller's X-Forwarded-For without effect when ${name}`, async () => {
      const g = await start([...trusted]);
      const answers = [];
      // Each registration claims another address; all are the caller's own (127.0.0.1).
      for (let i = 0; i < 3; i++) answers.push(await register(g, `198.51.100.${i + 1}`));
      expect(statuses(answers)).toEqual([201, 201, 429]);
      await (await g.fetch(new Request(`${g.gatewayUrl}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9' } }))).text();
      expect(await accessLine(g, '/healthz')).toMatchObject({ client: '127.0.0.1' });
    });
  }
});
