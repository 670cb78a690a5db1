/**
 * call_tool on /mcp/compact against the reference stack, through real MCP clients in both eras
 * (issue 8, Done when): refusals never reach the upstream or the platform, a denied tool answers
 * exactly like a missing one, bad arguments come back with their paths and the tool's schema, and a
 * valid call returns what the direct call on /mcp returns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../helpers/clients.ts';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessReferenceStack, routedFetch, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

const MIDDLE_OFFICE = ['list_cash_flows', 'list_deals', 'list_fund_periods', 'list_journal_entries', 'list_lifecycle_events'];

let stack: Stack;
let compactUrl: string;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
  compactUrl = stack.compactUrl.href;
});
afterAll(async () => {
  await stack?.close();
});

const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');

/** tools/call requests the gateway sent upstream so far (from its own metrics). */
async function upstreamCalls(): Promise<number> {
  const text = await (await routedFetch(`${stack.gatewayUrl}/metrics`)).text();
  return Number(text.match(/^mcp_upstream_request_duration_seconds_count\{upstream="[^"]+",method="tools\/call"\} (\d+)$/m)?.[1] ?? 0);
}

function orderArgs() {
  const account = stack.platform!.store.accounts.find((a) => a.environment === 'paper') ?? stack.platform!.store.accounts[0]!;
  return { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 };
}

describe.each(ERAS)('call_tool (%s era)', (era) => {
  it('refuses place_order without contacting the upstream: the platform order count is unchanged', async () => {
    const orders = stack.platform!.store.orders.length;
    const calls = await upstreamCalls();
    const result = await withClient(era, compactUrl, DEMO_KEYS.full, (c) => c.callTool('call_tool', { name: 'place_order', arguments: orderArgs() }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/place_order changes state.*call it directly: it is advertised so your client can ask for approval/s);
    expect(stack.platform!.store.orders.length).toBe(orders);
    expect(await upstreamCalls()).toBe(calls);
  });

  it('refuses list_orders (an advertised anchor) with "call it directly"', async () => {
    const calls = await upstreamCalls();
    const result = await withClient(era, compactUrl, DEMO_KEYS.data, (c) => c.callTool('call_tool', { name: 'list_orders', arguments: { limit: 1 } }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('call it directly');
    expect(await upstreamCalls()).toBe(calls);
  });

  it('answers an unknown name with the nearest names, list_deals among them for list_dels', async () => {
    const result = await withClient(era, compactUrl, DEMO_KEYS.full, (c) => c.callTool('call_tool', { name: 'list_dels' }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Unknown tool: list_dels\. Nearest names: .*list_deals/);
    expect(result._meta?.['ai.cpz.gateway/nearest']).toContain('list_deals');
    expect(result._meta?.['ai.cpz.gateway/error']).toBe('unknown_tool');
  });

  it('returns every offending path and the tool input_schema for bad arguments, without calling upstream', async () => {
    const calls = await upstreamCalls();
    const [listed, result] = await withClient(
      era,
      stack.mcpUrl,
      DEMO_KEYS.full,
      async (direct) =>
        [
          (await direct.listTools()).find((t) => t.name === 'list_deals')!,
          await withClient(era, compactUrl, DEMO_KEYS.full, (c) =>
            c.callTool('call_tool', { name: 'list_deals', arguments: { limit: 0, status: 'open', colour: 'red' } }),
          ),
        ] as const,
    );
    expect(result.isError).toBe(true);
    expect(result._meta?.['ai.cpz.gateway/error']).toBe('invalid_arguments');
    expect((result._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path).sort()).toEqual(['/colour', '/limit', '/status']);
    for (const path of ['/limit', '/status', '/colour']) expect(textOf(result)).toContain(path);
    expect(textOf(result)).toContain(JSON.stringify(listed.inputSchema));
    expect(result._meta?.['ai.cpz.gateway/input_schema']).toEqual(listed.inputSchema);
    expect(await upstreamCalls()).toBe(calls);
  });

  it('checks its own arguments: a missing or empty name or a non-object arguments names the path', async () => {
    const [noName, emptyName, badArgs] = await withClient(era, compactUrl, DEMO_KEYS.full, async (c) => [
      await c.callTool('call_tool', { arguments: {} }),
      await c.callTool('call_tool', { name: '', arguments: {} }),
      await c.callTool('call_tool', { name: 'list_deals', arguments: 'limit=1' }),
    ]);
    expect(noName.isError).toBe(true);
    expect((noName._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/name']);
    // An empty name was "Unknown tool: ." (try-out).
    expect(emptyName.isError).toBe(true);
    expect((emptyName._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/name']);
    expect(badArgs.isError).toBe(true);
    expect((badArgs._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/arguments']);
  });

  it.each([
    ['list_deals', { limit: 2 }],
    ['list_cash_flows', { unsettled: true, limit: 3 }],
    ['list_journal_entries', {}],
  ])('returns the same result for %s as the direct call on /mcp', async (name, args) => {
    const [direct, viaCallTool] = await Promise.all([
      withClient(era, stack.mcpUrl, DEMO_KEYS.full, (c) => c.callTool(name, args)),
      withClient(era, compactUrl, DEMO_KEYS.full, (c) => c.callTool('call_tool', { name, arguments: args })),
    ]);
    expect(direct.isError).toBeFalsy();
    expect(direct.structuredContent).toBeDefined();
    expect(viaCallTool).toEqual(direct);
  });
});

describe('a tool outside the caller scopes', () => {
  it('answers exactly like a missing name: same kind, same wording, only visible names suggested', async () => {
    await withClient('modern', compactUrl, DEMO_KEYS.data, async (c) => {
      const denied = await c.callTool('call_tool', { name: 'list_deals', arguments: {} });
      const missing = await c.callTool('call_tool', { name: 'list_dealz', arguments: {} });
      for (const result of [denied, missing]) {
        expect(result.isError).toBe(true);
        expect(Object.keys(result._meta ?? {}).sort()).toEqual(Object.keys(missing._meta ?? {}).sort());
        expect(result._meta?.['ai.cpz.gateway/error']).toBe('unknown_tool');
        for (const name of MIDDLE_OFFICE) expect(result._meta?.['ai.cpz.gateway/nearest']).not.toContain(name);
      }
      // Two names may get different hints: that a hidden name gets a missing one's is hidden-unknown-tools.test.ts's.
      const unhinted = (text: string, name: string) => text.replace(name, 'NAME').replace(/ Nearest names: [^.]*\./, '');
      expect(unhinted(textOf(denied), 'list_deals')).toBe(unhinted(textOf(missing), 'list_dealz'));
    });
  });

  it('refuses place_order for the data key as unknown (never "call it directly"), and no order is stored', async () => {
    const orders = stack.platform!.store.orders.length;
    const result = await withClient('legacy', compactUrl, DEMO_KEYS.data, (c) => c.callTool('call_tool', { name: 'place_order', arguments: orderArgs() }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Unknown tool: place_order\./);
    expect(textOf(result)).not.toContain('call it directly');
    expect(stack.platform!.store.orders.length).toBe(orders);
  });

  it('place_order itself is valid and reaches the platform when called directly by name (the refusals above are not argument errors)', async () => {
    const orders = stack.platform!.store.orders.length;
    const calls = await upstreamCalls();
    const result = await withClient('modern', compactUrl, DEMO_KEYS.full, (c) => c.callTool('place_order', orderArgs()));
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(stack.platform!.store.orders.length).toBe(orders + 1);
    expect(await upstreamCalls()).toBe(calls + 1);
  });
});
