/**
 * The audit trail under `policy.hiddenToolCalls: refuse` (in process): a direct call of a tool the
 * caller cannot see is answered as an unknown tool, and audited once as what it is, refused_scope;
 * a missing name stays unknown_tool; an allowed caller's call is ok.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const AUDIT_FILE = `.tmp/audit/hidden-tool-calls-${process.pid}.log`;
const tools = [
  {
    definition: {
      name: 'read_ledger',
      description: 'reads the ledger',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } },
    } as Tool,
  },
];

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
beforeAll(async () => {
  mkdirSync('.tmp/audit', { recursive: true });
  rmSync(AUDIT_FILE, { force: true });
  endpoint = await startScopeEndpoint({ reader: ['ledger:read'], visitor: [] });
  gateway = inProcessGateway(
    { scopes: { endpoint: endpoint.url }, policy: { hiddenToolCalls: 'refuse' }, audit: { destination: AUDIT_FILE, digestKey: 'in-process-audit-key-0123' } },
    { fake: { tools } },
  );
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

async function call(caller: string, name: string): Promise<void> {
  const client = new Client({ name: 'audit-in-process', version: '3.1.4' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(gateway.mcpUrl, { fetch: gateway.fetchWith({ authorization: `Bearer ${caller}` }) }));
  try {
    await client.callTool({ name, arguments: {} }).catch(() => undefined);
  } finally {
    await client.close();
  }
}

async function events(): Promise<Record<string, unknown>[]> {
  await gateway.close();
  return readFileSync(AUDIT_FILE, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('audit under policy.hiddenToolCalls: refuse', () => {
  it('records a refused hidden tool as refused_scope, a missing one as unknown_tool, an allowed call as ok: one event each', async () => {
    await call('visitor', 'read_ledger');
    await call('visitor', 'read_ledgr');
    await call('reader', 'read_ledger');
    const recorded = await events();
    // In any order: an unknown tool's refusal is recorded when its answer is sent, which can come after
    // the next call's own event (2 of about 20 runs under load).
    expect(recorded.map((e) => `${e.tool} ${e.outcome}`).sort()).toEqual(['read_ledger ok', 'read_ledger refused_scope', 'read_ledgr unknown_tool']);
    expect(recorded.find((e) => e.outcome === 'refused_scope')).toMatchObject({
      via: 'direct',
      surface: 'full',
      upstream: 'fake',
      client: 'audit-in-process',
      clientVersion: '3.1.4',
    });
    expect(gateway.upstreams.fake!.received.filter((r) => r.method === 'tools/call')).toHaveLength(1);
  });
});
