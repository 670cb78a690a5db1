/**
 * A new catalogue version, fetched page by page from a paginating upstream, reaches tools/list and
 * search_tools whole: the version is built as the pages arrive and takes over the tools that did not
 * change (catalogue and search index alike), so the answers must be those of the new version exactly.
 * The page limit holds at its boundary: as many pages as `limits.maxListPages` are served, one more is
 * refused rather than truncated.
 */
import type { Client, Tool } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { connectV2, namesOf } from '../helpers/clients.ts';
import { inProcessStack, type InProcessGateway as Stack } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'pager', 'x-cpz-secret': 'pager-secret' };
const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });
const catalogue = (marker = ''): { definition: Tool }[] => [
  { definition: tool('list_deals', 'Deals of a fund.') },
  { definition: tool('list_cash_flows', 'Cash flows of a deal, settled or not.') },
  { definition: tool('get_bars', `Daily price bars of a symbol.${marker}`) },
  { definition: tool('start_process', 'Starts a process; then use interact_with_process.') },
  { definition: tool('interact_with_process', 'Sends input to a process started with start_process.') },
];

async function searchNames(client: Client, query: string): Promise<string[]> {
  const result = await client.callTool({ name: 'search_tools', arguments: { query, limit: 5 } });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return (result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
}

describe('a new catalogue version from a paginating upstream', () => {
  // A stack of each test's own: each test changes the upstream's catalogue itself.
  let stack: Stack;
  beforeEach(async () => {
    // The new version is served as it is: pins (issue 30) would hold the changed tool; that is tests/in-process/pinning.test.ts.
    stack = await inProcessStack({
      upstream: { pageSize: 2, tools: catalogue(), listChanged: true, toolsListHint: { ttlMs: 60_000, cacheScope: 'public' } },
      gateway: { pinning: { mode: 'off' } },
    });
  });
  afterEach(async () => {
    await stack?.close();
  });

  it('is searched whole after tools/list_changed: the changed tool by its new words, a removed one no more', async () => {
    const client = await connectV2(`${stack.gatewayUrl}/mcp/compact`, KEY);
    try {
      await client.listTools();
      expect(await searchNames(client, 'daily price bars')).toEqual(['get_bars']);
      expect(await searchNames(client, 'quetzalcoatl')).toEqual([]);
      stack.fake!.setTools(catalogue(' Catalogue marker: quetzalcoatl.'));
      await expect.poll(() => searchNames(client, 'quetzalcoatl'), { timeout: 5000 }).toEqual(['get_bars']);
      expect((await searchNames(client, 'cash flows settled'))[0]).toBe('list_cash_flows');
      stack.fake!.setTools(catalogue(' Catalogue marker: quetzalcoatl.').filter((t) => t.definition.name !== 'list_deals'));
      await expect.poll(() => searchNames(client, 'deals of a fund'), { timeout: 5000 }).not.toContain('list_deals');
      expect(await searchNames(client, 'quetzalcoatl')).toEqual(['get_bars']);
    } finally {
      await client.close();
    }
  });

  it('lists the new version whole on /mcp', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      expect(namesOf(await client.listTools())).toHaveLength(5);
      stack.fake!.setTools(catalogue(' Catalogue marker: quetzalcoatl.').filter((t) => t.definition.name !== 'list_deals'));
      await expect
        .poll(async () => namesOf(await client.listTools(undefined, { cacheMode: 'bypass' })), { timeout: 5000 })
        .toEqual(['get_bars', 'interact_with_process', 'list_cash_flows', 'start_process']);
      const bars = (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.find((t) => t.name === 'get_bars');
      expect(bars?.description).toContain('quetzalcoatl');
    } finally {
      await client.close();
    }
  });
});

describe.each([
  [3, 'served'],
  [2, 'refused'],
])('an upstream of 3 pages with limits.maxListPages %i', (maxListPages, outcome) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await inProcessStack({ upstream: { pageSize: 2, tools: catalogue() }, gateway: { limits: { maxListPages } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it(`is ${outcome}`, async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      if (outcome === 'served') expect(namesOf(await client.listTools())).toHaveLength(5);
      else await expect(client.listTools()).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('more than 2 pages') });
    } finally {
      await client.close();
    }
  });
});
