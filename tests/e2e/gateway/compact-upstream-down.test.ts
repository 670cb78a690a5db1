/**
 * /mcp/compact call_tool for a tool whose upstream is down: the caller who may see the tool gets the
 * same "upstream unavailable" isError as a direct call, not "Unknown tool"; a caller who may not see it
 * still gets "Unknown tool" (a denied tool looks exactly like a missing one). Two fake upstreams behind
 * one gateway, scopes from a stand-in scope endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { waitFor } from '../../helpers/wait.ts';

const READER = { 'x-cpz-key': 'reader', 'x-cpz-secret': 'reader-secret' };
const OUTSIDER = { 'x-cpz-key': 'outsider', 'x-cpz-secret': 'outsider-secret' };

const readOnly = (name: string): Tool => ({
  name,
  description: `${name} (test tool)`,
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true },
});

let alpha: FakeUpstream;
let beta: FakeUpstream;
let scopes: ScopeEndpoint;
let gateway: RunningGateway;
beforeAll(async () => {
  alpha = await startFakeUpstream({ tools: [{ definition: readOnly('ping_alpha') }] });
  beta = await startFakeUpstream({ tools: [{ definition: readOnly('lookup'), call: () => ({ content: [{ type: 'text', text: 'found' }] }) }] });
  scopes = await startScopeEndpoint({ reader: ['beta:read'], outsider: [] });
  gateway = await startGatewayWith({
    config: 'conformance',
    overrides: {
      scopes: { endpoint: scopes.url },
      upstreams: [
        { name: 'alpha', url: alpha.url },
        { name: 'beta', url: beta.url, scopeRules: { lookup: ['beta:read'] }, restart: { minDelayMs: 60_000, maxDelayMs: 60_000 } },
      ],
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), scopes?.close()]);
});

type Result = { isError?: boolean; content: { type: string; text?: string }[]; _meta?: Record<string, unknown> };
const callTool = async (headers: Record<string, string>, name: string) => {
  const client = await connectV2(`${gateway.url}/mcp/compact`, headers);
  try {
    return (await client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } })) as Result;
  } finally {
    await client.close();
  }
};
const textOf = (result: Result) => result.content.map((c) => c.text ?? '').join('\n');

describe('call_tool on /mcp/compact with an upstream down', () => {
  it('answers upstream unavailable to a caller who may see the tool, and Unknown tool to one who may not', async () => {
    expect(textOf(await callTool(READER, 'beta__lookup'))).toBe('found');
    const hidden = await callTool(OUTSIDER, 'beta__lookup');
    expect(textOf(hidden)).toContain('Unknown tool: beta__lookup');

    await beta.close();
    // The gateway learns it when a call fails to connect; from then on the tool is withheld from the
    // catalogue (not listed, not searched) until the upstream is back.
    const listed = async () => {
      const client = await connectV2(`${gateway.url}/mcp`, READER);
      try {
        return (await client.listTools()).tools.map((t) => t.name);
      } finally {
        await client.close();
      }
    };
    await waitFor(
      'beta__lookup withheld from the catalogue',
      async () => {
        if (!(await listed()).includes('beta__lookup')) return true;
        await callTool(READER, 'beta__lookup');
        return false;
      },
      { intervalMs: 100 },
    );
    expect(await listed()).toEqual(['alpha__ping_alpha']);

    const down = await callTool(READER, 'beta__lookup');
    const direct = await (async () => {
      const client = await connectV2(`${gateway.url}/mcp`, READER);
      try {
        return (await client.callTool({ name: 'beta__lookup', arguments: {} })) as Result;
      } finally {
        await client.close();
      }
    })();

    expect(down!.isError).toBe(true);
    expect(down!._meta?.['ai.cpz.gateway/error']).toBe('upstream_unavailable');
    expect(textOf(down!)).toBe('Tool "beta__lookup" could not be executed: upstream beta is unavailable. Try again later.');
    expect(direct._meta?.['ai.cpz.gateway/error']).toBe('upstream_unavailable');

    const stillHidden = await callTool(OUTSIDER, 'beta__lookup');
    expect(stillHidden._meta?.['ai.cpz.gateway/error']).toBe('unknown_tool');
    expect(textOf(stillHidden)).toContain('Unknown tool: beta__lookup');
    expect(textOf(stillHidden)).not.toContain('unavailable');
  });
});
