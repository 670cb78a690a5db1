/**
 * Adjustments applied to BM25 scores after matching, and the final top-k cut. They work on the scores of
 * visible tools only, so a tool hidden from the caller never lends its score to a visible one.
 */
import { schemaText, type SearchableTool } from './tool-fields.ts';

/** Tool id -> score. */
export type Scores = Map<number, number>;

/**
 * Server context: adds to each tool `weight` x the best score among the tools of its upstream. A request
 * about one server's domain (maps, Word documents) lifts that server's tools above lone matches elsewhere.
 */
export function withUpstreamContext(scores: Scores, upstreamOf: (id: number) => number, weight: number): Scores {
  if (weight <= 0) return scores;
  const best = new Map<number, number>();
  for (const [id, s] of scores) best.set(upstreamOf(id), Math.max(best.get(upstreamOf(id)) ?? 0, s));
  const out: Scores = new Map();
  for (const [id, s] of scores) out.set(id, s + weight * (best.get(upstreamOf(id)) ?? 0));
  return out;
}

/**
 * A query that is exactly a parameter name ("unsettled", "entity_id") asks which tools accept it: those of
 * `accepting` (visible ones, already filtered) rank first, lifted by the best score of the rest so that
 * scores stay in rank order.
 */
export function withParameterTier(scores: Scores, accepting: number[]): Scores {
  if (accepting.length === 0) return scores;
  const tier = new Set(accepting);
  const lift = Math.max(0, ...[...scores].filter(([id]) => !tier.has(id)).map(([, s]) => s));
  const out: Scores = new Map(scores);
  for (const id of tier) out.set(id, (scores.get(id) ?? 0) + lift);
  return out;
}

/** Lower-cased parameter name -> ids (positions in `tools`) of the tools whose inputSchema declares it. */
export function parameterIndex(tools: SearchableTool[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  tools.forEach((tool, id) => {
    for (const name of schemaText(tool.inputSchema).params) {
      const key = name.toLowerCase();
      const ids = index.get(key) ?? [];
      if (ids.at(-1) !== id) ids.push(id);
      index.set(key, ids);
    }
  });
  return index;
}

/** The `k` best entries of `scores`, best first (ties by `tieBreak`), without sorting them all. */
export function topK(scores: Scores, k: number, tieBreak: (a: number, b: number) => number): [number, number][] {
  const before = (a: [number, number], b: [number, number]): boolean => a[1] > b[1] || (a[1] === b[1] && tieBreak(a[0], b[0]) < 0);
  const top: [number, number][] = [];
  for (const entry of scores) {
    if (top.length >= k && (k === 0 || !before(entry, top[k - 1]))) continue;
    let i = top.length >= k ? k - 1 : top.length;
    while (i > 0 && before(entry, top[i - 1])) i -= 1;
    top.splice(i, 0, entry);
    if (top.length > k) top.pop();
  }
  return top;
}
