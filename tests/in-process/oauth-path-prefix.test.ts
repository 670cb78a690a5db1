/**
 * A gateway published under a path prefix (`publicUrl: http://host/gw`, a reverse proxy stripping `/gw`):
 * the authorization server's metadata answers at RFC 8414 §3's `/.well-known/oauth-authorization-server/gw`
 * and names endpoints under the prefix, the protected resource metadata answers at RFC 9728 §3.1's
 * `/.well-known/oauth-protected-resource/gw/mcp`, and a whole sign-in, token and MCP call works through
 * the prefixed URLs. The test's `proxy` plays the reverse proxy: `/gw/...` reaches the gateway without
 * the prefix, the host-root `/.well-known/...` as it is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { oauthClient } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
const origin = 'https://gw.example';
const base = `${origin}/gw`;

/** The reverse proxy in front of the gateway (TLS ends there: it says so in X-Forwarded-Proto). */
const proxy = (request: Request): Promise<Response> => {
  const url = new URL(request.url);
  if (url.pathname.startsWith('/gw/')) url.pathname = url.pathname.slice('/gw'.length);
  const forwarded = new Request(url, request);
  forwarded.headers.set('x-forwarded-proto', 'https');
  return gateway.fetch(forwarded);
};

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: ['ledger:read'] });
  gateway = inProcessGateway(
    {
      publicUrl: base,
      security: { allowedHosts: ['gw.example'] },
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-path-prefix', scopes: ['ledger:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    {
      fake: {
        tools: [
          { definition: { name: 'read_ledger', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } } } as Tool },
        ],
      },
    },
  );
  await gateway.runtime.startOAuth();
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

describe('a gateway under a path prefix', () => {
  it('serves RFC 8414 metadata at the well-known path with the issuer path inserted, naming endpoints under the prefix', async () => {
    const response = await proxy(new Request(`${origin}/.well-known/oauth-authorization-server/gw`));
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, string>;
    expect(metadata).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
    });
    // The OIDC name too, and the form under the prefix that a stripping proxy delivers as the bare path.
    expect((await proxy(new Request(`${origin}/.well-known/openid-configuration/gw`))).status).toBe(200);
    expect(((await (await proxy(new Request(`${base}/.well-known/openid-configuration`))).json()) as Record<string, string>).issuer).toBe(base);
  });

  it('serves RFC 9728 metadata at the well-known path with the resource path inserted', async () => {
    for (const path of ['/mcp', '/mcp/compact']) {
      const response = await proxy(new Request(`${origin}/.well-known/oauth-protected-resource/gw${path}`));
      expect(response.status, path).toBe(200);
      expect(await response.json()).toMatchObject({ resource: `${base}${path}`, authorization_servers: [base] });
    }
  });

  it('signs in, issues a token for the prefixed resource, and serves MCP with it', async () => {
    const oauth = oauthClient(base, proxy);
    const { client_id } = await oauth.register();
    const tokens = await oauth.tokens(client_id, { key: 'alice', secret: 'x', scope: 'ledger:read' });
    expect(tokens.status).toBe(200);
    expect(await oauth.listTools(String(tokens.body.access_token))).toEqual({ status: 200, tools: ['read_ledger'] });
    const refreshed = await oauth.refresh(client_id, String(tokens.body.refresh_token));
    expect(refreshed.status).toBe(200);
  });
});
