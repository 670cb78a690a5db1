/**
 * What a `MiniSearch` index would cost at the same scale, for `bench/search/scale.ts --minisearch`: the
 * same documents, tokeniser and term normalisation as the tool index, and per query the least the
 * ranking asks of it (one `search` per distinct query term and field: dismax needs each field's score
 * alone), with nothing of the ranking on top. This is the floor a MiniSearch-based search cannot go
 * below, set against the whole search over our own postings (search/engine/term-index.ts).
 */
import MiniSearch from 'minisearch';

import { DEFAULT_TUNING, type SearchableTool } from '../../search/index.ts';
import { queryTerms, normaliseTerm } from '../../search/analysis/terms.ts';
import { splitWords } from '../../search/analysis/tokenize.ts';
import { FIELD_NAMES, toolFields } from '../../search/analysis/tool-fields.ts';

const t = DEFAULT_TUNING;

/** Builds the MiniSearch index of `tools` (ms taken) and returns a function timing one query's lookups. */
export function miniSearchFloor(tools: SearchableTool[]): { buildMs: number; lookups(query: string, visible: (name: string) => boolean): number } {
  const started = performance.now();
  const names = new Set(tools.map((tool) => tool.name));
  const mini = new MiniSearch<Record<string, unknown>>({ fields: [...FIELD_NAMES], tokenize: splitWords, processTerm: (term) => normaliseTerm(term, t.stem) });
  mini.addAll(tools.map((tool, id) => ({ id, ...toolFields(tool, names) })));
  const buildMs = performance.now() - started;
  return {
    buildMs,
    lookups(query, visible) {
      let found = 0;
      const known = new Uint8Array(tools.length);
      const boostDocument = (id: unknown): number => {
        const i = id as number;
        if (known[i] === 0) known[i] = visible(tools[i].name) ? 1 : 2;
        return known[i] === 1 ? 1 : 0;
      };
      for (const term of queryTerms(query, t)) {
        for (const field of FIELD_NAMES) {
          found += mini.search(term, { fields: [field], boost: t.boosts, bm25: t.bm25, tokenize: (q) => [q], processTerm: (q) => q, boostDocument }).length;
        }
      }
      return found;
    },
  };
}
