/**
 * Ranking metrics over labelled queries. A ranking is the list of returned tool names, best first (a name
 * repeated across upstreams counts once).
 * - hit@k: share of queries with any gold name in the top k;
 * - recall@k: mean share of a query's gold names found in the top k;
 * - MRR: mean of 1/rank of the first gold name within the top `MRR_DEPTH` (0 when absent).
 */
export const MRR_DEPTH = 10;

export type Metrics = { hit1: number; hit3: number; hit5: number; recall5: number; mrr: number; queries: number };

/** Per-query figures: first gold rank (1-based, 0 when absent in the ranking) and recall@5. */
export function scoreRanking(ranking: string[], gold: string[]): { firstRank: number; recall5: number } {
  const names = [...new Set(ranking)];
  const goldSet = new Set(gold);
  const firstRank = names.findIndex((n) => goldSet.has(n)) + 1;
  const found = new Set(names.slice(0, 5).filter((n) => goldSet.has(n)));
  return { firstRank, recall5: found.size / goldSet.size };
}

/** Aggregates per-query figures into `Metrics`. */
export function aggregate(perQuery: { firstRank: number; recall5: number }[]): Metrics {
  const n = Math.max(1, perQuery.length);
  const hit = (k: number): number => perQuery.filter((q) => q.firstRank > 0 && q.firstRank <= k).length / n;
  return {
    hit1: hit(1),
    hit3: hit(3),
    hit5: hit(5),
    recall5: perQuery.reduce((s, q) => s + q.recall5, 0) / n,
    mrr: perQuery.reduce((s, q) => s + (q.firstRank > 0 && q.firstRank <= MRR_DEPTH ? 1 / q.firstRank : 0), 0) / n,
    queries: perQuery.length,
  };
}
