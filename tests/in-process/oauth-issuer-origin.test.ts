/**
 * The built-in authorization server writes every URL at its issuer's origin, whatever Host (or, with an
 * https issuer, X-Forwarded-Host and -Proto) a request carries: a loopback Host on another port or name
 * passes the Host check, and oidc-provider built its RFC 8414 endpoints from it (`Host: 127.0.0.1:1`
 * gave `authorization_endpoint http://127.0.0.1:1/oauth/authorize` beside the issuer on its own port).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';

let gateway: InProcessGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(config: DeepPartial<GatewayConfig> = {}): Promise<InProcessGateway> {
  gateway = inProcessGateway({
    ...config,
    oauth: { mode: 'builtin', tokenSecret: 'oauth-issuer-origin-token-secret-0123456789', scopes: ['a:read'] },
    upstreams: [{ url: 'http://127.0.0.1:9/mcp', health: { intervalMs: 0 } }],
  });
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  return gateway;
}

/** The RFC 8414 document as asked with `headers`: its issuer and every URL it names. */
async function discovery(g: InProcessGateway, headers: Record<string, string>) {
  const response = await g.fetch(new Request(`${g.gatewayUrl}/.well-known/oauth-authorization-server`, { headers }));
  expect(response.status).toBe(200);
  const document = (await response.json()) as Record<string, unknown>;
  const urls = Object.entries(document).filter(([name, value]) => typeof value === 'string' && (name.endsWith('_endpoint') || name.endsWith('_uri')));
  return { issuer: document.issuer as string, urls: Object.fromEntries(urls) as Record<string, string> };
}

describe("the authorization server's URLs", () => {
  it('are at the issuer origin whatever loopback Host a request names', async () => {
    const g = await start();
    const port = new URL(g.gatewayUrl).port;
    for (const host of ['127.0.0.1:1', `localhost:${port}`, `[::1]:${port}`, new URL(g.gatewayUrl).host]) {
      const { issuer, urls } = await discovery(g, { host });
      expect(issuer, host).toBe(g.gatewayUrl);
      expect(Object.keys(urls)).toEqual(expect.arrayContaining(['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri']));
      for (const [name, url] of Object.entries(urls)) expect(new URL(url).origin, `${host} ${name}`).toBe(g.gatewayUrl);
    }
  });

  it('are at an https issuer origin whatever X-Forwarded-Host and X-Forwarded-Proto a caller sends', async () => {
    const g = await start({ publicUrl: 'https://mcp.example.com', security: { allowedHosts: ['mcp.example.com'] } });
    const { issuer, urls } = await discovery(g, { host: 'mcp.example.com', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' });
    expect(issuer).toBe('https://mcp.example.com');
    for (const [name, url] of Object.entries(urls)) expect(new URL(url).origin, name).toBe('https://mcp.example.com');
  });
});
