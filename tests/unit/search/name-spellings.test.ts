/**
 * Queries that are not sentences (search/engine/tool-index.ts): a tool's name typed with a typo ranks
 * that tool first, as `tools/call`'s "Nearest names" would offer it; a query made only of stop words
 * that most tools hold matches nothing (it matched all 34 CPZAI tools, a write tool first).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildToolIndex } from '../../../search/index.ts';
import { readCatalog } from '../../../upstream/replay/catalog-file.ts';
import { PROJECT_ROOT, searchableTools } from '../../fixtures/search-data.ts';

const cpzai = searchableTools(readCatalog(resolve(PROJECT_ROOT, 'tool-catalog.json')));
const index = buildToolIndex(cpzai);
const names = (query: string, opts: Parameters<typeof index.search>[1] = {}) => index.search(query, opts).map((h) => h.name);

describe('a tool name with a typo', () => {
  it.each([
    ['list_ordres', 'list_orders'],
    ['list_postions', 'list_positions'],
    ['get_markt_dta', 'get_market_data'],
    ['get-market-data', 'get_market_data'],
    ['listOrdrs', 'list_orders'],
    ['list_orders', 'list_orders'],
  ])('%s ranks %s first', (query, tool) => {
    expect(names(query)[0]).toBe(tool);
  });

  it('offers only names the caller may use', () => {
    const hidden = (name: string) => name !== 'list_orders';
    expect(names('list_ordres', { filter: hidden })).not.toContain('list_orders');
  });

  it('leaves sentences to the ranker: a spelling tier only for one identifier', () => {
    expect(names('list my orders')[0]).toBe('list_orders');
    // Without the ranker's own fallback for a misspelt word (tuning fuzzyUnknown), the sentence gets no spelling tier.
    const plain = buildToolIndex(cpzai, { fuzzyUnknown: 0 });
    const plainNames = (query: string) => plain.search(query).map((h) => h.name);
    expect(plainNames('list ordres')).not.toEqual(plainNames('list_ordres'));
  });
});

describe('a query of stop words only', () => {
  it('matches nothing when every word is one most tools hold', () => {
    const page = index.searchPage('the of and a to is it');
    expect(page.hits).toEqual([]);
    expect(page.matched).toBe(0);
  });
});
