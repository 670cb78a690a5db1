/**
 * Who made a call with an OAuth access token, as the audit trail says it (config/README.md "Audit"),
 * through the real handler in process with the built-in authorization server: a token's tool_decision
 * and request_refused lines carry the account it was issued to (the `account` digest of its sign-in's
 * auth_decision lines), the client_id that holds it (`oauthClient`) and the digest of the key it signed
 * in with (`keyCredential`: the `credential` of that key's own requests); a key pair's lines carry none
 * of them. No line holds the key, its secret or the token.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, oauthClient, type OAuthClient } from '../helpers/oauth-harness.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const SCOPES = ['ledger:read'];
const ALICE = { 'x-cpz-key': 'alice', 'x-cpz-secret': 'alice-secret-0123456789' };
const audit = new LogCapture();
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: SCOPES });
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-audit-holder', scopes: SCOPES },
      audit: { digestKey: 'audit-digest-key-0123456789abcdef' },
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

const lines = () => audit.lines.map((l) => JSON.parse(l) as Record<string, unknown>);

async function call(credential: Record<string, string>, requestId: string, body?: string): Promise<number> {
  const request = rpc('modern', 1, 'tools/call', { name: 'read_ledger', arguments: {} });
  const headers = { ...request.headers, 'x-cpz-key': '', 'x-cpz-secret': '', ...credential, 'x-request-id': requestId };
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name as keyof typeof headers];
  const response = await gateway.fetch(new Request(`${gateway.gatewayUrl}/mcp`, { method: 'POST', headers, body: body ?? JSON.stringify(request.body) }));
  await response.text();
  return response.status;
}

describe('audit lines of an OAuth token caller', () => {
  it('name the account of its sign-in, its client_id and the key it signed in with; a key pair caller has none of them', async () => {
    const clientId = (await oauth.register()).client_id;
    const signedIn = await oauth.tokens(clientId, { key: ALICE['x-cpz-key'], secret: ALICE['x-cpz-secret'], scope: 'ledger:read' });
    expect(signedIn.status).toBe(200);
    const token = String(signedIn.body.access_token);
    const signIn = authDecisionsOf(audit).find((r) => r.endpoint === 'sign_in' && r.outcome === 'ok');
    expect(signIn?.account).toMatch(/^[0-9a-f]{64}$/);

    expect(await call({ authorization: `Bearer ${token}` }, 'by-token')).toBe(200);
    expect(await call(ALICE, 'by-key')).toBe(200);
    expect(await call({ authorization: `Bearer ${token}` }, 'by-token-refused', '{"jsonrpc":"2.0","id":1,"method":')).toBe(400);

    const byToken = lines().find((r) => r.requestId === 'by-token');
    const byKey = lines().find((r) => r.requestId === 'by-key');
    const refused = lines().find((r) => r.requestId === 'by-token-refused');
    expect(byToken).toMatchObject({ event: 'tool_decision', tool: 'read_ledger', outcome: 'ok', account: signIn!.account, oauthClient: clientId });
    expect(byKey).toMatchObject({ event: 'tool_decision', tool: 'read_ledger', outcome: 'ok' });
    for (const line of [byToken, byKey]) expect(line!.address).toMatch(/^[0-9a-f.:]+$/);
    // The token's credential digest covers its grant; keyCredential is the key's own.
    expect(byToken!.credential).not.toBe(byKey!.credential);
    expect(byToken!.keyCredential).toBe(byKey!.credential);
    expect(byKey).not.toHaveProperty('account');
    expect(byKey).not.toHaveProperty('oauthClient');
    expect(byKey).not.toHaveProperty('keyCredential');
    expect(refused).toMatchObject({
      event: 'request_refused',
      outcome: 'invalid_request',
      account: signIn!.account,
      oauthClient: clientId,
      keyCredential: byKey!.credential,
    });
    for (const secret of [ALICE['x-cpz-secret'], token, String(signedIn.body.refresh_token)]) expect(audit.text).not.toContain(secret);
  });
});
