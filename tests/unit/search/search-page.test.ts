/**
 * "N of M tools matched" (search/engine/tool-index.ts `searchPage`): M is the tools the caller may use
 * that the search selects (its filter, and the category or upstream asked for); N those matching above
 * the floor (`matchFloor` x the best match): a faint likeness from the semantic arm is not a match.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type DenseVectors, type SearchableTool } from '../../../search/index.ts';
import { loadQuerySets } from '../../fixtures/search-data.ts';

const tools: SearchableTool[] = [
  { name: 'list_orders', description: 'List your orders.', category: 'trading', upstream: 'broker' },
  { name: 'place_order', description: 'Place an order.', category: 'trading', upstream: 'broker' },
  { name: 'get_quote', description: 'Current price of a symbol.', category: 'data', upstream: 'broker' },
  { name: 'get_weather', description: 'Weather for a city.', category: 'data', upstream: 'weather' },
  { name: 'get_forecast', description: 'Forecast for a city.', category: 'data', upstream: 'weather' },
];
const hidden = new Set(['place_order']);
const filter = (name: string): boolean => !hidden.has(name);

describe('N of M tools matched', () => {
  const index = buildToolIndex(tools);

  it('counts in M the tools the caller may use that the category or upstream selects', () => {
    expect(index.searchPage('orders', { filter }).total).toBe(4);
    expect(index.searchPage('orders', { filter, filterKey: 'k' }).total).toBe(4);
    expect(index.searchPage('orders', { filter, category: 'trading' }).total).toBe(1);
    expect(index.searchPage('orders', { filter, filterKey: 'k', category: 'TRADING' }).total).toBe(1);
    expect(index.searchPage('city', { filter, upstream: 'weather' }).total).toBe(2);
    expect(index.searchPage('city', { category: 'data', upstream: 'weather' }).total).toBe(2);
  });

  it('counts in N only the matches above the floor, not every tool a likeness reaches', () => {
    // Vectors from an endpoint: the query is close to get_weather, and a hair's breadth from every other tool.
    const dim = tools.length;
    const vectors = new Float32Array(dim * dim);
    for (let i = 0; i < dim; i += 1) vectors[i * dim + i] = 1;
    const query = new Float32Array(dim).fill(0.01);
    query[3] = 1;
    const external: { tools: DenseVectors; query: Float32Array } = { tools: { dim, vectors }, query };
    const page = index.searchPage('rain tomorrow', { vectors: external });
    expect(page.hits[0].name).toBe('get_weather');
    expect(page.matched).toBe(1);
    expect(page.total).toBe(5);
    expect(index.searchPage('orders forecast', { filter }).matched).toBe(2);
  });

  it('counts in N what the page would answer with no limit: never more matches than shown when fewer fit the limit', () => {
    const { sets } = loadQuerySets();
    let checked = 0;
    for (const set of sets) {
      const index = buildToolIndex(set.tools);
      for (const { query } of set.queries) {
        const page = index.searchPage(query, { limit: 10 });
        if (page.hits.length < 10) {
          // The try-out's "4 of 34 tools matched; showing the best 2": N counted before the read/write intent lowered two.
          expect(page.matched, `${set.name}: ${query}`).toBe(page.hits.length);
          checked += 1;
        }
        expect(page.matched, `${set.name}: ${query}`).toBeGreaterThanOrEqual(page.hits.length);
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
