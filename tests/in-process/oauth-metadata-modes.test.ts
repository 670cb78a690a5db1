/**
 * OAuth metadata by `oauth.mode` (issue 33), through the real handler in process: the 401 challenge of
 * both MCP endpoints and the RFC 9728 documents, one case per mode. Where OAuth is on offer (builtin,
 * external, or `authorizationServers` with `off`) the challenge points at the metadata and the document
 * names the authorization server; with `off` and no authorization server there is no document (404) and
 * the challenge names a realm only, so an OAuth-capable client does not start a flow that cannot work.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY, rpc } from '../helpers/raw-mcp.ts';

const TOKEN_SECRET = 'oauth-metadata-modes-token-secret-0123456789';
const IDP = 'https://idp.example.com/realms/mcp';
const PATHS = ['/mcp', '/mcp/compact'] as const;
const DOCUMENTS = ['/.well-known/oauth-protected-resource', ...PATHS.map((p) => `/.well-known/oauth-protected-resource${p}`)];

let gateway: InProcessGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(config: DeepPartial<GatewayConfig>): Promise<InProcessGateway> {
  // A config API key is the scope source, so a request without a credential is refused at the edge.
  gateway = inProcessGateway({
    ...config,
    credentials: { apiKeys: [{ name: 'only', token: 'oauth-metadata-modes-key', scopes: [] }] },
    upstreams: [{ url: 'http://127.0.0.1:9/mcp', health: { intervalMs: 0 } }],
  });
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  return gateway;
}

/** The challenge of an MCP POST without a credential, and what each metadata path answers. */
async function observe(g: InProcessGateway) {
  const challenges = await Promise.all(
    PATHS.map(async (path) => {
      const { headers, body } = rpc('modern', 1, 'tools/list');
      for (const name of Object.keys(FULL_KEY)) delete headers[name];
      const response = await g.fetch(new Request(`${g.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
      expect(response.status).toBe(401);
      await response.body?.cancel();
      return response.headers.get('www-authenticate');
    }),
  );
  const documents = await Promise.all(
    DOCUMENTS.map(async (path) => {
      const response = await g.fetch(new Request(`${g.gatewayUrl}${path}`));
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    }),
  );
  return { challenges, documents };
}

describe('oauth.mode and the OAuth metadata', () => {
  it('off: no RFC 9728 document (404 naming the endpoints), a challenge with a realm and no resource_metadata', async () => {
    const { challenges, documents } = await observe(await start({ oauth: { mode: 'off' }, authorizationServers: [] }));
    expect(challenges).toEqual(['Bearer realm="MCP catalog gateway"', 'Bearer realm="MCP catalog gateway"']);
    for (const document of documents) {
      expect(document.status).toBe(404);
      expect((document.body.error as { message: string }).message).toMatch(/^Not Found: .* is not an endpoint of this server/);
    }
  });

  it('off with authorizationServers: the documents name them and the challenge points at them', async () => {
    const g = await start({ oauth: { mode: 'off' }, authorizationServers: [IDP] });
    const { challenges, documents } = await observe(g);
    expect(challenges).toEqual(PATHS.map((p) => `Bearer resource_metadata="${g.gatewayUrl}/.well-known/oauth-protected-resource${p}"`));
    expect(documents.map((d) => [d.status, d.body.authorization_servers])).toEqual(DOCUMENTS.map(() => [200, [IDP]]));
  });

  it('builtin: the documents name the gateway itself, with its scopes', async () => {
    const g = await start({ oauth: { mode: 'builtin', tokenSecret: TOKEN_SECRET }, authorizationServers: [] });
    const { challenges, documents } = await observe(g);
    expect(challenges).toEqual(PATHS.map((p) => `Bearer resource_metadata="${g.gatewayUrl}/.well-known/oauth-protected-resource${p}"`));
    for (const document of documents) {
      expect(document.status).toBe(200);
      expect(document.body.authorization_servers).toEqual([g.gatewayUrl]);
      expect(document.body.scopes_supported).toContain('accounts:read');
    }
  });

  it('builtin with an external issuer left in the configuration: served as builtin, and a warning says the issuer is not used', async () => {
    const g = await start({ oauth: { mode: 'builtin', tokenSecret: TOKEN_SECRET, external: { issuer: IDP } }, authorizationServers: [] });
    const { documents } = await observe(g);
    expect(documents[0]!.body.authorization_servers).toEqual([g.gatewayUrl]);
    expect(g.logs.records('oauth.external.issuer is set but oauth.mode is builtin')).toHaveLength(1);
  });

  it("external: each endpoint's document names the identity provider; the origin has none, since no token for it is accepted", async () => {
    const g = await start({ oauth: { mode: 'external', external: { issuer: IDP } }, authorizationServers: [] });
    const { challenges, documents } = await observe(g);
    expect(challenges).toEqual(PATHS.map((p) => `Bearer resource_metadata="${g.gatewayUrl}/.well-known/oauth-protected-resource${p}"`));
    expect(documents.map((d) => [d.status, d.body.authorization_servers, d.body.resource])).toEqual([
      [404, undefined, undefined],
      [200, [IDP], `${g.gatewayUrl}/mcp`],
      [200, [IDP], `${g.gatewayUrl}/mcp/compact`],
    ]);
    expect((documents[0]!.body.error as { message: string }).message).toMatch(
      /^Not Found: \/\.well-known\/oauth-protected-resource is not an endpoint of this server/,
    );
  });
});
