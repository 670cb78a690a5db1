/**
 * POST /mcp/compact against the reference stack (platform + CPZAI upstream + gateway) through real MCP
 * clients, the gateway and the upstream in process (issue 8, The surface): each demo key sees search_tools, call_tool and the
 * writes and anchors its scopes allow, in both eras; everything else is served as on /mcp.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, connectV1, connectV2, withoutClientHints, type DemoKey } from '../helpers/clients.ts';
import { ERAS, withClient } from '../helpers/era-client.ts';
import { inProcessReferenceStack, routedFetch, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

const WRITES = [
  'compute_risk',
  'configure_overlay',
  'create_connection',
  'create_strategy',
  'create_webhook',
  'delete_webhook',
  'execute_strategy',
  'place_order',
  'sync_portfolio',
  'update_strategy',
];
const ANCHORS = ['list_accounts', 'list_positions', 'list_orders', 'get_market_data'];
const EXPECTED: Record<DemoKey, string[]> = {
  full: ['search_tools', 'call_tool', ...WRITES, ...ANCHORS].sort(),
  data: ['search_tools', 'call_tool', ...ANCHORS].sort(),
  identity: ['call_tool', 'search_tools'],
};
const CATEGORIES: Record<DemoKey, string[]> = {
  full: ['accounts', 'backtests', 'data', 'market-data', 'middle-office', 'orders', 'positions', 'profile', 'risk', 'strategies', 'webhooks'],
  data: ['accounts', 'backtests', 'data', 'market-data', 'orders', 'positions'],
  identity: ['profile'],
};

let stack: Stack;
let compactUrl: string;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
  compactUrl = stack.compactUrl.href;
});
afterAll(async () => {
  await stack?.close();
});

describe.each(ERAS)('tools/list on /mcp/compact (%s era)', (era) => {
  it.each(Object.keys(DEMO_KEYS) as DemoKey[])('lists search_tools, call_tool and the visible writes and anchors for the %s key', async (key) => {
    const tools = await withClient(era, compactUrl, DEMO_KEYS[key], (c) => c.listTools());
    expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED[key]);
    expect(tools).toHaveLength({ full: 16, data: 6, identity: 2 }[key]);
    expect(tools.slice(0, 2).map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    const search = tools[0]!;
    expect((search.inputSchema.properties as Record<string, { enum?: string[] }>).category?.enum).toEqual(CATEGORIES[key]);
    expect(search.inputSchema.required).toEqual(['query']);
    expect(search.outputSchema).toMatchObject({ type: 'object', required: ['tools', 'matched', 'total', 'summary'] });
  });
});

describe('the compact surface', () => {
  it('advertises the writes and anchors with exactly the definitions /mcp serves', async () => {
    const [full, compact] = await Promise.all([
      withClient('modern', stack.mcpUrl, DEMO_KEYS.full, (c) => c.listTools()),
      withClient('modern', compactUrl, DEMO_KEYS.full, (c) => c.listTools()),
    ]);
    // /mcp adds Claude Code's alwaysLoad hint to exactly these tools (tests/gateway/always-load.test.ts).
    for (const tool of compact.slice(2)) expect(tool).toEqual(withoutClientHints(full).find((t) => t.name === tool.name));
  });

  it('teaches the workflow in the two descriptions: search, read the schema, call directly if advertised, else call_tool', async () => {
    const [search, call] = await withClient('modern', compactUrl, DEMO_KEYS.data, (c) => c.listTools());
    expect(search!.description).toMatch(/input_schema/);
    expect(search!.description).toMatch(/advertised/);
    expect(search!.description).toMatch(/call_tool/);
    expect(call!.description).toMatch(/search_tools/);
    expect(call!.description).toMatch(/by name/);
    expect(call!.annotations?.readOnlyHint).toBe(true);
  });

  it('serves the upstream instructions followed by the compact workflow, in both eras; /mcp keeps the upstream ones unchanged', async () => {
    const instructionsAt = async (url: string | URL) => {
      const [modern, legacy] = await Promise.all([connectV2(url, DEMO_KEYS.data, 'pinned'), connectV1(url, DEMO_KEYS.data)]);
      try {
        return { modern: modern.getInstructions(), legacy: legacy.getInstructions() };
      } finally {
        await Promise.all([modern.close(), legacy.close()]);
      }
    };
    const [upstream, full, compact] = await Promise.all([instructionsAt(stack.upstreamUrl), instructionsAt(stack.mcpUrl), instructionsAt(compactUrl)]);
    expect(upstream.modern).toContain('Look ids up with the list_* tools');
    expect(full).toEqual(upstream);
    for (const era of ERAS) {
      const text = compact[era]!;
      expect(text.startsWith(`${upstream[era]}\n\n`)).toBe(true);
      const added = text.slice(upstream[era]!.length);
      expect(added).toMatch(/search_tools.*input_schema.*directly.*advertised.*call_tool/s);
    }
  });

  it('serves a non-advertised tool called by name directly, as /mcp does', async () => {
    const [direct, compact] = await Promise.all([
      withClient('modern', stack.mcpUrl, DEMO_KEYS.identity, (c) => c.callTool('get_profile')),
      withClient('modern', compactUrl, DEMO_KEYS.identity, (c) => c.callTool('get_profile')),
    ]);
    expect(compact.isError).toBeFalsy();
    expect(compact).toEqual(direct);
  });

  it('passes resources (3) and prompts (2) through like /mcp', async () => {
    const client = await connectV2(compactUrl, DEMO_KEYS.full);
    try {
      expect((await client.listResources()).resources).toHaveLength(3);
      expect((await client.listPrompts()).prompts).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('answers 401 with a challenge naming the /mcp/compact resource metadata when no credential is sent', async () => {
    const response = await routedFetch(compactUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp/compact');
  });

  it('answers 401 for search_tools and call_tool when the scope endpoint refuses the credential', async () => {
    const bad = { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'wrong-secret' };
    for (const name of ['search_tools', 'call_tool']) {
      const response = await routedFetch(compactUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...bad },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { query: 'orders', name: 'get_profile' } } }),
      });
      expect(response.status).toBe(401);
    }
  });

  it('counts compact calls, searches and listings in the metrics', async () => {
    await withClient('modern', compactUrl, DEMO_KEYS.full, async (c) => {
      await c.listTools();
      await c.callTool('search_tools', { query: 'deals' });
      await c.callTool('call_tool', { name: 'list_deals', arguments: { limit: 1 } });
      await c.callTool('call_tool', { name: 'place_order', arguments: {} });
      await c.callTool('call_tool', { name: 'list_deals', arguments: { limit: 0 } });
    });
    // A tool hidden from the caller is counted as a missing one is (try-out: its own series told them apart).
    await withClient('modern', compactUrl, DEMO_KEYS.data, async (c) => {
      await c.callTool('call_tool', { name: 'list_cash_flows', arguments: {} });
    });
    const text = await (await routedFetch(`${stack.gatewayUrl}/metrics`)).text();
    const value = (series: string) => Number(text.match(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm'))?.[1] ?? NaN);
    expect(value('mcp_tool_calls_total{endpoint="compact",tool="list_deals",via="call_tool",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(value('mcp_tool_calls_total{endpoint="compact",tool="place_order",via="call_tool",outcome="refused"}')).toBeGreaterThanOrEqual(1);
    expect(value('mcp_tool_calls_total{endpoint="compact",tool="list_deals",via="call_tool",outcome="invalid_arguments"}')).toBeGreaterThanOrEqual(1);
    expect(value('mcp_tool_calls_total{endpoint="compact",tool="search_tools",via="direct",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/tool="list_cash_flows",via="call_tool"/);
    expect(value('mcp_tool_calls_total{endpoint="compact",tool="unknown",via="call_tool",outcome="refused"}')).toBeGreaterThanOrEqual(1);
    expect(value('mcp_search_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value('mcp_advertised_tools{endpoint="compact"}')).toBe(16);
    expect(value('mcp_tools_list_bytes_count{endpoint="compact"}')).toBeGreaterThanOrEqual(1);
  });
});
