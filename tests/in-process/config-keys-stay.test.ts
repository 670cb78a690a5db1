/**
 * A key of `credentials.apiKeys` is the gateway's own credential: it is never sent upstream, whatever
 * `forwardCredentials` says (auth/credentials.ts `forwardedHeaders`; MCP security best practices, "Token
 * Passthrough"). An upstream sent one could act as that caller at the gateway (upstream try-out: with
 * `forwardCredentials` true by default, every upstream received the configured key pairs). A credential the
 * scope endpoint vouches for (the platform's own key) is still forwarded; a config key's requests carry
 * the upstream's static `headers` only; and `policy.hiddenToolCalls: forward` refuses a config key's call of
 * a tool it cannot see, since no upstream could tell who asks.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { GET_TIME, READ_LEDGER } from '../fixtures/ledger-tools.ts';

const ALICE = { name: 'alice', key: 'k_alice', secret: 'alice-secret-0123', scopes: ['ledger:read'] };
const ROBOT = { name: 'robot', token: 'robot-token-0123456789', scopes: [] as string[] };
const tools = [READ_LEDGER, GET_TIME];

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway | undefined;
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ platform_key: ['ledger:read'] });
});
afterAll(() => endpoint?.close());
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

function start(policy: { hiddenToolCalls?: 'forward' | 'refuse' } = {}, era: 'modern' | 'legacy' = 'modern'): InProcessGateway {
  gateway = inProcessGateway(
    {
      credentials: { apiKeys: [ALICE, ROBOT] },
      scopes: { endpoint: endpoint.url },
      upstreams: [{ headers: { 'x-service': 'gateway-service' } }],
      policy,
    },
    { fake: { tools, era } },
  );
  return gateway;
}

async function withClient<T>(headers: Record<string, string>, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'config-keys-stay', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(gateway!.mcpUrl, { fetch: gateway!.fetchWith(headers) }));
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

describe('credentials.apiKeys never go upstream', () => {
  // Both eras through the SDK client's transport here (in process); the gateway's own undici hop: tests/e2e/gateway/config-keys-stay-hop.test.ts.
  it.each(['modern', 'legacy'] as const)('a configured key pair and a configured token: the upstream (%s) sees only its static headers', async (era) => {
    start({}, era);
    await withClient({ 'x-cpz-key': ALICE.key, 'x-cpz-secret': ALICE.secret }, async (client) => {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_ledger');
      expect(await client.callTool({ name: 'read_ledger', arguments: {} })).toMatchObject({ content: [{ text: 'ok' }] });
    });
    await withClient({ authorization: `Bearer ${ROBOT.token}` }, async (client) => {
      expect(await client.callTool({ name: 'get_time', arguments: {} })).toMatchObject({ content: [{ text: 'ok' }] });
    });
    const received = gateway!.upstreams.fake!.received;
    expect(received.filter((r) => r.method === 'tools/call').map((r) => r.params.name)).toEqual(['read_ledger', 'get_time']);
    for (const r of received) {
      expect(r.headers['x-cpz-key']).toBeUndefined();
      expect(r.headers['x-cpz-secret']).toBeUndefined();
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['x-service']).toBe('gateway-service');
    }
    expect(JSON.stringify(received)).not.toMatch(/alice-secret|robot-token/);
    // Nothing at start claims they are forwarded.
    expect(gateway!.logs.records().filter((r) => /apiKeys credentials callers present are forwarded/.test(String(r.msg)))).toEqual([]);
  });

  it('a platform key the scope endpoint vouches for is still forwarded, beside the same configuration', async () => {
    start();
    await withClient({ authorization: 'Bearer platform_key' }, async (client) => {
      expect(await client.callTool({ name: 'read_ledger', arguments: {} })).toMatchObject({ content: [{ text: 'ok' }] });
    });
    const calls = gateway!.upstreams.fake!.received.filter((r) => r.method === 'tools/call');
    expect(calls.map((r) => r.headers.authorization)).toEqual(['Bearer platform_key']);
  });

  // Review: beside a platform key pair the scope endpoint vouched for, a configured token went upstream with it.
  it('a configured token beside a platform key pair is refused (two keys at once identify nobody), asking no one', async () => {
    start();
    const hits = endpoint.hits;
    const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'get_time', arguments: {} });
    const mixed = { ...headers, authorization: `Bearer ${ROBOT.token}`, 'x-cpz-key': 'platform_key', 'x-cpz-secret': 'platform-secret' };
    const response = await gateway!.fetch(new Request(gateway!.mcpUrl, { method: 'POST', headers: mixed, body: JSON.stringify(body) }));
    expect(response.status).toBe(401);
    expect(endpoint.hits).toBe(hits);
    expect(JSON.stringify(gateway!.upstreams.fake!.received)).not.toContain(ROBOT.token);
  });

  it('policy.hiddenToolCalls forward: a configured key’s call of a tool it cannot see is refused, never sent', async () => {
    start({ hiddenToolCalls: 'forward' });
    const outcome = await withClient({ authorization: `Bearer ${ROBOT.token}` }, (client) =>
      client.callTool({ name: 'read_ledger', arguments: {} }).catch((error: unknown) => error),
    );
    expect(outcome).toBeInstanceOf(ProtocolError);
    expect((outcome as ProtocolError).code).toBe(-32602);
    expect((outcome as ProtocolError).message).toContain('Unknown tool: read_ledger');
    expect(gateway!.upstreams.fake!.received.filter((r) => r.method === 'tools/call')).toEqual([]);
  });
});
