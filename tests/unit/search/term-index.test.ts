/**
 * The term index scores exactly as a MiniSearch index over the same documents would (search/engine/term-index.ts
 * claims it bit for bit): every term of the shared queries, in every field, exact and with prefix and
 * fuzzy expansions, against a real `MiniSearch` built with the same tokeniser and term normalisation.
 */
import { resolve } from 'node:path';

import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';

import { DEFAULT_TUNING, NO_GLOSSES } from '../../../search/index.ts';
import type { TermIndex } from '../../../search/engine/term-index.ts';
import { normaliseTerm, queryTerms } from '../../../search/analysis/terms.ts';
import { documentIndexer } from '../../../search/engine/tool-documents.ts';
import { splitWords } from '../../../search/analysis/tokenize.ts';
import { FIELD_NAMES, toolFields } from '../../../search/analysis/tool-fields.ts';
import { loadQuerySets, searchableTools, DATA_DIR } from '../../fixtures/search-data.ts';
import { readCatalog } from '../../../upstream/replay/catalog-file.ts';

// MiniSearch's own rarity: per field; the documents exactly `toolFields` (no enum values added to the
// parameter names, no shape notes left out), since MiniSearch indexes those.
const t = { ...DEFAULT_TUNING, dropShapeNotes: false, enumsAsParams: false, bm25: { ...DEFAULT_TUNING.bm25, idf: 'field' as const } };
const tools = searchableTools(readCatalog(resolve(DATA_DIR, 'catalogs/livemcpbench-tools.json')));
const names = new Set(tools.map((tool) => tool.name));

const mini = new MiniSearch<Record<string, unknown>>({ fields: [...FIELD_NAMES], tokenize: splitWords, processTerm: (term) => normaliseTerm(term, t.stem) });
mini.addAll(tools.map((tool, id) => ({ id, ...toolFields(tool, names, undefined, undefined, t.mentionClauses) })));

const indexer = documentIndexer(tools, t, NO_GLOSSES);
tools.forEach((_, id) => indexer.add(id));
const index: TermIndex = indexer.builder.finish();
const everyTool = new Uint8Array(tools.length).fill(1);

const terms = [
  ...new Set(loadQuerySets({ only: ['cpzai-dev', 'livemcpbench-dev'] }).sets.flatMap((set) => set.queries.flatMap((q) => queryTerms(q.query, t)))),
];

/** MiniSearch's score of each tool for `term` in `field` (one term: no multiplier for terms matched). */
function miniScores(term: string, field: string, options: { prefix?: boolean; fuzzy?: number } = {}): Map<number, number> {
  const results = mini.search(term, { fields: [field], boost: t.boosts, bm25: t.bm25, tokenize: (q) => [q], processTerm: (q) => q, ...options });
  return new Map(results.map((r) => [r.id as number, r.score]));
}

function ourScores(term: string, f: number, x: { prefix: boolean; fuzzy: number | false }): Map<number, number> {
  const hits = index.hits(index.matches(term, x), { fields: [f], boosts: [t.boosts[FIELD_NAMES[f]]] }, everyTool);
  return new Map(Array.from(hits.ids, (id, i) => [id, hits.scores[i]]));
}

describe('the term index against MiniSearch', () => {
  it('has terms to compare: the shared queries hold some', () => {
    expect(terms.length).toBeGreaterThan(300);
  });

  it('scores every query term in every field exactly as MiniSearch does', () => {
    let compared = 0;
    for (const term of terms) {
      FIELD_NAMES.forEach((field, f) => {
        const expected = miniScores(term, field);
        expect(ourScores(term, f, { prefix: false, fuzzy: false })).toEqual(expected);
        compared += expected.size;
      });
    }
    expect(compared).toBeGreaterThan(5_000);
  });

  it('expands terms by prefix and by edit distance exactly as MiniSearch does', () => {
    for (const term of terms.filter((x) => x.length >= 5).slice(0, 60)) {
      expect(ourScores(term, 2, { prefix: true, fuzzy: false })).toEqual(miniScores(term, 'description', { prefix: true }));
      expect(ourScores(term, 2, { prefix: false, fuzzy: 0.2 })).toEqual(miniScores(term, 'description', { fuzzy: 0.2 }));
      expect(ourScores(term, 0, { prefix: true, fuzzy: 0.3 })).toEqual(miniScores(term, 'name', { prefix: true, fuzzy: 0.3 }));
    }
  });
});
