/**
 * A request the built-in authorization server does not serve under /oauth (a method an endpoint does not take,
 * an endpoint that is off) gets an OAuth error body naming it, as the gateway's other refusals there do: 405 with
 * Allow for an endpoint served with other methods, else 404 (sign-in try-out: a bare text "Not Found").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = inProcessGateway(
    {
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-unrouted', scopes: ['a:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] } },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
});
afterAll(async () => {
  await gateway?.close();
});

const send = (method: string, path: string) =>
  gateway.fetch(
    new Request(`${gateway.gatewayUrl}${path}`, {
      method,
      ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b' } : {}),
    }),
  );

describe('the authorization server under /oauth, asked what it does not serve', () => {
  it.each([
    ['POST', '/oauth/authorize', 'GET'],
    ['GET', '/oauth/token', 'POST'],
    ['GET', '/oauth/register', 'POST'],
    ['GET', '/oauth/revoke', 'POST'],
    ['POST', '/oauth/jwks', 'GET'],
  ])('answers %s %s 405 with Allow %s and a JSON error naming both', async (method, path, allow) => {
    const response = await send(method, path);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: `${path} answers ${allow}, not ${method}` });
  });

  it.each([
    ['GET', '/oauth/userinfo'],
    ['POST', '/oauth/introspect'],
  ])('answers %s %s (an endpoint that is off) 404 with a JSON error naming the path', async (method, path) => {
    const response = await send(method, path);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error_description: string }).error_description).toContain(path);
  });

  it('still serves what it serves', async () => {
    expect((await send('GET', '/oauth/jwks')).status).toBe(200);
    expect((await send('POST', '/oauth/token')).status).toBe(400);
  });
});
