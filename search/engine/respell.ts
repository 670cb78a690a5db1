/**
 * A misspelt word's indexed terms found through its spelling, not its stem: Porter stems a word and its
 * misspelling apart ("positions" -> posit, "postions" -> postion, three edits away), so the term index's
 * fuzzy match of stems misses what one edit of the word itself would reach. Every spelling one edit
 * away (Damerau: a letter deleted, swapped with the next, replaced or inserted, a-z; Norvig's corrector)
 * is normalised as the index's words are, and each distinct indexed term it gives, where normalising
 * changed the spelling (a suffix stemmed off), is a match.
 */
import { fuzzyWeight, type TermEntry, type TermMatches } from './term-index.ts';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const ASCII_WORD = /^[a-z]+$/;

/**
 * The indexed terms one edit of `word` (lowercase ASCII letters, else none) normalises to, other than
 * `word`'s own term and other than the spelling itself, each weighed as the term index weighs a fuzzy match one edit away, in the order the
 * edits are made. `normalise` is the index's (stemming); `entry` looks a term up. About 54 n + 25
 * spellings for a word of n letters.
 */
export function respelledMatches(word: string, normalise: (word: string) => string | null, entry: (term: string) => TermEntry | undefined): TermMatches {
  if (!ASCII_WORD.test(word)) return [];
  const own = normalise(word);
  const found = new Map<string, TermEntry>();
  const consider = (spelling: string): void => {
    const term = normalise(spelling);
    // A spelling that is its own term is within the term index's own fuzzy reach of the word: left to it.
    if (term === null || term === own || term === spelling || found.has(term)) return;
    const e = entry(term);
    if (e !== undefined) found.set(term, e);
  };
  for (let i = 0; i <= word.length; i += 1) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (tail.length > 0) consider(head + tail.slice(1));
    if (tail.length > 1) consider(head + tail[1] + tail[0] + tail.slice(2));
    for (const c of LETTERS) {
      if (tail.length > 0 && c !== tail[0]) consider(head + c + tail.slice(1));
      consider(head + c + tail);
    }
  }
  return [...found].map(([term, e]) => ({ entry: e, weight: fuzzyWeight(term.length, 1) }));
}
