/**
 * The gateway's search index cache (gateway/catalog/search-index-cache.ts): one index per catalogue version,
 * shared; titles taken where clients read them (`title`, else `annotations.title`); a new version's
 * index replaces the previous one once built.
 */
import type { Tool } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';

import { loadConfig } from '../../../config/load.ts';
import { buildCatalog } from '../../../gateway/catalog/catalog.ts';
import { SearchIndexCache } from '../../../gateway/catalog/search-index-cache.ts';

const upstream = loadConfig({ env: {}, overrides: { upstreams: [{}] } }).upstreams[0]!;
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: 'object' }, ...extra });
const silent = pino({ level: 'silent' });

describe('SearchIndexCache', () => {
  it('indexes a title kept in annotations.title, and a top-level title first', async () => {
    const catalog = buildCatalog(upstream, [
      tool('wx_fetch', { description: 'Current conditions.', annotations: { title: 'Weather Data Retriever' } }),
      tool('geo_lookup', { title: 'Geocoder', description: 'Coordinates of a place.', annotations: { title: 'Retriever of places' } }),
      tool('noise', { description: 'Unrelated.' }),
    ]);
    const index = await new SearchIndexCache(silent).get(catalog);
    expect(index.search('weather retriever').map((h) => h.name)).toEqual(['wx_fetch']);
    expect(index.search('geocoder').map((h) => h.name)).toEqual(['geo_lookup']);
  });

  it('shares one index per catalogue version, and moves to a new version once its index is built', async () => {
    const cache = new SearchIndexCache(silent);
    const first = buildCatalog(upstream, [tool('list_deals', { description: 'Deals of a fund.' })]);
    const second = buildCatalog(upstream, [
      tool('list_deals', { description: 'Deals of a fund.' }),
      tool('list_cash_flows', { description: 'Cash flows, settled or not.' }),
    ]);
    const index = await cache.get(first);
    expect(await cache.get(first)).toBe(index);
    // A small catalogue's new version builds within the wait: the very next search finds the added tool.
    expect((await cache.get(second)).search('cash flows').map((h) => h.name)).toEqual(['list_cash_flows']);
    expect((await cache.get(second)).size).toBe(2);
  });

  it('answers from the latest index while a large new version builds past the wait, then from the new one', async () => {
    const cache = new SearchIndexCache(silent);
    const many = Array.from({ length: 4000 }, (_, i) => tool(`report_${i}`, { description: `Quarterly report number ${i} of desk ${i % 37}.` }));
    const first = buildCatalog(upstream, many.slice(0, 10));
    const second = buildCatalog(upstream, many);
    expect((await cache.get(first)).size).toBe(10);
    // 4,000 tools take far longer than the wait to index: the search is answered from the first version's index.
    expect((await cache.get(second)).size).toBe(10);
    await vi.waitFor(async () => expect((await cache.get(second)).size).toBe(4000), { timeout: 20_000 });
  });
});
