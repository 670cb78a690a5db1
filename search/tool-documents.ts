/**
 * How tools become minisearch documents: one document per tool (id = its position in the catalogue), one
 * minisearch field per text field, or a single weighted field for BM25F.
 */
import MiniSearch from 'minisearch';

import { normaliseTerm } from './terms.ts';
import { splitWords } from './tokenize.ts';
import { FIELD_NAMES, toolFields, type SearchableTool } from './tool-fields.ts';
import type { SearchTuning } from './tuning.ts';

/** The one field of a BM25F index: every field's text repeated by its weight (see `SearchTuning.fields`). */
export const COMBINED = 'text';

function indexedFields(t: SearchTuning): string[] {
  return t.fields === 'bm25f' ? [COMBINED] : [...FIELD_NAMES];
}

/** An empty index tokenising and normalising terms as the tuning says. */
export function emptyIndex(t: SearchTuning): MiniSearch<Record<string, unknown>> {
  return new MiniSearch<Record<string, unknown>>({
    fields: indexedFields(t),
    tokenize: splitWords,
    processTerm: memoised((term) => normaliseTerm(term, t.stem)),
  });
}

/** The documents of `tools` (mentions of other tools left out when the tuning says so). */
export function documents(tools: SearchableTool[], t: SearchTuning): Record<string, unknown>[] {
  const names = t.stripToolMentions ? new Set(tools.map((tool) => tool.name)) : undefined;
  return tools.map((tool, id) => {
    const fields = toolFields(tool, names);
    if (t.fields !== 'bm25f') return { id, ...fields };
    // Repeating a field's text w times adds w x its term frequencies and length: BM25F's weighted sums.
    const text = FIELD_NAMES.flatMap((f) => Array<string>(Math.max(0, Math.round(t.repeats[f]))).fill(fields[f])).join('\n');
    return { id, [COMBINED]: text };
  });
}

/** `fn` with results cached: a catalogue repeats a small vocabulary many times. Used for indexing only
 *  (queries normalise their terms themselves), so the cache never grows with queries. */
function memoised(fn: (term: string) => string | null): (term: string) => string | null {
  const cache = new Map<string, string | null>();
  return (term) => {
    let out = cache.get(term);
    if (out === undefined) {
      out = fn(term);
      cache.set(term, out);
    }
    return out;
  };
}
