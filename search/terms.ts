/**
 * Term normalisation after `splitWords`: stemming (Porter, via `stemmer`) and English stop words
 * (the `stopword` package's list). Stop words are kept in the index and dropped from queries only, so a
 * query made only of stop words ("who am I") can still fall back to matching them.
 */
import { stemmer } from 'stemmer';
import { eng } from 'stopword';

import { isCompound, splitWords } from './tokenize.ts';

const STOP_WORDS = new Set(eng);
/** Words that phrase a request to an assistant rather than say what it is about ("please help me find"). */
const REQUEST_WORDS = new Set(['please', 'help', 'tell', 'give', 'want', 'need', 'show', 'let', 'know', 'will', 'just', 'like', 'kindly', 'thanks']);
const ASCII_WORD = /^[a-z]+$/;

/** Normalises one term from `splitWords`; `null` drops it. Compounds and non-ASCII terms are not stemmed. */
export function normaliseTerm(term: string, stem: boolean): string | null {
  // Single Latin letters (the "s" of "what's") carry nothing; single digits and CJK characters may.
  if (term.length === 1 && /[a-z]/.test(term)) return null;
  if (!stem || isCompound(term) || !ASCII_WORD.test(term)) return term;
  return stemmer(term);
}

/**
 * Query terms of `query`, normalised like the index's; stop words dropped unless that would leave nothing.
 * Duplicates are kept once: a long task that repeats a word has not asked for it twice as much.
 */
export function queryTerms(query: string, opts: { stem: boolean; stopWords: boolean; requestWords: boolean }): string[] {
  const words = splitWords(query);
  const kept = words.filter((w) => !(opts.stopWords && STOP_WORDS.has(w)) && !(opts.requestWords && REQUEST_WORDS.has(w)));
  const chosen = kept.length > 0 ? kept : words;
  const terms = chosen.map((w) => normaliseTerm(w, opts.stem)).filter((t): t is string => t !== null);
  return [...new Set(terms)];
}
