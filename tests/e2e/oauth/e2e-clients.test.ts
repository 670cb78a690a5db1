/**
 * MCP authorization end to end, with real MCP clients' own OAuth support and a real browser: the
 * reference stack (platform + CPZAI upstream + gateway with the built-in authorization server), the v2
 * client (`@modelcontextprotocol/client`, 2026-07-28) and the v1 SDK (`@modelcontextprotocol/sdk`,
 * initialize era), on /mcp and /mcp/compact, registering by DCR and by a client ID metadata document
 * (served over https here, as both SDKs insist). Each run: 401 -> discovery -> registration -> sign-in
 * and consent in Chromium (one scope unticked) -> code -> tokens -> tools/list shows the granted scopes'
 * tools only -> a call works -> refresh -> revoke -> 401. Screenshots of the two pages go to docs/.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport, UnauthorizedError as V2Unauthorized } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth as v1Auth, UnauthorizedError as V1Unauthorized } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInWithBrowser } from '../../helpers/browser.ts';
import { DATA_KEY_TOOLS, DEMO_SECRETS } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const REDIRECT = 'http://127.0.0.1:8976/oauth/callback';
// The committed screenshots are rewritten only on request (UPDATE_SCREENSHOTS=1); otherwise they go to a scratch folder.
const docs = process.env.UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../../docs/', import.meta.url)) : mkdtempSync(join(tmpdir(), 'oauth-shots-'));
const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return process.env.CI === 'true';
  }
})();

/** An in-memory OAuthClientProvider (the same shape serves the v1 SDK and the v2 client). */
class MemoryProvider {
  authorizationUrl?: URL;
  private info?: Record<string, unknown>;
  private saved?: Record<string, unknown> & { access_token: string; refresh_token?: string };
  private verifier = '';
  private lastState = '';
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'E2E Assistant',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as never;
  }
  state() {
    return (this.lastState = `state-${Math.random().toString(36).slice(2)}`);
  }
  get expectedState() {
    return this.lastState;
  }
  clientInformation() {
    return this.info as never;
  }
  saveClientInformation(info: Record<string, unknown>) {
    this.info = info;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: never) {
    this.saved = tokens;
  }
  get accessToken() {
    return this.saved?.access_token ?? '';
  }
  get refreshToken() {
    return this.saved?.refresh_token ?? '';
  }
  get clientId() {
    return String(this.info?.client_id ?? '');
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

type Era = 'v2 (2026-07-28)' | 'v1 (initialize)';

interface Connected {
  names(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean }>;
  close(): Promise<void>;
}

/** Connects with the client's own OAuth handling; throws its UnauthorizedError when a sign-in is needed. */
async function connect(era: Era, url: string, provider: MemoryProvider): Promise<Connected> {
  if (era === 'v2 (2026-07-28)') {
    const client = new V2Client({ name: 'e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new V2Transport(new URL(url), { authProvider: provider as never }));
    return {
      names: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as { isError?: boolean },
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' });
  await client.connect(new V1Transport(new URL(url), { authProvider: provider as never }));
  return {
    names: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as { isError?: boolean },
    close: () => client.close(),
  };
}

/** Runs the first leg (401 -> discovery -> registration -> authorization URL), then the code exchange through the same transport. */
async function authorize(era: Era, url: string, provider: MemoryProvider, browser: Browser, screenshots?: { signIn: string; consent: string }): Promise<URL> {
  if (era === 'v2 (2026-07-28)') {
    const transport = new V2Transport(new URL(url), { authProvider: provider as never });
    const client = new V2Client({ name: 'e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(V2Unauthorized);
    const callback = await signInWithBrowser(browser, provider.authorizationUrl!.href, {
      key: 'cpz_demo_data',
      secret: 'demo-secret-data',
      untick: ['orders:read'],
      screenshots,
    });
    await transport.finishAuth(callback.searchParams);
    return callback;
  }
  const transport = new V1Transport(new URL(url), { authProvider: provider as never });
  const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' });
  await expect(client.connect(transport)).rejects.toBeInstanceOf(V1Unauthorized);
  const callback = await signInWithBrowser(browser, provider.authorizationUrl!.href, {
    key: 'cpz_demo_data',
    secret: 'demo-secret-data',
    untick: ['orders:read'],
    screenshots,
  });
  await transport.finishAuth(callback.searchParams.get('code')!);
  return callback;
}

describe.skipIf(!hasChromium || !hasOpenssl)('OAuth sign-in end to end with real MCP clients and Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let metadataServer: Server;
  let metadataBase: string;
  let screenshotsTaken = false;

  beforeAll(async () => {
    // A client ID metadata document needs an https URL (both SDKs refuse others): a self-signed
    // loopback certificate, trusted by the gateway through oauth.clientMetadataDocuments.caFile.
    const dir = mkdtempSync(join(tmpdir(), 'cimd-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    metadataServer = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
      const self = `${metadataBase}${req.url}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: self,
          client_name: 'E2E Assistant (metadata document)',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        }),
      );
    });
    metadataServer.listen(0, '127.0.0.1');
    await once(metadataServer, 'listening');
    metadataBase = `https://127.0.0.1:${(metadataServer.address() as AddressInfo).port}`;
    stack = await startStack({
      platformProxy: true,
      gateway: { oauth: { mode: 'builtin', clientMetadataDocuments: { allowLoopback: true, caFile: join(dir, 'cert.pem') } } },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    metadataServer?.closeAllConnections();
    metadataServer?.close();
  });

  const grantedTools = DATA_KEY_TOOLS.filter((t) => t !== 'list_orders' && t !== 'get_order');

  const runs: { era: Era; path: '/mcp' | '/mcp/compact'; registration: 'DCR' | 'metadata document' }[] = [
    { era: 'v2 (2026-07-28)', path: '/mcp', registration: 'DCR' },
    { era: 'v2 (2026-07-28)', path: '/mcp/compact', registration: 'metadata document' },
    { era: 'v1 (initialize)', path: '/mcp', registration: 'metadata document' },
    { era: 'v1 (initialize)', path: '/mcp/compact', registration: 'DCR' },
  ];

  it.each(runs)('$era on $path, registered by $registration', async ({ era, path, registration }) => {
    const url = `${stack.gatewayUrl}${path}`;
    const provider = new MemoryProvider(registration === 'metadata document' ? `${metadataBase}/clients/${era.slice(0, 2)}.json` : undefined);

    // 401 with the RFC 9728 pointer, whose document names the built-in authorization server.
    const unauthenticated = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toContain(`resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource${path}"`);
    const prm = (await (await fetch(`${stack.gatewayUrl}/.well-known/oauth-protected-resource${path}`)).json()) as Record<string, string[]>;
    expect(prm.authorization_servers).toEqual([stack.gatewayUrl]);

    const shots = screenshotsTaken ? undefined : { signIn: join(docs, 'oauth-sign-in.png'), consent: join(docs, 'oauth-consent.png') };
    screenshotsTaken = true;
    const callback = await authorize(era, url, provider, browser, shots);
    expect(callback.searchParams.get('state')).toBe(provider.expectedState);
    expect(callback.searchParams.get('iss')).toBe(stack.gatewayUrl);
    if (registration === 'metadata document') expect(provider.clientId).toBe(provider.clientMetadataUrl);
    else expect(provider.clientId).not.toMatch(/^https?:/);
    expect(provider.accessToken).not.toBe('');

    // The granted scopes' tools only: orders:read was unticked, so list_orders and get_order are gone.
    const first = provider.accessToken;
    const client = await connect(era, url, provider);
    try {
      const names = await client.names();
      if (path === '/mcp') expect(names).toEqual(grantedTools);
      else {
        expect(names).toEqual(expect.arrayContaining(['search_tools', 'call_tool', 'list_accounts', 'list_positions', 'get_market_data']));
        expect(names).not.toContain('list_orders');
      }
      expect((await client.call('list_accounts', {})).isError).toBeFalsy();
      // Outside the grant (the key itself holds orders:read): refused by the gateway, not forwarded.
      await expect(client.call('list_orders', {})).rejects.toThrow(/Unknown tool: list_orders/);
      if (path === '/mcp/compact') {
        const viaCallTool = await client.call('call_tool', { name: 'list_orders', arguments: {} }).then(
          (r) => ({ refused: r.isError === true, text: JSON.stringify(r) }),
          (e: Error) => ({ refused: true, text: e.message }),
        );
        expect(viaCallTool.refused).toBe(true);
        expect(viaCallTool.text).toMatch(/list_orders/);
      }
    } finally {
      await client.close();
    }

    // Refresh through the client library: a new, working access token; the refresh token rotated.
    const oldRefresh = provider.refreshToken;
    if (era === 'v1 (initialize)') expect(await v1Auth(provider as never, { serverUrl: url })).toBe('AUTHORIZED');
    else {
      const { auth: v2Auth } = await import('@modelcontextprotocol/client');
      expect(await v2Auth(provider as never, { serverUrl: url })).toBe('AUTHORIZED');
    }
    expect(provider.accessToken).not.toBe(first);
    expect(provider.refreshToken).not.toBe(oldRefresh);
    const refreshed = await connect(era, url, provider);
    expect(await refreshed.names()).toContain('list_accounts');
    await refreshed.close();

    // RFC 7009 revocation of the refresh token revokes the grant: the access token now gets 401 invalid_token.
    const revoke = await fetch(`${stack.gatewayUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: provider.refreshToken, token_type_hint: 'refresh_token', client_id: provider.clientId }),
    });
    expect(revoke.status).toBe(200);
    const after = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${provider.accessToken}`,
        'mcp-protocol-version': '2025-06-18',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a token for /mcp is refused on /mcp/compact, never reaches the platform, and no token or secret reaches a log line', async () => {
    const provider = new MemoryProvider();
    await authorize('v2 (2026-07-28)', `${stack.gatewayUrl}/mcp`, provider, browser);
    const before = stack.platformProxy!.received.length;
    const client = await connect('v2 (2026-07-28)', `${stack.gatewayUrl}/mcp`, provider);
    expect((await client.call('list_accounts', {})).isError).toBeFalsy();
    await client.close();
    // What the upstream sent the platform REST API for that call: the wrapped key and secret, no token.
    const upstreamCalls = stack.platformProxy!.received.slice(before);
    expect(upstreamCalls.length).toBeGreaterThan(0);
    for (const call of upstreamCalls) {
      expect(call.headers.authorization).toBeUndefined();
      expect(call.headers['x-cpz-key']).toBe('cpz_demo_data');
    }
    expect(JSON.stringify(stack.platformProxy!.received)).not.toContain(provider.accessToken);
    const elsewhere = await fetch(`${stack.gatewayUrl}/mcp/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${provider.accessToken}` },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    for (const secret of [provider.accessToken, provider.refreshToken, ...DEMO_SECRETS]) expect(stack.logs.text).not.toContain(secret);
  });
});
