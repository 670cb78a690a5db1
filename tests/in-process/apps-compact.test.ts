/**
 * MCP Apps on `/mcp/compact` (issue 33), in front of a 2026-07-28 apps server built with the MCP Apps
 * SDK's own server helpers (tests/fixtures/fake-tools.ts `modernAppsServer`), its anchor budget set
 * to 2 with one configured anchor:
 * - a model-visible UI read tool within `upstreams[].maxAnchors` is listed up front with its `_meta.ui`;
 *   the one past it is not, and the gateway says so in its log; app-only and state-changing UI tools are
 *   listed as ever;
 * - search_tools matches carry `_meta.ui`; a call_tool result of a UI tool carries the view and the call
 *   it answers, in both eras;
 * - a v2-SDK host end to end: it lists, calls a UI tool directly and through call_tool, reads the
 *   `ui://` views through the compact endpoint, and renders each in a View over the MCP Apps SDK's own
 *   host bridge (`AppBridge`, the View an `App`), whose tool input and result are what the model asked and
 *   got; the View calls its app-only tool back through the host.
 */
import { App } from '@modelcontextprotocol/ext-apps';
import { AppBridge, getToolUiResourceUri, type McpUiToolInputNotification } from '@modelcontextprotocol/ext-apps/app-bridge';
import { type CallToolResult, type Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAP_VIEW_HTML, MAP_VIEW_URI, VIEW_HTML, VIEW_URI, modernAppsServer } from '../fixtures/fake-tools.ts';
import { connectV2 } from '../helpers/clients.ts';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const APP_MIME = 'text/html;profile=mcp-app';

let gateway: InProcessGateway;
beforeAll(() => {
  gateway = inProcessGateway(
    { upstreams: [{ anchors: ['get_price'], maxAnchors: 2, scopeRules: {}, readOnlyOverrides: {}, categories: {} }] },
    { fake: { tools: [], mcpServer: modernAppsServer } },
  );
});
afterAll(async () => {
  await gateway?.close();
});

const upstreamCalls = () => gateway.fake!.received.filter((r) => r.method === 'tools/call').map((r) => r.params.name);

describe.each(ERAS)('MCP Apps tools on /mcp/compact (%s caller)', (era) => {
  it('lists the UI tool within the anchor budget with its _meta.ui, not the one past it', async () => {
    const tools = await withClient(era, gateway.compactUrl, KEY, (c) => c.listTools());
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'show_chart', 'annotate_chart', 'refresh_chart', 'get_price']);
    expect(tools.find((t) => t.name === 'show_chart')?._meta?.ui).toEqual({ resourceUri: VIEW_URI });
    expect(gateway.logs.text).toContain('MCP Apps tools of upstream fake past its maxAnchors (2) are not listed up front on /mcp/compact');
    expect(gateway.logs.records('past its maxAnchors').map((r) => r.overBudget)).toEqual([['show_map']]);
  });

  it('search_tools matches carry the view (_meta.ui), advertised or not', async () => {
    const found = await withClient(era, gateway.compactUrl, KEY, (c) => c.callTool('search_tools', { query: 'store map of a city chart of sales', limit: 5 }));
    const tools = (found.structuredContent as { tools: { name: string; advertised: boolean; _meta?: { ui?: unknown } }[] }).tools;
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.show_map).toMatchObject({ advertised: false, _meta: { ui: { resourceUri: MAP_VIEW_URI } } });
    expect(byName.show_chart).toMatchObject({ advertised: true, _meta: { ui: { resourceUri: VIEW_URI } } });
    expect(byName.get_price?._meta).toBeUndefined();
    const brief = await withClient(era, gateway.compactUrl, KEY, (c) => c.callTool('search_tools', { query: 'store map', detail: 'brief', limit: 1 }));
    expect((brief.structuredContent as { tools: unknown[] }).tools).toEqual([
      { name: 'show_map', description: 'Shows the store map of a city', advertised: false, _meta: { ui: { resourceUri: MAP_VIEW_URI } } },
    ]);
  });

  it('a call_tool result of a UI tool names its view and the call it answers; other results are unchanged', async () => {
    const result: ToolResult = await withClient(era, gateway.compactUrl, KEY, (c) =>
      c.callTool('call_tool', { name: 'show_map', arguments: { city: 'Oslo' } }),
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'Oslo', stores: 2 });
    expect(result._meta).toMatchObject({ ui: { resourceUri: MAP_VIEW_URI }, 'ai.cpz.gateway/tool': { name: 'show_map', arguments: { city: 'Oslo' } } });
    expect(upstreamCalls().at(-1)).toBe('show_map');
    const direct = await withClient(era, gateway.mcpUrl, KEY, (c) => c.callTool('show_map', { city: 'Oslo' }));
    expect(direct._meta?.ui).toBeUndefined();
    expect(direct._meta?.['ai.cpz.gateway/tool']).toBeUndefined();
  });
});

/**
 * A host: renders the View of `uri` for one tool call the way an MCP Apps host does (MCP Apps
 * 2026-01-26: the view read with resources/read, then `ui/initialize`, the tool input, the tool
 * result), over the MCP Apps SDK's own host bridge connected to the gateway's client; the View is an
 * MCP Apps SDK `App` on the other end of an in-memory transport (a browser would use postMessage).
 */
async function render(client: Client, uri: string, input: Record<string, unknown>, result: CallToolResult) {
  const read = await client.readResource({ uri });
  const view = read.contents[0] as { uri: string; mimeType?: string; text?: string };
  const bridge = new AppBridge(client, { name: 'test-host', version: '1.0.0' }, { serverTools: {}, serverResources: {} });
  const app = new App({ name: 'test-view', version: '1.0.0' }, {}, { autoResize: false });
  const seen: { input?: McpUiToolInputNotification['params']; result?: CallToolResult } = {};
  const delivered = new Promise<void>((resolve) => {
    app.ontoolinput = (params) => void (seen.input = params);
    app.ontoolresult = (params) => {
      seen.result = params as CallToolResult;
      resolve();
    };
  });
  const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
  const [hostEnd, viewEnd] = InMemoryTransport.createLinkedPair();
  await bridge.connect(hostEnd);
  await app.connect(viewEnd);
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
  await delivered;
  return { view, seen, app, close: () => Promise.all([app.close(), bridge.close()]) };
}

describe('a v2-SDK host on /mcp/compact', () => {
  let host: Client;
  beforeAll(async () => {
    host = await connectV2(gateway.compactUrl, KEY);
  });
  afterAll(async () => {
    await host?.close();
  });

  it('renders a listed UI tool called directly, and its View calls the app-only tool back through the host', async () => {
    const { tools } = await host.listTools();
    const chart = tools.find((t) => t.name === 'show_chart')!;
    const uri = getToolUiResourceUri(chart);
    expect(uri).toBe(VIEW_URI);
    const input = { region: 'north' };
    const result = (await host.callTool({ name: 'show_chart', arguments: input })) as CallToolResult;
    const rendered = await render(host, uri!, input, result);
    try {
      expect(rendered.view).toMatchObject({ uri: VIEW_URI, mimeType: APP_MIME, text: VIEW_HTML });
      expect(rendered.seen.input).toEqual({ arguments: input });
      expect(rendered.seen.result?.structuredContent).toEqual({ region: 'north', points: [3, 1, 4] });
      // The View asks for fresh data: the host forwards its tools/call to the gateway, which runs the app-only tool.
      const refreshed = await rendered.app.callServerTool({ name: 'refresh_chart', arguments: {} });
      expect(refreshed.content).toEqual([{ type: 'text', text: 'chart refreshed' }]);
      expect(upstreamCalls().slice(-2)).toEqual(['show_chart', 'refresh_chart']);
    } finally {
      await rendered.close();
    }
  });

  it('renders a UI tool past the budget from what call_tool answers alone', async () => {
    const found = (await host.callTool({ name: 'search_tools', arguments: { query: 'store map', limit: 1 } })) as CallToolResult;
    const match = (found.structuredContent as { tools: { name: string; _meta: { ui: { resourceUri: string } } }[] }).tools[0]!;
    // A host may prefetch the view as soon as search names it.
    expect((await host.readResource({ uri: match._meta.ui.resourceUri })).contents[0]).toMatchObject({ text: MAP_VIEW_HTML });
    const result = (await host.callTool({ name: 'call_tool', arguments: { name: match.name, arguments: { city: 'Bergen' } } })) as CallToolResult;
    // What the host reads from the result: the view to render, and the tool input it stands for.
    const uri = getToolUiResourceUri({ _meta: result._meta });
    const call = result._meta?.['ai.cpz.gateway/tool'] as { name: string; arguments: Record<string, unknown> };
    expect(uri).toBe(MAP_VIEW_URI);
    const rendered = await render(host, uri!, call.arguments, result);
    try {
      expect(rendered.view).toMatchObject({ uri: MAP_VIEW_URI, mimeType: APP_MIME, text: MAP_VIEW_HTML });
      expect(rendered.seen.input).toEqual({ arguments: { city: 'Bergen' } });
      expect(rendered.seen.result?.structuredContent).toEqual({ city: 'Bergen', stores: 2 });
    } finally {
      await rendered.close();
    }
  });
});
