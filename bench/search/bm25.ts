/**
 * The baselines the search is measured against: plain Okapi BM25 (k1 1.2, b 0.75) over one bag of words
 * per tool (every field the index reads, concatenated), with no field boosts and no stemming; terms come
 * from the same `splitWords` as the index. Two of them: every word counted, and (`stopWords`) English stop
 * words (the `stopword` package's list, the index's own) dropped from tools and queries alike, as a
 * standard analyser does: a bench that beats only the first may be beating "the", not BM25.
 */
import { STOP_WORDS } from '../../search/analysis/terms.ts';
import { splitWords } from '../../search/analysis/tokenize.ts';
import { FIELD_NAMES, toolFields, type SearchableTool } from '../../search/analysis/tool-fields.ts';

const K1 = 1.2;
const B = 0.75;

export type Bm25Hit = { name: string; upstream?: string; score: number };

/** Builds the baseline over `tools`; `search` returns the top `limit` by BM25 score (ties by name). With
 *  `stopWords`, stop words are dropped from both sides. */
export function buildBm25(tools: SearchableTool[], opts: { stopWords?: boolean } = {}): { search(query: string, limit: number): Bm25Hit[] } {
  const words = (text: string): string[] => (opts.stopWords ? splitWords(text).filter((w) => !STOP_WORDS.has(w)) : splitWords(text));
  const docs = tools.map((tool) => {
    const fields = toolFields(tool);
    const terms = FIELD_NAMES.flatMap((f) => words(fields[f]));
    const tf = new Map<string, number>();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    return { tool, tf, length: terms.length };
  });
  const avgLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, docs.length);
  const df = new Map<string, number>();
  for (const d of docs) for (const term of d.tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const idf = (term: string): number => {
    const n = df.get(term) ?? 0;
    return Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
  };

  return {
    search(query, limit) {
      const terms = [...new Set(words(query))];
      const hits: Bm25Hit[] = [];
      for (const d of docs) {
        let score = 0;
        for (const term of terms) {
          const f = d.tf.get(term);
          if (f === undefined) continue;
          score += (idf(term) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / avgLength));
        }
        if (score > 0) hits.push({ name: d.tool.name, upstream: d.tool.upstream, score });
      }
      return hits.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name)).slice(0, limit);
    },
  };
}
