/**
 * The separate metrics listener (`metrics.port`, issue 13) applies the main listener's Host and Origin
 * rules: on a loopback bind, a browser's request naming another host (a DNS-rebinding page) or from a
 * foreign origin is refused with 403, while a scrape is served whatever Host it names (Prometheus
 * scrapes a pod by its IP); a Host that is no host (user information, a numeric form) is 400.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ upstream: { tools: [] }, gateway: { metrics: { port: await freePort() } } });
});
afterAll(async () => {
  await stack?.close();
});

/** GET with exact headers (fetch forbids setting Host). */
function get(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics listener', () => {
  it('refuses a browser naming a foreign Host and a foreign Origin with 403, and serves scrapes by any Host', async () => {
    const url = `${stack.gateway.metricsUrl}/metrics`;
    const port = new URL(url).port;
    expect(await get(url, { host: `rebind.example:${port}`, 'sec-fetch-site': 'same-origin' })).toBe(403);
    expect(await get(url, { host: `10.1.2.3:${port}` })).toBe(200);
    expect(await get(url, { host: `127.0.0.1:${port}`, origin: 'https://evil.example' })).toBe(403);
    expect(await get(url, { host: `127.0.0.1:${port}` })).toBe(200);
    expect(await get(url, { host: `localhost:${port}` })).toBe(200);
  });

  it('answers another method 405 with Allow, as the main listener does, and HEAD 200', async () => {
    const url = `${stack.gateway.metricsUrl}/metrics`;
    const post = await fetch(url, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('HEAD, GET');
    expect(await post.json()).toMatchObject({ error: { message: 'Method Not Allowed: /metrics answers HEAD, GET, not POST' } });
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers 400 to a Host that is no host, as the main listener does (edge.ts originGuard)', async () => {
    const url = `${stack.gateway.metricsUrl}/metrics`;
    const port = new URL(url).port;
    expect(await get(url, { host: `user:secret@127.0.0.1:${port}` })).toBe(400);
    expect(await get(url, { host: `2130706433:${port}` })).toBe(400);
  });
});
