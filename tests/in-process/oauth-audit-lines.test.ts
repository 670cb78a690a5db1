/**
 * Who made a call with an OAuth access token, as the audit trail says it (config/README.md "Audit"),
 * through the real handler in process with the built-in authorization server: a token's tool_decision
 * and request_refused lines carry the account it was issued to (the `account` digest of its sign-in's
 * auth_decision lines), the client_id that holds it (`oauthClient`) and the digest of the key it signed
 * in with (`keyCredential`: the `credential` of that key's own requests); a key pair's lines carry none
 * of them. No line holds the key, its secret or the token.
 * And the server's own auth_decision lines say what happened: an authorization code presented again is
 * `authorization_code_reuse` (not a refresh token's reuse), counted with refresh reuse in
 * mcp_oauth_refresh_reuse_total; a revocation that revoked nothing (another client's access or refresh
 * token, a token the server does not know) still answers 200, as RFC 7009 §2.2 asks, but its line is
 * `refused` with `token_of_another_client` or `unknown_token`, and the token still works; a client
 * revoking its own token is `ok`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { inProcessOAuthLedger, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, oauthClient, redeemCode, signInFlow, type OAuthClient } from '../helpers/oauth-harness.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const SCOPES = ['ledger:read'];
const ALICE = { 'x-cpz-key': 'alice', 'x-cpz-secret': 'alice-secret-0123456789' };
const SIGN_IN = { key: ALICE['x-cpz-key'], secret: ALICE['x-cpz-secret'], scope: 'ledger:read' };
const audit = new LogCapture();
let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let oauth: OAuthClient;

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: SCOPES });
  gateway = await inProcessOAuthLedger(
    endpoint.url,
    { oauth: { tokenSecret: 'test-secret-0123456789abcdef-audit-holder' }, audit: { digestKey: 'audit-digest-key-0123456789abcdef' } },
    audit,
  );
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
    const signedIn = await oauth.tokens(clientId, SIGN_IN);
    expect(signedIn.status).toBe(200);
    const token = String(signedIn.body.access_token);
    const signIn = authDecisionsOf(audit).find((r) => r.endpoint === 'sign_in' && r.outcome === 'ok');
    expect(signIn?.account).toMatch(/^[0-9a-f]{64}$/);
    expect(signIn?.address).toBe('127.0.0.1');

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

const lastDecision = () => authDecisionsOf(audit).at(-1);
const reuses = async () => {
  const text = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
  return Number(/^mcp_oauth_refresh_reuse_total (\d+)$/m.exec(text)?.[1] ?? 0);
};

describe('auth_decision lines that say what happened', () => {
  it('an authorization code presented again: authorization_code_reuse, with its grant type', async () => {
    const clientId = (await oauth.register()).client_id;
    const flow = await signInFlow(gateway.gatewayUrl, { clientId, ...SIGN_IN, fetch: oauth.send });
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
    const issued = await oauth.tokens(owner, SIGN_IN);
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
