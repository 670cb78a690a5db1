/**
 * `readOnlyOverrides` is one decision everywhere (policy/tool-resolution.ts): call_tool runs a tool the
 * config calls read-only and refuses one it calls state-changing, /mcp/compact lists the latter up
 * front, the listings serve the corrected `readOnlyHint`, and the CLI's `tools` output and the console
 * say what the gateway decided, not what the upstream's annotation said.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessStack, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { credentialView } from '../../gateway/ops/credential-view.ts';
import { formatViews } from '../../gateway/cli/tools-command.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const ADMIN = 'test-console-admin-token';
const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');

let stack: InProcessGateway;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [
        // No hint: a write unless the config says otherwise, which it does.
        { definition: { name: 'export_report', description: 'Exports a report', inputSchema: { type: 'object' } } },
        // Hinted read-only, but the config knows better.
        { definition: { name: 'refresh_quote', description: 'Refreshes a quote', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } },
        { definition: { name: 'get_deal', description: 'A deal', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } },
      ],
    },
    gateway: { upstreams: [{ readOnlyOverrides: { export_report: true, refresh_quote: false } }], console: { adminToken: ADMIN } },
  });
});
afterAll(async () => {
  await stack?.close();
});

const upstreamCalls = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;

describe.each(ERAS)('readOnlyOverrides through the surfaces (%s era)', (era) => {
  it('call_tool runs the tool overridden to read-only and refuses the one overridden to state-changing', async () => {
    const before = upstreamCalls();
    await withClient(era, stack.compactUrl, KEY, async (c) => {
      const runs = await c.callTool('call_tool', { name: 'export_report', arguments: {} });
      expect(runs.isError).toBeFalsy();
      const refused = await c.callTool('call_tool', { name: 'refresh_quote', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('refresh_quote changes state, so call_tool will not run it');
    });
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('lists the state-changing one up front on /mcp/compact, and every listing serves the corrected readOnlyHint', async () => {
    const compact = await withClient(era, stack.compactUrl, KEY, (c) => c.listTools());
    expect(compact.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'refresh_quote']);
    expect(compact.find((t) => t.name === 'refresh_quote')?.annotations?.readOnlyHint).toBe(false);
    const full = await withClient(era, stack.mcpUrl, KEY, (c) => c.listTools());
    const hint = (name: string) => full.find((t) => t.name === name)?.annotations?.readOnlyHint;
    expect([hint('export_report'), hint('refresh_quote'), hint('get_deal')]).toEqual([true, false, true]);
  });
});

describe('what the operator sees of readOnlyOverrides', () => {
  it("the CLI's tools output says read and write as the gateway decided", async () => {
    const views = await credentialView(stack.gatewayUrl, ['/mcp', '/mcp/compact'], KEY, routedFetch);
    const out = formatViews(views);
    expect(out).toMatch(/^ {2}export_report +read$/m);
    expect(out).toMatch(/^ {2}refresh_quote +write$/m);
    expect(views[1]?.tools?.map((t) => [t.name, t.readOnly])).toEqual([
      ['search_tools', true],
      ['call_tool', true],
      ['refresh_quote', false],
    ]);
  });

  it("the console's catalogue and search pages say read and write as the gateway decided, and which tools compact lists", async () => {
    const get = async (path: string) => {
      const response = await stack.fetch(new Request(`${stack.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }));
      expect(response.status).toBe(200);
      return response.text();
    };
    const row = (page: string, name: string) => page.split('<tr>').find((r) => r.includes(`<code>${name}</code>`)) ?? '';
    const catalog = await get('/console/catalog');
    expect(row(catalog, 'export_report')).toContain('badge read');
    expect(row(catalog, 'export_report')).toContain('via search');
    expect(row(catalog, 'refresh_quote')).toContain('badge write');
    expect(row(catalog, 'refresh_quote')).toContain('listed');
    const search = await get('/console/search?q=report');
    expect(row(search, 'export_report')).toContain('badge read');
  });
});
