/**
 * Multi-step requests ("read the sheet, plot it as a bar chart and save it") name one tool per step. One
 * lexical query over the whole request lets the step with the rarest words fill the top of the list; ranking
 * each clause on its own and fusing the lists gives every step a place near the top.
 */

const CLAUSE_BREAK = /[.!?;。！？；\n]+(?:\s|$)|,\s+|\s+(?:and\s+)?then\s+/iu;
const CLAUSE_BREAK_AND = /[.!?;。！？；\n]+(?:\s|$)|,\s+|\s+(?:and\s+)?then\s+|\s+and\s+(?=\w+\s)/iu;

/** Clauses of a request: split at sentence punctuation, commas, "then"/"and then" (and "and" if asked). */
export function clauses(query: string, splitAnd = true): string[] {
  return query
    .split(splitAnd ? CLAUSE_BREAK_AND : CLAUSE_BREAK)
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

/** Reciprocal-rank fusion (Cormack et al., 2009) of score maps, each weighted. */
export function reciprocalRankFusion(lists: { scores: Map<number, number>; weight: number }[], k: number): Map<number, number> {
  const fused = new Map<number, number>();
  for (const { scores, weight } of lists) {
    const ranked = [...scores].sort((a, b) => b[1] - a[1]);
    ranked.forEach(([id], i) => fused.set(id, (fused.get(id) ?? 0) + weight / (k + i + 1)));
  }
  return fused;
}

/** Sum of score maps, each divided by its own best score (so every list counts in [0, weight]). */
export function normalisedSum(lists: { scores: Map<number, number>; weight: number }[]): Map<number, number> {
  const fused = new Map<number, number>();
  for (const { scores, weight } of lists) {
    const top = Math.max(0, ...scores.values());
    if (top <= 0) continue;
    for (const [id, s] of scores) fused.set(id, (fused.get(id) ?? 0) + (weight * s) / top);
  }
  return fused;
}
