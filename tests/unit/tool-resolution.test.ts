/**
 * Tool resolution (gateway/policy/tool-resolution.ts) as a pure function of data: what one name means to
 * one caller on one endpoint, a test per decision field, plus the direct-call rule built on it.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../config/load.ts';
import { buildCatalog, type Catalog, type CatalogTool } from '../../gateway/catalog/catalog.ts';
import { mergeCatalogs } from '../../gateway/catalog/catalog-merge.ts';
import { accessFor, OPERATOR_ACCESS } from '../../gateway/policy/visibility.ts';
import { directCallAllowed, findableByModel, resolveTool } from '../../gateway/policy/tool-resolution.ts';

const config = loadConfig({
  env: {},
  overrides: {
    upstreams: [
      {
        anchors: ['list_orders'],
        readOnlyOverrides: { export_report: true, get_quote: false },
        scopeRules: { list_orders: ['orders:read'], place_order: ['trade'], export_report: ['orders:read'] },
      },
    ],
  },
});
const upstream = config.upstreams[0]!;
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: 'object' }, ...extra });
const read = { annotations: { readOnlyHint: true } };
const catalog = buildCatalog(upstream, [
  tool('list_orders', read),
  tool('get_order', { ...read, _meta: { 'ai.cpz/tool': { requiredScopes: ['orders:read'] } } }),
  tool('place_order'),
  tool('export_report'),
  tool('get_quote', { ...read, _meta: { 'ai.cpz/tool': { requiredScopes: [] } } }),
  tool('order_widget', { ...read, _meta: { ui: { visibility: ['app'] }, 'ai.cpz/tool': { requiredScopes: ['orders:read'] } } }),
  tool('search_tools', { ...read, _meta: { 'ai.cpz/tool': { requiredScopes: [] } } }),
]);
const reader = accessFor({ kind: 'scopes', scopes: ['orders:read'] }, config.upstreams);
const nobody = accessFor({ kind: 'scopes', scopes: [] }, config.upstreams);

/** The same catalogue with its upstream down: every tool withheld (catalog-merge.ts). */
const down: Catalog = mergeCatalogs([{ upstream: upstream.name, catalog, down: true }], { prefixed: false, separator: '__' });

describe('resolveTool', () => {
  it('tool: the catalogue tool under the name, listed or withheld; none for a missing name or one the compact surface shadows', () => {
    expect(resolveTool(catalog, reader, 'list_orders', 'full').tool?.name).toBe('list_orders');
    expect(resolveTool(down, reader, 'list_orders', 'full').tool?.name).toBe('list_orders');
    expect(resolveTool(catalog, reader, 'list_ordrs', 'full').tool).toBeUndefined();
    expect(resolveTool(catalog, reader, 'search_tools', 'full').tool?.name).toBe('search_tools');
    expect(resolveTool(catalog, reader, 'search_tools', 'compact').tool).toBeUndefined();
    expect(resolveTool(catalog, reader, 'call_tool', 'compact').tool).toBeUndefined();
  });

  it("visible: the caller's access permits the tool's scopes (any one), whatever the surface; withheld tools too", () => {
    expect(resolveTool(catalog, reader, 'get_order', 'full').visible).toBe(true);
    expect(resolveTool(catalog, reader, 'place_order', 'compact').visible).toBe(false);
    expect(resolveTool(catalog, nobody, 'get_order', 'compact').visible).toBe(false);
    expect(resolveTool(catalog, nobody, 'get_quote', 'full').visible).toBe(true);
    expect(resolveTool(down, reader, 'get_order', 'full').visible).toBe(true);
    expect(resolveTool(catalog, OPERATOR_ACCESS, 'place_order', 'full').visible).toBe(true);
  });

  it('reachableByModel: visible and not an MCP Apps app-only tool; a withheld tool stays reachable', () => {
    expect(resolveTool(catalog, reader, 'get_order', 'compact').reachableByModel).toBe(true);
    expect(resolveTool(catalog, reader, 'order_widget', 'compact').visible).toBe(true);
    expect(resolveTool(catalog, reader, 'order_widget', 'compact').reachableByModel).toBe(false);
    expect(resolveTool(catalog, reader, 'order_widget', 'full').reachableByModel).toBe(false);
    expect(resolveTool(catalog, reader, 'place_order', 'compact').reachableByModel).toBe(false);
    expect(resolveTool(down, reader, 'get_order', 'compact').reachableByModel).toBe(true);
  });

  it("advertised: in the surface's tools/list for this caller: every visible tool on /mcp; writes, anchors and app-only tools on /mcp/compact; never a withheld one", () => {
    const advertised = (name: string, surface: 'full' | 'compact', access = OPERATOR_ACCESS, from = catalog) =>
      resolveTool(from, access, name, surface).advertised;
    expect(['list_orders', 'get_order', 'place_order', 'get_quote', 'order_widget'].map((n) => advertised(n, 'full'))).toEqual([true, true, true, true, true]);
    expect(advertised('list_orders', 'compact')).toBe(true); // a read anchor
    expect(advertised('get_order', 'compact')).toBe(false); // a read found with search_tools
    expect(advertised('place_order', 'compact')).toBe(true); // a write
    expect(advertised('get_quote', 'compact')).toBe(true); // a hinted read overridden to write
    expect(advertised('order_widget', 'compact')).toBe(true); // app-only: for the host
    expect(advertised('place_order', 'compact', reader)).toBe(false); // not visible
    expect(advertised('get_order', 'full', reader, down)).toBe(false); // withheld
  });

  it('readOnly: readOnlyHint true, or the readOnlyOverrides entry either way; the served definition says the same', () => {
    const readOnly = (name: string) => resolveTool(catalog, OPERATOR_ACCESS, name, 'full').readOnly;
    expect(readOnly('get_order')).toBe(true);
    expect(readOnly('place_order')).toBe(false);
    expect(readOnly('export_report')).toBe(true);
    expect(readOnly('get_quote')).toBe(false);
    const hint = (name: string) => (catalog.byName.get(name) as CatalogTool).definition.annotations?.readOnlyHint;
    expect([hint('export_report'), hint('get_quote'), hint('place_order'), hint('get_order')]).toEqual([true, false, undefined, true]);
  });

  it('withheld: the tool of an upstream that is down', () => {
    expect(resolveTool(down, reader, 'get_order', 'full').withheld).toBe(true);
    expect(resolveTool(catalog, reader, 'get_order', 'full').withheld).toBe(false);
  });

  it("pinned: nothing held by default; else the catalogue's hold of the tool, found even when its pinned definition is not served", () => {
    expect(resolveTool(catalog, reader, 'get_order', 'full').pinned).toEqual({ held: false });
    const order = catalog.byName.get('get_order')!;
    const hold = { held: true as const, tool: order, listed: true, reason: 'changed' as const, changes: ['description changed'], digest: 'sha256:x' };
    const held: Catalog = { ...catalog, held: new Map([['get_order', hold]]) };
    expect(resolveTool(held, reader, 'get_order', 'compact').pinned).toBe(hold);
    expect(resolveTool(held, reader, 'list_orders', 'compact').pinned).toEqual({ held: false });
    expect(findableByModel(resolveTool(held, reader, 'get_order', 'compact'))).toBe(true);
    // Not served: not listed, advertised or findable, but a call finds it (and gets the hold's answer).
    const byName = new Map([...catalog.byName].filter(([name]) => name !== 'get_order'));
    const withheldHold: Catalog = { ...catalog, byName, tools: [...byName.values()], held: new Map([['get_order', { ...hold, listed: false }]]) };
    const resolved = resolveTool(withheldHold, reader, 'get_order', 'full');
    expect(resolved).toMatchObject({ tool: order, visible: true, advertised: false, withheld: false, pinned: { held: true, listed: false } });
    expect(findableByModel(resolved)).toBe(false);
  });

  it('an alias a reload left resolves to the tool it named, under its current name', () => {
    const aliased: Catalog = { ...catalog, aliases: new Map([['old_get_order', 'get_order']]) };
    expect(resolveTool(aliased, reader, 'old_get_order', 'full')).toMatchObject({ tool: { name: 'get_order' }, visible: true });
    expect(resolveTool(catalog, reader, 'old_get_order', 'full').tool).toBeUndefined();
  });
});

describe('directCallAllowed', () => {
  it('lets a visible tool through; a hidden one only under hiddenToolCalls forward; never a name without a tool', () => {
    expect(directCallAllowed(resolveTool(catalog, reader, 'get_order', 'full'), () => 'refuse')).toBe(true);
    expect(directCallAllowed(resolveTool(catalog, reader, 'place_order', 'full'), () => 'refuse')).toBe(false);
    expect(directCallAllowed(resolveTool(catalog, reader, 'place_order', 'full'), () => 'forward')).toBe(true);
    expect(directCallAllowed(resolveTool(catalog, reader, 'nope', 'full'), () => 'forward')).toBe(false);
  });
});

describe('findableByModel', () => {
  it('offers to search results and hints what the model may reach and is listed now, never a withheld tool', () => {
    expect(findableByModel(resolveTool(catalog, reader, 'get_order', 'compact'))).toBe(true);
    expect(findableByModel(resolveTool(down, reader, 'get_order', 'compact'))).toBe(false);
    expect(findableByModel(resolveTool(catalog, reader, 'order_widget', 'compact'))).toBe(false);
    expect(findableByModel(resolveTool(catalog, reader, 'place_order', 'compact'))).toBe(false);
  });
});
