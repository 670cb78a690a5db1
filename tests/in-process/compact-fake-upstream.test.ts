/**
 * /mcp/compact in front of a fake upstream whose every request is recorded: call_tool applies the same
 * output check as a direct call, forwards arguments exactly as given, and its refusals never reach the
 * upstream; catalogue tools named like the surface's own are shadowed; `compact.enabled: false` unmounts it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { structuredTool } from '../fixtures/fake-upstream.ts';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { inMemoryFakeUpstream, inProcessGateway, inProcessStack, routedFetch, type InProcessGateway as Stack } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const text = (t: string) => [{ type: 'text' as const, text: t }];
const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');

const echoArgs: Tool = {
  name: 'echo_args',
  description: 'Returns its arguments',
  inputSchema: { type: 'object', properties: { word: { type: 'string' }, times: { type: 'integer', default: 2 } }, required: ['word'] },
  annotations: { readOnlyHint: true },
};

let stack: Stack;
let compactUrl: string;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [
        structuredTool('get_deal', () => ({ content: text('ok'), structuredContent: { data: { id: 'd1', amount: '100' } } })),
        structuredTool('drift_deal', () => ({ content: text('drift'), structuredContent: { data: { amount: 100 } } })),
        structuredTool('anchor_deal', () => ({ content: text('anchor'), structuredContent: { data: { id: 'a', amount: '1' } } })),
        { definition: echoArgs, call: (args) => ({ content: text(JSON.stringify(args)) }) },
        { definition: { name: 'close_deal', description: 'Closes a deal', inputSchema: { type: 'object' } } },
        {
          definition: {
            name: 'search_tools',
            description: 'An upstream tool with a reserved name',
            inputSchema: { type: 'object' },
            annotations: { readOnlyHint: true },
          },
        },
      ],
    },
    gateway: { upstreams: [{ anchors: ['anchor_deal'] }] },
  });
  compactUrl = `${stack.gatewayUrl}/mcp/compact`;
});
afterAll(async () => {
  await stack?.close();
});

const upstreamCalls = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;

describe.each(ERAS)('call_tool in front of a fake upstream (%s era)', (era) => {
  it('turns drifted structuredContent into the same isError a direct call on /mcp gets', async () => {
    const [direct, viaCallTool] = await Promise.all([
      withClient(era, stack.mcpUrl, KEY, (c) => c.callTool('drift_deal')),
      withClient(era, compactUrl, KEY, (c) => c.callTool('call_tool', { name: 'drift_deal' })),
    ]);
    expect(viaCallTool.isError).toBe(true);
    expect(viaCallTool._meta?.['ai.cpz.gateway/error']).toBe('output_schema_violation');
    expect(textOf(viaCallTool)).toContain('/data/amount');
    expect(viaCallTool).toEqual(direct);
  });

  it('forwards the arguments exactly as given: defaults are the upstream own business, as on a direct call', async () => {
    const before = upstreamCalls();
    const result = await withClient(era, compactUrl, KEY, (c) => c.callTool('call_tool', { name: 'echo_args', arguments: { word: 'hi' } }));
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toEqual({ word: 'hi' });
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('reports the first 20 argument issues and how many more, however many keys the arguments carry', async () => {
    const before = upstreamCalls();
    const flood = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    const result = await withClient(era, compactUrl, KEY, (c) => c.callTool('search_tools', { query: 'deal', ...flood }));
    expect(result.isError).toBe(true);
    expect((result._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toHaveLength(20);
    expect(textOf(result)).toContain('/k19 is not an argument of this tool; and 4,980 more issues.');
    expect(textOf(result)).toMatch(/^Invalid arguments for search_tools: \/k0 is not an argument of this tool; /);
    expect(textOf(result)).not.toContain('/k20 ');
    expect(JSON.stringify(result).length).toBeLessThan(20_000);
    expect(upstreamCalls()).toBe(before);
  });

  it('refuses a pasted-document query and an overlong call_tool name by their schema, without echoing them or ranking', async () => {
    const before = upstreamCalls();
    await withClient(era, compactUrl, KEY, async (c) => {
      const search = await c.callTool('search_tools', { query: 'deal '.repeat(120_000) });
      expect(search.isError).toBe(true);
      expect((search._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/query']);
      expect(textOf(search)).toMatch(/^Invalid arguments for search_tools: \/query .*2000/);
      const call = await c.callTool('call_tool', { name: 'q'.repeat(300_000) });
      expect(call.isError).toBe(true);
      expect((call._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/name']);
      for (const result of [search, call]) expect(JSON.stringify(result).length).toBeLessThan(2_000);
    });
    expect(upstreamCalls()).toBe(before);
  });

  it('refuses a tool without readOnlyHint, an anchor and bad arguments without contacting the upstream', async () => {
    const before = upstreamCalls();
    await withClient(era, compactUrl, KEY, async (c) => {
      const write = await c.callTool('call_tool', { name: 'close_deal', arguments: {} });
      expect(textOf(write)).toContain('call it directly: it is advertised so your client can ask for approval');
      const anchor = await c.callTool('call_tool', { name: 'anchor_deal' });
      expect(textOf(anchor)).toBe('anchor_deal is advertised: call it directly.');
      const invalid = await c.callTool('call_tool', { name: 'echo_args', arguments: { times: 'x' } });
      expect((invalid._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(expect.arrayContaining(['/word', '/times']));
      const own = await c.callTool('call_tool', { name: 'search_tools', arguments: { query: 'x' } });
      expect(textOf(own)).toBe('search_tools is advertised: call it directly.');
      const unknown = await c.callTool('call_tool', { name: 'qqqqqqqqqqqq' });
      expect(textOf(unknown)).toMatch(/^Unknown tool: qqqqqqqqqqqq\. Use search_tools/);
      for (const result of [write, anchor, invalid, own, unknown]) expect(result.isError).toBe(true);
    });
    expect(upstreamCalls()).toBe(before);
  });
});

describe('the compact listing in front of a fake upstream', () => {
  it('advertises the writes and anchors, and shadows an upstream tool named search_tools', async () => {
    const tools = await withClient('modern', compactUrl, KEY, (c) => c.listTools());
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'anchor_deal', 'close_deal']);
    const result = await withClient('legacy', compactUrl, KEY, async (c) => {
      await c.listTools();
      return c.callTool('search_tools', { query: 'search tools reserved name', limit: 20 });
    });
    expect((result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).not.toContain('search_tools');
    // The operator is told, once per catalogue, not left to find it missing.
    expect(stack.logs.records('tools not reachable on /mcp/compact').map((r) => [r.level, r.upstreams, r.tools])).toEqual([
      [40, [expect.any(String)], ['search_tools']],
    ]);
  });

  it("names each shadowed tool's own upstream when prefixes make the names (naming.separator _: operator try-out)", async () => {
    const gateway = inProcessGateway(
      { naming: { separator: '_' } },
      {
        upstreams: {
          search: inMemoryFakeUpstream({ tools: [{ definition: { name: 'tools', inputSchema: { type: 'object' } } }] }),
          call: inMemoryFakeUpstream({ tools: [{ definition: { name: 'tool', inputSchema: { type: 'object' } } }] }),
        },
      },
    );
    try {
      const { headers, body } = rpc('modern', 1, 'tools/list');
      await (await gateway.fetch(new Request(gateway.compactUrl, { method: 'POST', headers, body: JSON.stringify(body) }))).text();
      const warned = gateway.logs.records('tools not reachable on /mcp/compact');
      expect(warned.map((r) => [r.upstreams, r.tools])).toEqual([
        [
          ['search', 'call'],
          ['search_tools', 'call_tool'],
        ],
      ]);
      expect(warned[0]!.msg).toContain('search_tools (upstream search), call_tool (upstream call)');
    } finally {
      await gateway.close();
    }
  });

  it("shadows an upstream's own run_code in code mode: not listed there, not found by search_tools (try-out: offered as advertised)", async () => {
    const coded = await inProcessStack({
      upstream: {
        tools: [{ definition: { name: 'run_code', description: 'The upstream own run_code, which writes', inputSchema: { type: 'object' } } }],
      },
      gateway: { compact: { codeMode: { enabled: true } } },
    });
    try {
      const url = `${coded.gatewayUrl}/mcp/compact`;
      const tools = await withClient('modern', url, KEY, (c) => c.listTools());
      expect(tools.filter((t) => t.name === 'run_code').map((t) => t.description)).not.toContain('The upstream own run_code, which writes');
      const result = await withClient('modern', url, KEY, (c) => c.callTool('search_tools', { query: 'upstream own run_code writes', limit: 20 }));
      expect((result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).not.toContain('run_code');
      // Served on /mcp as ever.
      const full = await withClient('modern', `${coded.gatewayUrl}/mcp`, KEY, (c) => c.listTools());
      expect(full.map((t) => t.name)).toContain('run_code');
    } finally {
      await coded.close();
    }
  });

  it('is not mounted when compact.enabled is false', async () => {
    const off = await inProcessStack({
      upstream: { tools: [structuredTool('get_deal', () => ({ content: text('ok') }))] },
      gateway: { compact: { enabled: false } },
    });
    try {
      const post = (path: string) =>
        routedFetch(`${off.gatewayUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...KEY },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
      expect((await post('/mcp/compact')).status).toBe(404);
      expect((await post('/mcp')).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
