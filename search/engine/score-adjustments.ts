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
 *  sorting them all. */
export function topK(s: Scores, k: number, tieBreak: (a: number, b: number) => number): [number, number][] {
  const before = (id: number, score: number, b: [number, number]): boolean => score > b[1] || (score === b[1] && tieBreak(id, b[0]) < 0);
  const top: [number, number][] = [];
  if (k <= 0) return top;
  const { ids, scores } = s;
  for (let j = 0; j < ids.length; j += 1) {
    const score = scores[j];
    // Most tools fall short of the k-th: one comparison, no tie-break, no allocation.
    if (top.length >= k && score < top[k - 1][1]) continue;
    const id = ids[j];
    if (top.length >= k && !before(id, score, top[k - 1])) continue;
    let i = top.length >= k ? k - 1 : top.length;
    while (i > 0 && before(id, score, top[i - 1])) i -= 1;
    // Inserted at i, the k+1-th dropped: shifted in place (a splice returns an array per call).
    const entry: [number, number] = [id, score];
    if (top.length < k) top.push(entry);
    for (let j = top.length - 1; j > i; j -= 1) top[j] = top[j - 1];
    top[i] = entry;
  }
  return top;
}
