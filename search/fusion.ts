/**
 * Multi-step requests ("read the sheet, plot it as a bar chart and save it") name one tool per step. One
 * lexical query over the whole request lets the step with the rarest words fill the top of the list; ranking
 * each clause on its own and fusing the lists gives every step a place near the top.
 */
import { topScore, type Scores, type Scratch } from './scores.ts';

const CLAUSE_BREAK = /[.!?;。！？；\n]+(?:\s|$)|,\s+|\s+(?:and\s+)?then\s+/iu;
const CLAUSE_BREAK_AND = /[.!?;。！？；\n]+(?:\s|$)|,\s+|\s+(?:and\s+)?then\s+|\s+and\s+(?=\w+\s)/iu;

/** Clauses of a request: split at sentence punctuation, commas, "then"/"and then" (and "and" if asked). */
export function clauses(query: string, splitAnd = true): string[] {
  return query
    .split(splitAnd ? CLAUSE_BREAK_AND : CLAUSE_BREAK)
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

/** Reciprocal-rank fusion (Cormack et al., 2009) of score lists, each weighted. Ties keep list order. */
export function reciprocalRankFusion(lists: { scores: Scores; weight: number }[], k: number, scratch: Scratch): Scores {
  const out: number[] = [];
  try {
    for (const { scores: { ids, scores }, weight } of lists) {
      const ranked = ids.map((_, i) => i).sort((a, b) => scores[b] - scores[a]);
      ranked.forEach((i, rank) => add(scratch, out, ids[i], weight / (k + rank + 1)));
    }
    return { ids: out, scores: out.map((id) => scratch.sum[id]) };
  } finally {
    scratch.clear(out);
  }
}

/** Sum of score lists, each divided by its own best score (so every list counts in [0, weight]). */
export function normalisedSum(lists: { scores: Scores; weight: number }[], scratch: Scratch): Scores {
  const out: number[] = [];
  try {
    for (const { scores: { ids, scores }, weight } of lists) {
      const top = topScore(scores);
      if (top <= 0) continue;
      for (let i = 0; i < ids.length; i += 1) add(scratch, out, ids[i], (weight * scores[i]) / top);
    }
    return { ids: out, scores: out.map((id) => scratch.sum[id]) };
  } finally {
    scratch.clear(out);
  }
}

/** Adds `x` to tool `id`'s sum in `scratch`, listing the tool in `out` the first time. */
function add(scratch: Scratch, out: number[], id: number, x: number): void {
  if (scratch.seen[id] === 0) {
    scratch.seen[id] = 1;
    out.push(id);
  }
  scratch.sum[id] += x;
}
