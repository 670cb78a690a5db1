/**
 * Resource-server mode against a real identity provider started here: a second oidc-provider issuing
 * RFC 9068 JWT access tokens (client credentials, resource indicators), whose signing keys rotate.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../../../config/load.ts';
import { createOAuth, type OAuth } from '../../../gateway/auth/oauth/index.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { decisionDeps } from '../../helpers/oauth-harness.ts';
import { createMetrics } from '../../../gateway/obs/metrics.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const GATEWAY = 'http://127.0.0.1:3999';
const CLIENT = { id: 'service-client', secret: 'idp-client-secret-for-tests-only' };

interface Idp {
  url: string;
  /** Serves a new provider instance whose JWKS is `keys` (the first one signs). */
  use(keys: JWK[]): void;
  token(options: { resource: string; scope: string }): Promise<string>;
  close(): Promise<void>;
}

async function privateJwk(kid: string): Promise<JWK & { kid: string }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
}

async function startIdp(): Promise<Idp> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    use(keys) {
      const provider = new Provider(url, {
        clients: [{ client_id: CLIENT.id, client_secret: CLIENT.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] }],
        jwks: { keys: keys as never[] },
        features: {
          devInteractions: { enabled: false },
          clientCredentials: { enabled: true },
          resourceIndicators: {
            enabled: true,
            getResourceServerInfo: async (_ctx, indicator) => ({
              scope: 'mcp.read mcp.trade portfolio',
              audience: indicator,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'ES256' } },
            }),
          },
        },
        clientDefaults: { id_token_signed_response_alg: 'ES256' },
      });
      handler = provider.callback() as typeof handler;
    },
    async token({ resource, scope }) {
      const response = await fetch(`${url}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let idp: Idp;
let oauth: OAuth;
let key1: JWK & { kid: string };
let scopesSupported: string[];
let makeOAuth: () => Promise<OAuth>;
const logs = new LogCapture();

beforeAll(async () => {
  idp = await startIdp();
  key1 = await privateJwk('key-1');
  idp.use([key1]);
  const config = loadConfig({
    env: { CPZ_SERVICE_KEY: 'svc-key', CPZ_SERVICE_SECRET: 'svc-secret' },
    overrides: {
      upstreams: [{ url: 'http://127.0.0.1:9/mcp' }],
      oauth: {
        mode: 'external',
        external: {
          issuer: idp.url,
          scopeMap: { 'mcp.read': ['accounts:read', 'positions:read'], 'mcp.trade': ['trade'] },
          credentialHeaders: { 'x-cpz-key': '${CPZ_SERVICE_KEY}', 'x-cpz-secret': '${CPZ_SERVICE_SECRET}' },
        },
      },
    },
  });
  scopesSupported = config.oauth.scopes;
  makeOAuth = async () =>
    (await createOAuth(config, {
      log: pino({ level: 'debug' }, logs),
      resourcePaths: ['/mcp'],
      lookupScopes: async () => ({ kind: 'unknown', reason: 'not_configured' }),
      ...decisionDeps(createMetrics(), pino({ level: 'silent' }), config.cache),
    }))!;
  oauth = await makeOAuth();
});
afterAll(async () => {
  await oauth?.close();
  await idp?.close();
});
afterEach(() => vi.useRealTimers());

describe('resource server for an external identity provider', () => {
  it("lists the identity provider as the authorization server, and its scopes (scopeMap's keys, then the unmapped gateway scopes) as supported", () => {
    const mapped = new Set(['accounts:read', 'positions:read', 'trade']);
    expect(oauth.metadata).toEqual({
      authorization_servers: [idp.url],
      scopes_supported: ['mcp.read', 'mcp.trade', ...scopesSupported.filter((s) => !mapped.has(s))],
    });
    expect(oauth.insufficientScope).toBe(false);
  });

  it('accepts a JWT access token for this endpoint: scopes mapped, the static service credential upstream (never the token)', async () => {
    const token = await idp.token({ resource: `${GATEWAY}/mcp`, scope: 'mcp.read portfolio' });
    const resolved = await oauth.resolveBearer(token, `${GATEWAY}/mcp`);
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    expect(resolved).toEqual({
      kind: 'ok',
      scopes: ['accounts:read', 'portfolio', 'positions:read'],
      credentialHeaders: { 'x-cpz-key': 'svc-key', 'x-cpz-secret': 'svc-secret' },
      subject: CLIENT.id,
      clientId: CLIENT.id,
      // Its calls count against the issuer's subject, not the service key forwarded for it.
      account: `oauth\0${idp.url}\0${CLIENT.id}`,
      // The token's exp: it bounds the ttlMs of the caller's private tools/list.
      expiresAt: exp * 1000,
    });
    expect(JSON.stringify(resolved)).not.toContain(token);
  });

  it('refuses a token issued for another resource (aud)', async () => {
    const token = await idp.token({ resource: `${GATEWAY}/mcp/compact`, scope: 'mcp.read' });
    expect(await oauth.resolveBearer(token, `${GATEWAY}/mcp`)).toEqual({
      kind: 'invalid',
      error: 'invalid_token',
      description: 'The access token was issued for another resource',
    });
    expect(await oauth.resolveBearer(token, `${GATEWAY}/mcp/compact`)).toMatchObject({ kind: 'ok' });
  });

  it('refuses an expired token, honouring the clock skew', async () => {
    const token = await idp.token({ resource: `${GATEWAY}/mcp`, scope: 'mcp.read' });
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((exp + 20) * 1000);
    expect(await oauth.resolveBearer(token, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'ok' });
    vi.setSystemTime((exp + 40) * 1000);
    expect(await oauth.resolveBearer(token, `${GATEWAY}/mcp`)).toEqual({ kind: 'invalid', error: 'invalid_token', description: 'The access token expired' });
  });

  it('refuses a token not valid yet (nbf beyond the skew), a tampered one, another issuer, and HS256/none', async () => {
    const signer = await import('jose').then((j) => j.importJWK(key1, 'ES256'));
    const now = Math.floor(Date.now() / 1000);
    const claims = { scope: 'mcp.read', client_id: CLIENT.id, sub: CLIENT.id };
    const sign = (extra: { nbf?: number; iss?: string }) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: key1.kid, typ: 'at+jwt' })
        .setIssuer(extra.iss ?? idp.url)
        .setAudience(`${GATEWAY}/mcp`)
        .setIssuedAt()
        .setExpirationTime(now + 300)
        .setNotBefore(extra.nbf ?? now)
        .sign(signer);
    expect(await oauth.resolveBearer(await sign({ nbf: now + 10 }), `${GATEWAY}/mcp`)).toMatchObject({ kind: 'ok' });
    expect(await oauth.resolveBearer(await sign({ nbf: now + 120 }), `${GATEWAY}/mcp`)).toEqual({
      kind: 'invalid',
      error: 'invalid_token',
      description: 'The access token is not valid yet',
    });
    expect(await oauth.resolveBearer(await sign({ iss: 'https://other-idp.example' }), `${GATEWAY}/mcp`)).toMatchObject({
      kind: 'invalid',
      error: 'invalid_token',
    });
    const good = await idp.token({ resource: `${GATEWAY}/mcp`, scope: 'mcp.read' });
    const [header, payload] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), scope: 'mcp.read mcp.trade' })).toString(
      'base64url',
    );
    expect(await oauth.resolveBearer(`${header}.${forged}.${good.split('.')[2]}`, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(idp.url)
      .setAudience(`${GATEWAY}/mcp`)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode('x'.repeat(32)));
    expect(await oauth.resolveBearer(hs, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    expect(await oauth.resolveBearer(none, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'invalid', error: 'invalid_token' });
  });

  it('follows a signing key rotation at the identity provider without a restart', async () => {
    // A fresh resolver: the other tests moved the clock, and with it the JWKS cache's idea of its last fetch.
    const oauth = await makeOAuth();
    try {
      const before = await idp.token({ resource: `${GATEWAY}/mcp`, scope: 'mcp.trade' });
      expect(await oauth.resolveBearer(before, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'ok', scopes: ['trade'] });
      // The JWKS was read by now (the first token's key).
      const read = Date.now();
      const key2 = await privateJwk('key-2');
      idp.use([key2, key1]);
      const after = await idp.token({ resource: `${GATEWAY}/mcp`, scope: 'mcp.trade' });
      expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString()).kid).toBe('key-2');
      // jose refetches the JWKS for an unknown kid once its cooldown (5 s here, jose's default 30 s) since the last read has passed.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(read + 3_000);
      expect(await oauth.resolveBearer(after, `${GATEWAY}/mcp`)).toEqual({
        kind: 'invalid',
        error: 'invalid_token',
        description: 'The access token is not valid here',
      });
      vi.setSystemTime(read + 6_000);
      expect(await oauth.resolveBearer(after, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'ok', scopes: ['trade'] });
      expect(await oauth.resolveBearer(before, `${GATEWAY}/mcp`)).toMatchObject({ kind: 'ok' });
    } finally {
      // The shared resolver knows key-1 only, and its JWKS cooldown is on the real clock: the tests after
      // this one (in any order) get tokens signed with key-1 again.
      idp.use([key1]);
      await oauth.close();
    }
  });

  it('logs no token', () => {
    expect(logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
    expect(logs.text).not.toContain('svc-secret');
  });
});

describe('the gateway in external mode, in front of the reference stack', () => {
  let stack: Stack;
  let strict: Stack;
  const external = (issuer: string, insufficientScope: boolean) => ({
    oauth: {
      mode: 'external' as const,
      external: {
        issuer,
        insufficientScope,
        scopeMap: { 'mcp.read': ['accounts:read', 'positions:read'], 'mcp.trade': ['trade'] },
        // The service credential (the full demo key) goes upstream; the token's scopes narrow what it may do.
        credentialHeaders: { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'demo-secret-full' },
      },
    },
  });
  beforeAll(async () => {
    stack = await startStack({ gateway: external(idp.url, false) });
    strict = await startStack({ gateway: external(idp.url, true) });
  });
  afterAll(async () => {
    await stack?.close();
    await strict?.close();
  });

  const rpc = async (base: string, token: string, body: Record<string, unknown>) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      json: JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]!),
    };
  };

  it("lists the identity provider in the RFC 9728 document and shows the token scopes' tools only", async () => {
    const prm = await (await fetch(`${stack.gatewayUrl}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm.authorization_servers).toEqual([idp.url]);
    const token = await idp.token({ resource: `${stack.gatewayUrl}/mcp`, scope: 'mcp.read' });
    const listed = await rpc(stack.gatewayUrl, token, { method: 'tools/list' });
    expect(listed.status).toBe(200);
    const names = listed.json.result.tools.map((t: { name: string }) => t.name).sort();
    // mcp.read maps to accounts:read + positions:read: their tools only, though the service key holds every scope.
    expect(names).toEqual(['list_accounts', 'list_positions']);
    const call = await rpc(stack.gatewayUrl, token, { method: 'tools/call', params: { name: 'list_accounts', arguments: {} } });
    expect(call.json.result.isError).toBeFalsy();
  });

  it("refuses a tool outside the token's scopes as unknown by default, and with 403 insufficient_scope + scope= when enabled", async () => {
    const quiet = await rpc(stack.gatewayUrl, await idp.token({ resource: `${stack.gatewayUrl}/mcp`, scope: 'mcp.read' }), {
      method: 'tools/call',
      params: { name: 'list_orders', arguments: {} },
    });
    expect(quiet.status).toBe(200);
    expect(quiet.json.error.code).toBe(-32602);
    expect(quiet.json.error.message).toMatch(/^Unknown tool: list_orders(\.|$)/);
    // Near-name hints name only tools the token's scopes reach.
    expect(quiet.json.error.message).not.toMatch(/get_order|place_order/);
    const loud = await rpc(strict.gatewayUrl, await idp.token({ resource: `${strict.gatewayUrl}/mcp`, scope: 'mcp.read' }), {
      method: 'tools/call',
      params: { name: 'list_orders', arguments: {} },
    });
    expect(loud.status).toBe(403);
    expect(loud.challenge).toBe(
      `Bearer resource_metadata="${strict.gatewayUrl}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="orders:read"`,
    );
  });

  it('refuses an identity provider token for another gateway with 401 invalid_token', async () => {
    const token = await idp.token({ resource: `${strict.gatewayUrl}/mcp`, scope: 'mcp.read' });
    const answer = await rpc(stack.gatewayUrl, token, { method: 'tools/list' });
    expect(answer.status).toBe(401);
    expect(answer.challenge).toContain('error="invalid_token"');
  });
});
