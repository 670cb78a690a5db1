/**
 * search_tools on /mcp/compact against the reference stack, through real MCP clients in both eras
 * (issue 8, Done when): the ranking checks, scope filtering on the shared index (the data key never
 * sees a middle-office tool, the identity key only get_profile), the match shape, and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, type DemoKey } from '../helpers/clients.ts';
import { ERAS, withClient, type EraClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessReferenceStack, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

const MIDDLE_OFFICE = ['list_cash_flows', 'list_deals', 'list_fund_periods', 'list_journal_entries', 'list_lifecycle_events'];

interface Match {
  name: string;
  title?: string;
  description?: string;
  category?: string;
  input_schema: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  score: number;
  advertised: boolean;
}
interface Found {
  tools: Match[];
  hint?: string;
}

let stack: Stack;
let compactUrl: string;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
  compactUrl = stack.compactUrl.href;
});
afterAll(async () => {
  await stack?.close();
});

/** search_tools after tools/list, so the client checks structuredContent against the advertised outputSchema. */
async function search(client: EraClient, args: Record<string, unknown>): Promise<ToolResult> {
  return client.callTool('search_tools', args);
}
function found(result: ToolResult): Found {
  expect(result.isError, result.content[0]?.text).toBeFalsy();
  expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent);
  return result.structuredContent as unknown as Found;
}
const searchAs = (era: (typeof ERAS)[number], key: DemoKey, fn: (client: EraClient) => Promise<void>) =>
  withClient(era, compactUrl, DEMO_KEYS[key], async (client) => {
    await client.listTools();
    await fn(client);
  });

describe.each(ERAS)('search_tools (%s era)', (era) => {
  it('ranks list_cash_flows first for "unsettled"', () =>
    searchAs(era, 'full', async (c) => {
      expect(found(await search(c, { query: 'unsettled' })).tools[0]?.name).toBe('list_cash_flows');
    }));

  it('returns all five middle-office tools in the top 5 for "entity_id"', () =>
    searchAs(era, 'full', async (c) => {
      const names = found(await search(c, { query: 'entity_id' })).tools.map((t) => t.name);
      expect(names.sort()).toEqual(MIDDLE_OFFICE);
    }));

  it('never returns a middle-office tool to the data key', () =>
    searchAs(era, 'data', async (c) => {
      for (const query of [
        'entity_id',
        'unsettled',
        'deals cash flows journal entries fund periods lifecycle events',
        'list_deals',
        'which payments have not settled',
      ]) {
        const { tools } = found(await search(c, { query, limit: 20 }));
        for (const tool of tools) {
          expect(MIDDLE_OFFICE).not.toContain(tool.name);
          expect(tool.category).not.toBe('middle-office');
        }
      }
      const byCategory = await search(c, { query: 'deals', category: 'middle-office' });
      expect(byCategory.isError).toBe(true);
      expect(byCategory.content[0]!.text).toContain('/category must be one of');
      expect(byCategory.content[0]!.text).not.toContain('middle-office"');
    }));

  it('shows the identity key get_profile only', () =>
    searchAs(era, 'identity', async (c) => {
      expect(found(await search(c, { query: 'who am I, my profile and plan' })).tools.map((t) => t.name)).toEqual(['get_profile']);
      for (const query of ['orders', 'unsettled', 'entity_id', 'place an order']) {
        for (const tool of found(await search(c, { query, limit: 20 })).tools) expect(tool.name).toBe('get_profile');
      }
    }));

  it('describes each match: schemas, annotations, score, category and whether it is advertised', () =>
    searchAs(era, 'full', async (c) => {
      const { tools } = found(await search(c, { query: 'list orders cash flows', limit: 10 }));
      const orders = tools.find((t) => t.name === 'list_orders')!;
      const flows = tools.find((t) => t.name === 'list_cash_flows')!;
      expect(orders).toMatchObject({ category: 'orders', advertised: true, annotations: { readOnlyHint: true } });
      expect(flows).toMatchObject({ category: 'middle-office', advertised: false, title: expect.any(String), description: expect.any(String) });
      for (const match of [orders, flows]) {
        expect(match.input_schema).toMatchObject({ type: 'object' });
        expect(match.output_schema).toMatchObject({ type: 'object' });
        expect(match.score).toBeGreaterThan(0);
      }
      const scores = tools.map((t) => t.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      const writes = found(await search(c, { query: 'place an order' })).tools.find((t) => t.name === 'place_order');
      expect(writes?.advertised).toBe(true);
    }));

  it('returns 5 matches by default, up to the limit asked (1-20), and refuses a limit outside 1-20 naming /limit', () =>
    searchAs(era, 'full', async (c) => {
      expect(found(await search(c, { query: 'list' })).tools).toHaveLength(5);
      expect(found(await search(c, { query: 'list', limit: 3 })).tools).toHaveLength(3);
      const many = found(await search(c, { query: 'list get account order strategy', limit: 20 })).tools;
      expect(many.length).toBeGreaterThan(5);
      expect(many.length).toBeLessThanOrEqual(20);
      for (const limit of [0, 21, 2.5]) {
        const result = await search(c, { query: 'list', limit });
        expect(result.isError).toBe(true);
        expect((result._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/limit']);
      }
    }));

  it('filters by category', () =>
    searchAs(era, 'full', async (c) => {
      const { tools } = found(await search(c, { query: 'list', category: 'risk', limit: 20 }));
      expect(tools.length).toBeGreaterThan(0);
      expect(['compute_risk', 'get_risk_snapshot', 'list_risk_snapshots']).toEqual(expect.arrayContaining(tools.map((t) => t.name)));
      for (const tool of tools) expect(tool.category).toBe('risk');
    }));

  it.each(['', '   \t '])('answers an empty or blank query (%j) with an isError naming /query', (query) =>
    searchAs(era, 'full', async (c) => {
      const result = await search(c, { query });
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/query/);
      expect((result._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toEqual(['/query']);
    }),
  );

  it('answers a missing query with an isError saying /query is required', () =>
    searchAs(era, 'full', async (c) => {
      const result = await search(c, { limit: 3 });
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toContain('/query is required');
    }));

  it('answers a query with no match with an empty list and a hint naming the caller categories', () =>
    searchAs(era, 'data', async (c) => {
      const { tools, hint } = found(await search(c, { query: 'xylophone zeppelin' }));
      expect(tools).toEqual([]);
      expect(hint).toContain('accounts, backtests, data, market-data, orders, positions');
      expect(hint).not.toContain('middle-office');
      // Within a category, the others only (try-out: the one searched was offered again).
      const within = found(await search(c, { query: 'xylophone zeppelin', category: 'orders' }));
      expect(within.tools).toEqual([]);
      // A filter that leaves a few tools names them (agent try-out: the one that would do was in none of the hint's words).
      expect(within.hint).toBe(
        'No tool matched in category orders. Try other words, or another category: accounts, backtests, data, market-data, positions. The 2 there: list_orders, get_order.',
      );
    }));
});
