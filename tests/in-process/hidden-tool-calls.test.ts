/**
 * `policy.hiddenToolCalls`: what a direct tools/call does with a catalogue tool the caller cannot see
 * is a named setting (policy/visibility.ts), not a side effect of the path taken. `refuse` (default,
 * issue 13) answers it as an unknown tool without contacting the upstream; `forward` sends it anyway.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { GET_TIME, READ_LEDGER } from '../fixtures/ledger-tools.ts';

const tools = [READ_LEDGER, GET_TIME];

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway | undefined;
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ reader: ['ledger:read'], visitor: [] });
});
afterAll(() => endpoint?.close());
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function callAs(caller: string, hiddenToolCalls?: 'forward' | 'refuse', forwardCredentials = true): Promise<{ outcome: unknown; upstreamCalls: number }> {
  gateway = inProcessGateway(
    { scopes: { endpoint: endpoint.url }, upstreams: [{ forwardCredentials }], ...(hiddenToolCalls ? { policy: { hiddenToolCalls } } : {}) },
    { fake: { tools } },
  );
  const client = new Client({ name: 'hidden-tool-calls', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(gateway.mcpUrl, { fetch: gateway.fetchWith({ authorization: `Bearer ${caller}` }) }));
  try {
    const outcome = await client.callTool({ name: 'read_ledger', arguments: {} }).catch((error: unknown) => error);
    return { outcome, upstreamCalls: gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call').length };
  } finally {
    await client.close();
  }
}

describe('policy.hiddenToolCalls', () => {
  it('forward: a direct call of a tool the caller cannot see reaches the upstream', async () => {
    const { outcome, upstreamCalls } = await callAs('visitor', 'forward');
    expect(outcome).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    expect(upstreamCalls).toBe(1);
    // Said once at start: the upstream alone decides, and one that checks nothing runs the tool for anyone (try-out).
    const warned = gateway!.logs.records().filter((r) => String(r.msg).startsWith('policy.hiddenToolCalls is forward:'));
    expect(warned).toEqual([expect.objectContaining({ upstreams: ['fake'] })]);
    expect(String(warned[0]!.msg)).toContain('runs it for anyone');
  });

  // An upstream that never sees the caller's credential cannot decide: forwarding would run the tool unchecked (try-out:
  // a state-changing tool of a stdio upstream ran for a caller whose scopes did not allow it).
  it('forward: refused like refuse on an upstream that does not receive the caller credential (forwardCredentials: false)', async () => {
    const { outcome, upstreamCalls } = await callAs('visitor', 'forward', false);
    expect(outcome).toBeInstanceOf(ProtocolError);
    expect((outcome as ProtocolError).code).toBe(-32602);
    expect((outcome as ProtocolError).message).toContain('Unknown tool: read_ledger');
    expect(upstreamCalls).toBe(0);
    // Said once at start, naming the upstream.
    const warned = gateway!.logs.records().filter((r) => String(r.msg).startsWith('policy.hiddenToolCalls is forward, but'));
    expect(warned).toEqual([expect.objectContaining({ upstreams: ['fake'] })]);
  });

  for (const setting of [undefined, 'refuse'] as const) {
    it(`refuse${setting ? '' : ' (the default)'}: the same call is answered -32602 unknown tool, as a missing one, and never reaches the upstream`, async () => {
      const { outcome, upstreamCalls } = await callAs('visitor', setting);
      expect(outcome).toBeInstanceOf(ProtocolError);
      expect((outcome as ProtocolError).code).toBe(-32602);
      expect((outcome as ProtocolError).message).toContain('Unknown tool: read_ledger');
      expect(upstreamCalls).toBe(0);
    });
  }

  it('refuse: a caller allowed to see the tool still calls it', async () => {
    const { outcome, upstreamCalls } = await callAs('reader', 'refuse');
    expect(outcome).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    expect(upstreamCalls).toBe(1);
  });
});
