/**
 * Catalogue versions (gateway/catalog/catalog.ts): the version changes iff the content does (key order is not
 * content), and a version built from the previous one takes over its unchanged tools as they are, so
 * that per-tool caches (the search index's documents) carry over. Pure functions of data: no socket.
 */
import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../config/load.ts';
import { buildCatalog, CatalogBuilder } from '../../gateway/catalog/catalog.ts';
import { contentHash } from '../../gateway/checks/content-hash.ts';

const upstream = loadConfig({ env: {}, overrides: { upstreams: [{}] } }).upstreams[0]!;
const overridden = loadConfig({ env: {}, overrides: { upstreams: [{ scopeRules: { list_deals: ['deals:read'] } }] } }).upstreams[0]!;

/** Fresh objects every call, as every fetch of the upstream's tools/list gives. */
function tools(): Tool[] {
  return [
    {
      name: 'list_deals',
      description: 'Deals of a fund.',
      inputSchema: { type: 'object', properties: { fund_id: { type: 'string' }, limit: { type: 'integer' } } },
    },
    { name: 'get_bars', title: 'Bars', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
    {
      name: 'place_order',
      inputSchema: { type: 'object', required: ['symbol'], properties: { symbol: { type: 'string' } } },
      _meta: { 'ai.cpz/tool': { category: 'Trading', requiredScopes: ['trade'] } },
    },
  ];
}

/** `value` with every object's keys in reverse order. */
function reordered<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reordered) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  ) as T;
}

describe('catalogue versions', () => {
  it('are equal for equal content, whatever the key order, with or without the previous version', () => {
    const first = buildCatalog(upstream, tools());
    expect(buildCatalog(upstream, reordered(tools())).version).toBe(first.version);
    expect(buildCatalog(upstream, reordered(tools()), first).version).toBe(first.version);
  });

  it('differ when a description, a schema, the order of tools or a scope rule differs', () => {
    const first = buildCatalog(upstream, tools());
    const described = tools();
    described[1]!.description = 'Daily bars.';
    const schema = tools();
    (schema[0]!.inputSchema.properties as Record<string, object>).limit = { type: 'number' };
    const versions = [
      first.version,
      buildCatalog(upstream, described, first).version,
      buildCatalog(upstream, schema, first).version,
      buildCatalog(upstream, tools().reverse(), first).version,
      buildCatalog(overridden, tools(), first).version,
    ];
    expect(new Set(versions).size).toBe(versions.length);
  });

  it('take over the unchanged tools of the previous version as the same objects, and only those', () => {
    const first = buildCatalog(upstream, tools());
    const next = tools();
    next[2]!.description = 'Places an order.';
    const second = buildCatalog(upstream, next, first);
    expect(second.tools[0]).toBe(first.tools[0]);
    expect(second.tools[1]).toBe(first.tools[1]);
    expect(second.tools[2]).not.toBe(first.tools[2]);
    expect(second.tools[2]!.definition.description).toBe('Places an order.');
    // A tool built under other config (scope rules) is built again.
    expect(buildCatalog(overridden, tools(), first).byName.get('list_deals')!.requiredScopes).toEqual(['deals:read']);
  });

  it('come out the same built page by page', () => {
    const first = buildCatalog(upstream, tools());
    const builder = new CatalogBuilder(upstream, first);
    const [a, b, c] = tools();
    builder.add([a!, b!]);
    builder.add([c!, { ...a! }]);
    const paged = builder.finish();
    expect(paged.version).toBe(first.version);
    expect(paged.duplicates).toEqual(['list_deals']);
  });
});

describe('MCP Apps tools as read anchors (upstreams[].maxAnchors)', () => {
  const budget = loadConfig({ env: {}, overrides: { upstreams: [{ anchors: ['get_bars'], maxAnchors: 3 }] } }).upstreams[0]!;
  const ui = (name: string, meta: Record<string, unknown> = { ui: { resourceUri: `ui://views/${name}` } }, readOnly = true): Tool => ({
    name,
    inputSchema: { type: 'object' },
    ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
    _meta: meta,
  });
  const apps = (): Tool[] => [
    ...tools(),
    ui('chart_a'),
    ui('app_only', { ui: { resourceUri: 'ui://views/a', visibility: ['app'] } }),
    ui('write_ui', undefined, false),
    ui('chart_b', { 'ui/resourceUri': 'ui://views/b' }),
    ui('chart_c'),
    ui('not_a_view', { ui: { resourceUri: 'https://example.com/view' } }),
    ui('chart_d', { ui: { resourceUri: 'ui://views/d', visibility: ['model'] } }),
  ];
  const anchors = (catalog: ReturnType<typeof buildCatalog>) => catalog.tools.filter((t) => t.anchor).map((t) => t.name);

  it('follow the configured anchors in catalogue order while the budget lasts; app-only, state-changing and view-less tools never count', () => {
    const catalog = buildCatalog(budget, apps());
    expect(anchors(catalog)).toEqual(['get_bars', 'chart_a', 'chart_b']);
    expect(catalog.anchorsOverBudget).toEqual(['chart_c', 'chart_d']);
    const roomy = loadConfig({ env: {}, overrides: { upstreams: [{ anchors: [], maxAnchors: 8 }] } }).upstreams[0]!;
    expect(anchors(buildCatalog(roomy, apps()))).toEqual(['chart_a', 'chart_b', 'chart_c', 'chart_d']);
    expect(buildCatalog(roomy, apps()).anchorsOverBudget).toBeUndefined();
  });

  it('are decided again on each build: a tool whose decision changed is a new object, the others carry over', () => {
    const first = buildCatalog(budget, apps());
    const reversed = buildCatalog(budget, apps().reverse(), first);
    expect(anchors(reversed)).toEqual(['chart_d', 'chart_c', 'get_bars']);
    expect(reversed.version).not.toBe(first.version);
    expect(reversed.byName.get('chart_a')).not.toBe(first.byName.get('chart_a'));
    expect(reversed.byName.get('app_only')).toBe(first.byName.get('app_only'));
  });
});

describe('contentHash', () => {
  it('hashes content, not key order, at any depth, integer-like keys included', () => {
    expect(contentHash({ b: 1, a: [{ d: 2, c: { y: null, x: 'x' } }], 10: 'ten', 9: 'nine' })).toBe(
      contentHash({ 9: 'nine', a: [{ c: { x: 'x', y: null }, d: 2 }], 10: 'ten', b: 1 }),
    );
    expect(contentHash({ a: 1, b: undefined })).toBe(contentHash({ a: 1 }));
    expect(contentHash({ a: [1, 2] })).not.toBe(contentHash({ a: [2, 1] }));
    expect(contentHash({ a: '1' })).not.toBe(contentHash({ a: 1 }));
  });
});

describe('per-tool config entries naming no listed tool', () => {
  it('are reported with the config key and the nearest listed name, and the tool they meant falls back', () => {
    const typo = loadConfig({
      env: {},
      overrides: {
        upstreams: [
          {
            scopeRules: { plac_order: ['trade:write'], list_deals: ['deals:read'] },
            anchors: ['get_bars', 'get_barz'],
            categories: { nothing_like_it: 'x' },
            rateLimits: { tools: { list_deal: { points: 1, durationMs: 1000 } } },
          },
        ],
      },
    }).upstreams[0]!;
    const catalog = buildCatalog(typo, tools());
    expect(catalog.unmatchedRules).toEqual([
      { key: 'scopeRules.plac_order', nearest: 'place_order' },
      { key: 'categories.nothing_like_it' },
      { key: 'anchors: get_barz', nearest: 'get_bars' },
      { key: 'rateLimits.tools.list_deal', nearest: 'list_deals' },
    ]);
    // The rule meant for place_order applies to nothing: its _meta scopes decide.
    expect(catalog.byName.get('place_order')!.requiredScopes).toEqual(['trade']);
    const matching = loadConfig({ env: {}, overrides: { upstreams: [{ scopeRules: { list_deals: ['deals:read'] }, anchors: ['get_bars'] }] } }).upstreams[0]!;
    expect(buildCatalog(matching, tools()).unmatchedRules).toBeUndefined();
  });
});
