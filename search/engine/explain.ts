/**
 * Which of a tool's fields hold which of a query's terms: the "why did this match" of a search result
 * (the console's search playground). Terms are normalised exactly as the index's (splitWords, then
 * Porter stems, stop words dropped from the query); a field term that merely starts with a query term
 * counts as a prefix match, as the index's prefix expansion does. It explains, it does not score.
 */
import { DEFAULT_TUNING } from '../tuning.ts';
import { normaliseTerm, queryTerms } from '../analysis/terms.ts';
import { splitWords } from '../analysis/tokenize.ts';
import { FIELD_NAMES, toolFields, type FieldName, type SearchableTool } from '../analysis/tool-fields.ts';

/** One field that holds query terms: those found whole, and those found only as a prefix of a field term. */
export type FieldMatch = { field: FieldName; terms: string[]; prefixes: string[] };

/** The fields of `tool` (index order) holding terms of `query`, with the terms; `[]` when none does. */
export function matchedFields(tool: SearchableTool, query: string): FieldMatch[] {
  const stem = DEFAULT_TUNING.stem;
  const wanted = queryTerms(query, { stem, stopWords: DEFAULT_TUNING.stopWords, requestWords: DEFAULT_TUNING.requestWords });
  if (wanted.length === 0) return [];
  const fields = toolFields(tool);
  const out: FieldMatch[] = [];
  for (const field of FIELD_NAMES) {
    const have = new Set(
      splitWords(fields[field])
        .map((w) => normaliseTerm(w, stem))
        .filter((t): t is string => t !== null),
    );
    if (have.size === 0) continue;
    const terms = wanted.filter((t) => have.has(t));
    const prefixes = wanted.filter((t) => !have.has(t) && t.length >= 3 && [...have].some((h) => h.startsWith(t)));
    if (terms.length || prefixes.length) out.push({ field, terms, prefixes });
  }
  return out;
}
