/**
 * Adjustments applied to BM25 scores after matching, and the final top-k cut. They work on the scores of
 * visible tools only, so a tool hidden from the caller never lends its score to a visible one.
 */
import type { Scores } from './scores.ts';

/**
 * Server context: adds to each tool `weight` x the best score among the tools of its upstream, in place.
 * A request about one server's domain (maps, Word documents) lifts that server's tools above lone matches
 * elsewhere. `upstreamOf[id]` numbers each tool's upstream below `upstreamCount`.
 */
export function addUpstreamContext(s: Scores, upstreamOf: Int32Array, upstreamCount: number, weight: number): Scores {
  if (weight <= 0) return s;
  const { ids, scores } = s;
  const best = new Float64Array(upstreamCount);
  for (let i = 0; i < ids.length; i += 1) {
    const u = upstreamOf[ids[i]];
    if (scores[i] > best[u]) best[u] = scores[i];
  }
  for (let i = 0; i < ids.length; i += 1) scores[i] += weight * best[upstreamOf[ids[i]]];
  return s;
}

/**
 * A query that is exactly a parameter name ("unsettled", "entity_id") asks which tools accept it: those of
 * `accepting` (visible ones, already filtered) rank first, lifted by the best score of the rest so that
 * scores stay in rank order.
 */
export function withParameterTier(s: Scores, accepting: readonly number[]): Scores {
  if (accepting.length === 0) return s;
  const tier = new Set(accepting);
  let lift = 0;
  s.ids.forEach((id, i) => {
    if (!tier.has(id)) lift = Math.max(lift, s.scores[i]);
  });
  const out: Scores = { ids: [...s.ids], scores: s.scores.map((score, i) => (tier.has(s.ids[i]) ? score + lift : score)) };
  const scored = new Set(s.ids);
  for (const id of tier) {
    if (scored.has(id)) continue;
    out.ids.push(id);
    out.scores.push(0 + lift);
  }
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

/** The `k` best of `s` as [id, score], best first (ties by `tieBreak`), without sorting them all. */
export function topK(s: Scores, k: number, tieBreak: (a: number, b: number) => number): [number, number][] {
  const before = (id: number, score: number, b: [number, number]): boolean => score > b[1] || (score === b[1] && tieBreak(id, b[0]) < 0);
  const top: [number, number][] = [];
  if (k <= 0) return top;
  for (let j = 0; j < s.ids.length; j += 1) {
    const id = s.ids[j];
    const score = s.scores[j];
    if (top.length >= k && !before(id, score, top[k - 1])) continue;
    let i = top.length >= k ? k - 1 : top.length;
    while (i > 0 && before(id, score, top[i - 1])) i -= 1;
    top.splice(i, 0, [id, score]);
    if (top.length > k) top.pop();
  }
  return top;
}
