/**
 * How one list of query terms scores the tools, from each term's hits per field group ("run"): a run's
 * score is the sum of its terms' scores (minisearch's OR); runs combine dismax-style (the best run plus
 * `tieBreaker` x the others; one run for 'sum' and 'bm25f'); then the coordination factor, (distinct
 * query terms matched) ^ `coordination`.
 */
import type { Scores, Scratch } from './scores.ts';
import type { TermHits } from './term-index.ts';

/** One query term's hits: per run, and the tools it matches in any run (each once). */
export type TermRuns = { runs: TermHits[]; tools: Int32Array };

/** `TermRuns` of one term from its hits per run. */
export function termRuns(runs: TermHits[], scratch: Scratch): TermRuns {
  if (runs.length === 1) return { runs, tools: runs[0].ids };
  const { seen } = scratch;
  const tools: number[] = [];
  try {
    for (const { ids } of runs) {
      for (let i = 0; i < ids.length; i += 1) {
        if (seen[ids[i]] === 0) {
          seen[ids[i]] = 1;
          tools.push(ids[i]);
        }
      }
    }
    return { runs, tools: Int32Array.from(tools) };
  } finally {
    for (const id of tools) seen[id] = 0;
  }
}

/** The coordination factor of a tool matching m distinct query terms, m ** `coordination`, for m up to
 *  `maxTerms`: a table, so that no power is computed per tool. */
export function coordinationFactors(coordination: number, maxTerms: number): Float64Array {
  return Float64Array.from({ length: maxTerms + 1 }, (_, m) => m ** coordination);
}

/**
 * Scores of the tools matched by any of `terms` (every term has hits for each of `runCount` runs; at most
 * as many terms as `coordination` has factors, and at most 255). Allocates nothing per tool: the sums
 * run in `scratch`.
 */
export function termListScores(terms: readonly TermRuns[], runCount: number, tieBreaker: number, coordination: Float64Array, scratch: Scratch): Scores {
  const { sum, count, best, total, matched } = scratch;
  const ids: number[] = [];
  try {
    for (const { tools } of terms) {
      for (let i = 0; i < tools.length; i += 1) {
        if (matched[tools[i]]++ === 0) ids.push(tools[i]);
      }
    }
    const inRun: number[] = [];
    for (let run = 0; run < runCount; run += 1) {
      inRun.length = 0;
      for (const term of terms) {
        const { ids: termIds, scores } = term.runs[run];
        for (let i = 0; i < termIds.length; i += 1) {
          const id = termIds[i];
          if (count[id]++ === 0) inRun.push(id);
          sum[id] += scores[i];
        }
      }
      for (const id of inRun) {
        // minisearch multiplies a result by the number of query terms it matched; undone here (same
        // operations, same floats; x * 1 / 1 is x), the coordination factor is applied once below.
        const n = count[id];
        const score = n === 1 ? sum[id] : (sum[id] * n) / n;
        if (score > best[id]) best[id] = score;
        total[id] += score;
        sum[id] = 0;
        count[id] = 0;
      }
    }
    const scores = ids.map((id) => (best[id] + tieBreaker * (total[id] - best[id])) * coordination[matched[id]]);
    return { ids, scores };
  } finally {
    scratch.clear(ids); // every tool touched is in `ids`
  }
}
