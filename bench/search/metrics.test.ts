import { describe, expect, it } from 'vitest';

import { buildBm25 } from './bm25.ts';
import { aggregate, scoreRanking } from './metrics.ts';

describe('search benchmark metrics', () => {
  it('scores a ranking: first gold rank over distinct names, recall@5 over distinct gold', () => {
    expect(scoreRanking(['a', 'a', 'b', 'c', 'd', 'e', 'f'], ['c', 'f', 'x'])).toEqual({ firstRank: 3, recall5: 1 / 3 });
    expect(scoreRanking(['a', 'b'], ['z'])).toEqual({ firstRank: 0, recall5: 0 });
  });

  it('aggregates hit@k, recall@5 and MRR', () => {
    const m = aggregate([
      { firstRank: 1, recall5: 1 },
      { firstRank: 3, recall5: 0.5 },
      { firstRank: 6, recall5: 0 },
      { firstRank: 0, recall5: 0 },
    ]);
    expect(m).toEqual({ hit1: 0.25, hit3: 0.5, hit5: 0.5, recall5: 0.375, mrr: (1 + 1 / 3 + 1 / 6) / 4, queries: 4 });
  });
});

describe('BM25 baseline', () => {
  it('computes Okapi BM25 (k1 1.2, b 0.75) over all fields as one bag', () => {
    const bm25 = buildBm25([
      { name: 'list_deals', description: 'deals deals' }, // terms: list deals list_deals deals deals (5)
      { name: 'get_quote', description: 'quote' }, // terms: get quote get_quote quote (4)
    ]);
    const [top] = bm25.search('deals', 5);
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    const tf = 3;
    const expected = (idf * tf * 2.2) / (tf + 1.2 * (1 - 0.75 + (0.75 * 5) / 4.5));
    expect(top.name).toBe('list_deals');
    expect(top.score).toBeCloseTo(expected, 10);
    expect(bm25.search('nothing here', 5)).toEqual([]);
  });
});
