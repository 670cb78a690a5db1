/**
 * The hop .ci/conformance.sh puts between the conformance suite and the gateway must add the demo
 * credential and change nothing else the gateway judges (Host, Origin, the caller's own credential).
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCredentialProxy } from '../../../upstream/conformance-fixture/credential-proxy.ts';

const echo = createServer((req, res) => {
  res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
});
let proxy: Awaited<ReturnType<typeof startCredentialProxy>>;

beforeAll(async () => {
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const { port } = echo.address() as AddressInfo;
  proxy = await startCredentialProxy({ target: `http://127.0.0.1:${port}`, inject: { 'x-cpz-key': 'k', 'x-cpz-secret': 's' } });
});
afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** One request through the proxy with exact headers (node:http lets a test set Host). */
function send(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: { method: string; url: string; headers: Record<string, string> } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${proxy.url}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('credential proxy', () => {
  it('adds the credential and keeps method, path, Host, Origin and the status/headers of the answer', async () => {
    const answer = await send('/mcp/compact?x=1', { host: 'evil.example:1234', origin: 'http://evil.example', 'content-type': 'application/json' });
    expect(answer.status).toBe(201);
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(answer.body.method).toBe('POST');
    expect(answer.body.url).toBe('/mcp/compact?x=1');
    expect(answer.body.headers).toMatchObject({ host: 'evil.example:1234', origin: 'http://evil.example', 'x-cpz-key': 'k', 'x-cpz-secret': 's' });
  });

  it('leaves a request that brings its own credential alone', async () => {
    const bearer = await send('/mcp', { authorization: 'Bearer mine' });
    expect(bearer.body.headers['x-cpz-key']).toBeUndefined();
    const keyed = await send('/mcp', { 'x-cpz-key': 'mine' });
    expect(keyed.body.headers['x-cpz-key']).toBe('mine');
    expect(keyed.body.headers['x-cpz-secret']).toBeUndefined();
  });
});
