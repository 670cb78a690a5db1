/**
 * Client ID metadata documents (a URL as client_id): fetched, checked and cached by the authorization
 * server; refused with invalid_client (and no redirect) when the document is wrong, too large or slow;
 * SSRF rules for the URL itself.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientMetadataError, createClientMetadataResolver } from '../../../gateway/auth/oauth/client-metadata.ts';
import { authorizeUrl, Jar, pkce, REDIRECT_URI, signInFlow, startOAuthHarness, step, tokenRequest, type OAuthHarness } from '../../helpers/oauth-harness.ts';

let h: OAuthHarness;
let documents: Server;
let docs: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  documents = createServer((req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    const self = `${docs}${req.url}`;
    const doc = {
      client_id: self,
      client_name: 'Metadata Document Client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    if (req.url === '/client.json')
      return void res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(JSON.stringify(doc));
    if (req.url === '/mismatch.json')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...doc, client_id: `${docs}/other.json` }));
    if (req.url === '/secret.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...doc, client_secret: 'x' }));
    if (req.url === '/large.json')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...doc, client_name: 'x'.repeat(10_000) }));
    if (req.url === '/loopback-jwks.json')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...doc, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${docs}/jwks` }));
    if (req.url === '/redirect.json') return void res.writeHead(302, { location: '/client.json' }).end();
    if (req.url === '/slow.json') return; // never answers
    res.writeHead(404).end();
  });
  documents.listen(0, '127.0.0.1');
  await once(documents, 'listening');
  docs = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  h = await startOAuthHarness({
    oauth: {
      tokenSecret: 'test-secret-0123456789abcdef-0123456789',
      scopes: ['accounts:read', 'positions:read'],
      clientMetadataDocuments: { allowLoopback: true, timeoutMs: 400 },
    },
  });
});
afterAll(async () => {
  await h?.close();
  documents?.closeAllConnections();
  documents?.close();
});

describe('client ID metadata documents', () => {
  it('signs a URL client_id in with the name from its document, fetched once', async () => {
    const clientId = `${docs}/client.json`;
    const flow = await signInFlow(h.url, { clientId, scope: 'accounts:read' });
    const tokens = await tokenRequest(h.url, {
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.pkce.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: `${h.url}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect(await h.oauth.resolveBearer(String(tokens.body.access_token), `${h.url}/mcp`)).toMatchObject({ kind: 'ok', clientId, scopes: ['accounts:read'] });
    await signInFlow(h.url, { clientId, scope: 'accounts:read' });
    expect(hits.get('/client.json')).toBe(1);
  });

  it.each([
    ['/mismatch.json', 'client_id does not match'],
    ['/secret.json', 'client_secret'],
    ['/large.json', 'exceeds 5120 bytes'],
    ['/redirect.json', 'HTTP 302'],
    ['/slow.json', 'exceeded 400 ms'],
    ['/missing.json', 'HTTP 404'],
    ['/loopback-jwks.json', 'jwks_uri must use https'],
  ])('refuses %s with invalid_client and no redirect', async (path, reason) => {
    const p = pkce();
    const response = await step(
      new Jar(),
      authorizeUrl(h.url, {
        client_id: `${docs}${path}`,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'accounts:read',
        resource: `${h.url}/mcp`,
        state: 's',
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const text = await response.text();
    expect(text).toContain('invalid_client');
    expect(text).toContain(reason);
  });
});

describe('client_id URL rules (SSRF, draft-ietf-oauth-client-id-metadata-document §3, §6)', () => {
  const strict = createClientMetadataResolver({ timeoutMs: 500, maxBytes: 5120, cacheTtlMs: 60_000, allowLoopback: false });
  it.each([
    ['http://client.example/c.json', 'must use https'],
    ['https://client.example', 'must have a path'],
    ['https://client.example/', 'must have a path'],
    ['https://user:pw@client.example/c.json', 'user information'],
    ['https://client.example/a/../c.json', 'dot segments'],
    ['https://127.0.0.1/c.json', 'not allowed'],
    ['https://10.1.2.3/c.json', 'not allowed'],
    ['https://[::1]/c.json', 'not allowed'],
    ['https://localhost/c.json', 'not allowed'],
    ['https://169.254.169.254/latest/meta-data.json', 'not allowed'],
  ])('refuses %s', async (url, reason) => {
    await expect(strict.resolve(url)).rejects.toThrow(ClientMetadataError);
    await expect(strict.resolve(url)).rejects.toThrow(reason);
  });

  // A name from /etc/hosts mapped to loopback (no DNS traffic): refused by the lookup hook, not by a name rule.
  const hostsName = readFileSync('/etc/hosts', 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
    .find(([ip, ...names]) => /^127\./.test(ip ?? '') && names.some((n) => n && !n.includes('localhost')))
    ?.slice(1)
    .find((n) => !n.includes('localhost'));
  it.skipIf(!hostsName)('refuses a name that resolves to a loopback address (checked on the address connected to)', async () => {
    await expect(strict.resolve(`https://${hostsName}:${new URL(docs).port}/client.json`)).rejects.toThrow('resolves to an address that is not allowed');
  });
});
