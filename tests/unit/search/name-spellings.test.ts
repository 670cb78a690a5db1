/**
 * Queries that are not sentences (search/engine/tool-index.ts): a tool's name typed with a typo ranks
 * that tool first, as `tools/call`'s "Nearest names" would offer it; a query made only of stop words
 * that most tools hold matches nothing (it matched all 34 CPZAI tools, a write tool first).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildToolIndex } from '../../../search/index.ts';
import { normaliseTerm } from '../../../search/analysis/terms.ts';
import { respelledMatches } from '../../../search/engine/respell.ts';
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

describe('a misspelt word that stems apart from the word it misses', () => {
  // Porter: "positions" -> posit, "postions" -> postion (three edits apart): the stems' fuzzy match misses it.
  it.each([
    ['postions', 'list_positions'],
    ['show my postions', 'list_positions'],
    ['positons', 'list_positions'],
    ['bakctest', 'get_backtest_result'],
  ])('%s ranks %s first', (query, tool) => {
    expect(names(query)[0]).toBe(tool);
  });

  it('respells the word, not its stem, and only words no tool holds', () => {
    const entry = (term: string) => (term === 'posit' ? new Int32Array(2) : undefined);
    const stem = (word: string) => normaliseTerm(word, true);
    expect(respelledMatches('postions', stem, entry)).toHaveLength(1);
    // Its own term is no respelling; letters other than a-z are left alone.
    expect(respelledMatches('positions', stem, entry)).toEqual([]);
    expect(respelledMatches('postiöns', stem, entry)).toEqual([]);
  });
});
