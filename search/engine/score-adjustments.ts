/**
 * Adjustments applied to BM25 scores after matching, and the final top-k cut. They work on the scores of
 * visible tools only, so a tool hidden from the caller never lends its score to a visible one.
 */
import type { Scores } from './scores.ts';

/**
 * A query that is exactly a parameter name ("unsettled", "entity_id") asks which tools accept it: those of
 * `accepting` (visible ones, already filtered) rank first, lifted by the best score of the rest so that
 * scores stay in rank order.
 */
export function withParameterTier(s: Scores, accepting: readonly number[]): Scores {
  if (accepting.length === 0) return s;
  const tier = new Set(accepting);
  let lift = 0;
  for (let i = 0; i < s.ids.length; i += 1) if (!tier.has(s.ids[i])) lift = Math.max(lift, s.scores[i]);
  const scored = new Set(s.ids);
  const unscored = [...tier].filter((id) => !scored.has(id));
  const n = s.ids.length;
  const out: Scores = { ids: new Int32Array(n + unscored.length), scores: new Float64Array(n + unscored.length) };
  out.ids.set(s.ids);
  for (let i = 0; i < n; i += 1) out.scores[i] = tier.has(s.ids[i]) ? s.scores[i] + lift : s.scores[i];
  // Above the best of the rest, not level with it (a tie would be broken by name, not by the tier).
  const above = lift + Math.max(lift, 1) * 1e-9;
  unscored.forEach((id, i) => {
    out.ids[n + i] = id;
    out.scores[n + i] = above;
  });
  return out;
}

/** Lower-cased parameter name -> ids (positions in the catalogue) of the tools whose inputSchema declares
 *  it; `paramsOf[id]` lists tool `id`'s parameter names. */
export function parameterIndex(paramsOf: readonly (readonly string[])[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  paramsOf.forEach((params, id) => {
    for (const name of params) {
      const key = name.toLowerCase();
      const ids = index.get(key) ?? [];
      if (ids.at(-1) !== id) ids.push(id);
      index.set(key, ids);
    }
  });
  return index;
}

/** The `k` best of `s` as [id, score], best first (ties by `tieBreak`, then by order in `s`), without
 *  sorting them all. The selection is kept in typed arrays, the pairs made once at the end: a pair per
 *  insertion was most of a search's remaining garbage. */
export function topK(s: Scores, k: number, tieBreak: (a: number, b: number) => number): [number, number][] {
  if (k <= 0) return [];
  const { ids, scores } = s;
  const size = Math.min(k, ids.length);
  const topIds = new Int32Array(size);
  const topScores = new Float64Array(size);
  let n = 0;
  const before = (id: number, score: number, at: number): boolean => score > topScores[at] || (score === topScores[at] && tieBreak(id, topIds[at]) < 0);
  for (let j = 0; j < ids.length; j += 1) {
    const score = scores[j];
    // Most tools fall short of the k-th: one comparison, no tie-break.
    if (n >= k && score < topScores[k - 1]) continue;
    const id = ids[j];
    if (n >= k && !before(id, score, k - 1)) continue;
    let i = n >= k ? k - 1 : n;
    while (i > 0 && before(id, score, i - 1)) i -= 1;
    // Inserted at i, the k+1-th dropped.
    for (let e = n < k ? n : k - 1; e > i; e -= 1) {
      topIds[e] = topIds[e - 1];
      topScores[e] = topScores[e - 1];
    }
    topIds[i] = id;
    topScores[i] = score;
    if (n < k) n += 1;
  }
  const top: [number, number][] = new Array(n);
  for (let i = 0; i < n; i += 1) top[i] = [topIds[i], topScores[i]];
  return top;
}
