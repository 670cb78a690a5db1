/**
 * The built-in authorization server's audit lines say what happened, through the real handler in
 * process: an authorization code presented again is `authorization_code_reuse` (not a refresh token's
 * reuse), counted with refresh reuse in mcp_oauth_refresh_reuse_total; a revocation that revoked nothing
 * (another client's access or refresh token, a token the server does not know) still answers 200, as
 * RFC 7009 §2.2 asks, but its line is `refused` with `token_of_another_client` or `unknown_token`, and
 * the token still works; a client revoking its own token is `ok`.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, oauthClient, redeemCode, signInFlow, type OAuthClient } from '../helpers/oauth-harness.ts';

const SCOPES = ['ledger:read'];
const ALICE = { key: 'alice', secret: 'alice-secret', scope: 'ledger:read' };
const audit = new LogCapture();
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: SCOPES });
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-audit-reasons', scopes: SCOPES },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    {
      fake: {
        tools: [
          { definition: { name: 'read_ledger', inputSchema: { type: 'object' }, _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } } } as Tool },
        ],
      },
      audit,
    },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
  oauth = oauthClient(gateway.gatewayUrl, gateway.fetch);
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

const lastDecision = () => authDecisionsOf(audit).at(-1);
const reuses = async () => {
  const text = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
  return Number(/^mcp_oauth_refresh_reuse_total (\d+)$/m.exec(text)?.[1] ?? 0);
};

describe('auth_decision lines that say what happened', () => {
  it('an authorization code presented again: authorization_code_reuse, with its grant type', async () => {
    const clientId = (await oauth.register()).client_id;
    const flow = await signInFlow(gateway.gatewayUrl, { clientId, ...ALICE, fetch: oauth.send });
    expect((await redeemCode(gateway.gatewayUrl, flow, clientId, { fetch: oauth.send })).status).toBe(200);
    const before = await reuses();
    const again = await redeemCode(gateway.gatewayUrl, flow, clientId, { fetch: oauth.send });
    expect(again.body.error).toBe('invalid_grant');
    expect(lastDecision()).toMatchObject({ endpoint: 'token', outcome: 'refused', reason: 'authorization_code_reuse', grantType: 'authorization_code' });
    expect(await reuses()).toBe(before + 1);
  });

  it("a revocation of another client's token or of an unknown one answers 200 and is logged as not revoked; the owner's is ok", async () => {
    const owner = (await oauth.register()).client_id;
    const other = (await oauth.register()).client_id;
    const issued = await oauth.tokens(owner, ALICE);
    const [access, refresh] = [String(issued.body.access_token), String(issued.body.refresh_token)];
    for (const token of [access, refresh]) {
      expect((await oauth.revoke(other, token)).status).toBe(200);
      expect(lastDecision()).toMatchObject({ endpoint: 'revoke', outcome: 'refused', reason: 'token_of_another_client', client: other });
    }
    expect(await oauth.listTools(access)).toMatchObject({ status: 200 });
    expect((await oauth.refresh(owner, refresh)).status).toBe(200);
    for (const token of ['not-a-token', `${access.slice(0, -4)}AAAA`]) {
      expect((await oauth.revoke(owner, token)).status).toBe(200);
      expect(lastDecision()).toMatchObject({ endpoint: 'revoke', outcome: 'refused', reason: 'unknown_token', client: owner });
    }
    expect((await oauth.revoke(owner, access)).status).toBe(200);
    expect(lastDecision()).toMatchObject({ endpoint: 'revoke', outcome: 'ok', client: owner });
    expect(lastDecision()).not.toHaveProperty('reason');
    expect(await oauth.listTools(access)).toEqual({ status: 401 });
  });
});
