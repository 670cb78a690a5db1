/**
 * Runs one ranker over a query set and scores it. A ranker is anything that answers a query with tool
 * names, best first: the in-process index (offline mode), the BM25 baseline, or the gateway's
 * search_tools reached through a real MCP client (end-to-end mode).
 */
import { aggregate, scoreRanking, MRR_DEPTH, type Metrics } from './metrics.ts';
import type { LabelledQuery } from '../../tests/fixtures/search-data.ts';

export type Ranker = (query: string, limit: number) => Promise<string[]> | string[];

export type QueryOutcome = { query: string; gold: string[]; ranking: string[]; firstRank: number; recall5: number };

export type Evaluation = { metrics: Metrics; outcomes: QueryOutcome[]; p50Ms: number; p99Ms: number };

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Asks `rank` every query, one at a time, and scores the rankings; also times each answer (milliseconds). */
export async function evaluate(rank: Ranker, queries: LabelledQuery[]): Promise<Evaluation> {
  const outcomes: QueryOutcome[] = [];
  const ms: number[] = [];
  // One untimed query first, so that the timings measure ranking rather than JIT compilation.
  if (queries.length > 0) await rank(queries[0].query, MRR_DEPTH);
  for (const q of queries) {
    const started = performance.now();
    const ranking = await rank(q.query, MRR_DEPTH);
    ms.push(performance.now() - started);
    outcomes.push({ query: q.query, gold: q.gold, ranking, ...scoreRanking(ranking, q.gold) });
  }
  ms.sort((a, b) => a - b);
  return { metrics: aggregate(outcomes), outcomes, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) };
}
