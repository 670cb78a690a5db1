/**
 * Multi-step requests ("read the sheet, plot it as a bar chart and save it") name one tool per step. One
 * lexical query over the whole request lets the step with the rarest words fill the top of the list; the
 * engine ranks each clause on its own too (search/engine/fusion.ts).
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
