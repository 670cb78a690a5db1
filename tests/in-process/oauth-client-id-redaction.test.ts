/**
 * A URL client_id (a client ID metadata document) is the caller's own text: when the authorization
 * server refuses it, the audit line and the log hold it without its user name, password or query
 * (obs/log.ts loggableUrl), as the console shows it; an opaque client_id is recorded as it is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { authDecisionsOf, authorizeUrl, pkce, REDIRECT_URI } from '../helpers/oauth-harness.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const TOOLS = [{ definition: { name: 'read_ledger', inputSchema: { type: 'object' } } as Tool }];

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
const audit = new LogCapture();
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ alice: ['ledger:read'] });
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-redaction', scopes: ['ledger:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: TOOLS }, audit },
  );
  await gateway.runtime.startOAuth(gateway.gatewayUrl);
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

describe('a refused URL client_id in the audit trail and the log', () => {
  it.each([
    ['user information', 'https://user:SECRETCIMD1@example.org/c', 'https://***@example.org/c'],
    // 127.0.0.1 is refused before any fetch (no loopback unless allowed): the query is all there is to hide.
    ['a query', 'https://127.0.0.1/c?token=SECRETCIMD2', 'https://127.0.0.1/c?…'],
  ])('keeps %s out', async (_what, clientId, recorded) => {
    const { challenge } = pkce();
    const url = authorizeUrl(gateway.gatewayUrl, {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'ledger:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${gateway.gatewayUrl}/mcp`,
    });
    const response = await gateway.fetch(new Request(url));
    expect(response.status).toBe(400);
    const line = authDecisionsOf(audit).find((r) => r.endpoint === 'authorize' && r.client === recorded);
    expect(line).toMatchObject({ outcome: 'refused', reason: 'invalid_client' });
    expect(audit.text).not.toMatch(/SECRETCIMD/);
    expect(gateway.logs.records('client ID metadata document refused').map((r) => r.clientId)).toContain(recorded);
    expect(gateway.logs.text).not.toMatch(/SECRETCIMD/);
  });
});
