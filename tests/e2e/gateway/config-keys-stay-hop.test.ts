/**
 * A key of `credentials.apiKeys` is never sent upstream (auth/credentials.ts `forwardedHeaders`), on the
 * gateway's own undici hop too: a 2026-07-28 HTTP upstream reached over the network gets tools/call there
 * (upstream/hop-routing.ts), which in-process tests never reach (they hand the SDK client a transport).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV2 } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { GET_TIME } from '../../fixtures/ledger-tools.ts';

const ALICE = { name: 'alice', key: 'k_alice', secret: 'alice-secret-0123', scopes: [] as string[] };
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    upstream: { tools: [GET_TIME] },
    gateway: { credentials: { apiKeys: [ALICE] }, upstreams: [{ headers: { 'x-service': 'svc' } }] },
  });
});
afterAll(() => stack?.close());

describe('credentials.apiKeys over the network hop', () => {
  it('a configured key pair’s tools/call reaches the upstream with its static headers only', async () => {
    const client = await connectV2(stack.mcpUrl, { 'x-cpz-key': ALICE.key, 'x-cpz-secret': ALICE.secret });
    try {
      expect(await client.callTool({ name: 'get_time', arguments: {} })).toMatchObject({ content: [{ text: 'ok' }] });
    } finally {
      await client.close();
    }
    const calls = stack.fake!.received.filter((r) => r.method === 'tools/call');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers).toMatchObject({ 'x-service': 'svc' });
    expect(calls[0]!.headers['x-cpz-key']).toBeUndefined();
    expect(JSON.stringify(stack.fake!.received)).not.toContain(ALICE.secret);
  });
});
