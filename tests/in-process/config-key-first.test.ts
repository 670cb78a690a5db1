/**
 * A key id of `credentials.apiKeys` is the config's: presented with another secret, it is refused as
 * `wrong_secret` without asking the scope endpoint, so a mistyped secret of a configured key never leaves
 * the gateway (operator try-out: the near miss reached the platform, audited `refused_by_scope_endpoint`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const OPS = { 'x-cpz-key': 'ops_key', 'x-cpz-secret': 'ops-secret-value-xyz' };
const PLATFORM = { 'x-cpz-key': 'platform_key', 'x-cpz-secret': 'platform-secret' };

let scopes: ScopeEndpoint;
let gateway: InProcessGateway;

beforeAll(async () => {
  // The endpoint would vouch for ops_key with any secret: only the gateway's own table can refuse the near miss.
  scopes = await startScopeEndpoint({ ops_key: ['profile:read'], platform_key: ['profile:read'] });
  gateway = inProcessGateway({
    scopes: { endpoint: scopes.url },
    credentials: { apiKeys: [{ name: 'ops', key: OPS['x-cpz-key'], secret: OPS['x-cpz-secret'], scopes: ['profile:read'] }] },
  });
});
afterAll(async () => {
  await gateway?.close();
  await scopes?.close();
});

async function list(credential: Record<string, string>): Promise<number> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  const { 'x-cpz-key': _key, 'x-cpz-secret': _secret, ...rest } = headers;
  const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...rest, ...credential }, body: JSON.stringify(body) }));
  await response.body?.cancel();
  return response.status;
}

describe('a configured key with a wrong secret', () => {
  it('is refused without asking the scope endpoint; its right secret needs no lookup either, and another key is looked up', async () => {
    const before = scopes.hits;
    expect(await list(OPS)).toBe(200);
    expect(await list({ ...OPS, 'x-cpz-secret': 'ops-secret-value-xy' })).toBe(401);
    // The right pair beside a bearer of another key: two keys at once identify nobody, and the endpoint is not asked either.
    expect(await list({ ...OPS, authorization: 'Bearer platform_key' })).toBe(401);
    expect(scopes.hits).toBe(before);
    expect(await list(PLATFORM)).toBe(200);
    expect(scopes.hits).toBe(before + 1);
  });
});
