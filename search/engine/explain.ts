/**
 * Which of a tool's fields hold which of a query's terms: the "why did this match" of a search result
 * (the console's search playground). Terms are normalised exactly as the index's (splitWords, then
 * Porter stems, stop words dropped from the query); a field term that merely starts with a query term
 * counts as a prefix match, as the index's prefix expansion does. It explains, it does not score.
 */
import { DEFAULT_TUNING } from '../tuning.ts';
import { normaliseTerm, queryTerms } from '../analysis/terms.ts';
import { splitWords } from '../analysis/tokenize.ts';
import { FIELD_NAMES, toolFields, withoutShapeNotes, type FieldName, type SearchableTool } from '../analysis/tool-fields.ts';

/**
 * One field that holds query terms, as the words written in the field (lower case), never as stems: `terms`
 * the field's words whose term equals a query term (`buying` for the query `buy`), `prefixes` those a
 * query term only starts (`unsettled` for `unset`).
 */
export type FieldMatch = { field: FieldName; terms: string[]; prefixes: string[] };

/** The fields of `tool` (index order) holding terms of `query`, with the terms; `[]` when none does. */
export function matchedFields(tool: SearchableTool, query: string): FieldMatch[] {
  const stem = DEFAULT_TUNING.stem;
  const wanted = queryTerms(query, { stem, stopWords: DEFAULT_TUNING.stopWords, requestWords: DEFAULT_TUNING.requestWords });
  if (wanted.length === 0) return [];
  const fields = toolFields(tool);
  // The index leaves the shape notes out: their words match nothing.
  if (DEFAULT_TUNING.dropShapeNotes) fields.description = withoutShapeNotes(fields.description);
  const out: FieldMatch[] = [];
  for (const field of FIELD_NAMES) {
    // term -> the words of the field it comes from, as written (lower case), first seen first.
    const have = new Map<string, Set<string>>();
    for (const word of splitWords(fields[field])) {
      const term = normaliseTerm(word, stem);
      if (term !== null) have.set(term, (have.get(term) ?? new Set()).add(word.toLowerCase()));
    }
    if (have.size === 0) continue;
    const whole = new Set(wanted.filter((t) => have.has(t)));
    const words = (terms: Iterable<string>) => [...new Set([...terms].flatMap((t) => [...have.get(t)!]))];
    const terms = words(whole);
    const prefixed = [...have.keys()].filter((h) => !whole.has(h) && wanted.some((t) => !whole.has(t) && t.length >= 3 && h.startsWith(t)));
    const prefixes = words(prefixed).filter((w) => !terms.includes(w));
    if (terms.length || prefixes.length) out.push({ field, terms, prefixes });
  }
  return out;
}
