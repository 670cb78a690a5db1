/**
 * Scores of the tools matching a query. Tools are numbered by their position in the catalogue.
 */

/** Scores of some tools: `scores[i]` is tool `ids[i]`'s; each tool appears once. Often views of a
 *  scorer's working arrays (valid until its next use). `top`, when given, is `topScore(scores)`; `matched`,
 *  when given, how many distinct terms of the query each tool matched. */
export type Scores = { ids: Int32Array; scores: Float64Array; top?: number; matched?: Uint8Array };

/** The highest of `scores`, or 0 when none is above 0. */
export function topScore(scores: Float64Array): number {
  let top = 0;
  for (let i = 0; i < scores.length; i += 1) if (scores[i] > top) top = scores[i];
  return top;
}
