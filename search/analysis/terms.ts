/**
 * Term normalisation after `splitWords`: stemming (Porter, via `stemmer`) and English stop words
 * (the `stopword` package's list). Stop words are kept in the index and dropped from queries only, so a
 * query made only of stop words ("who am I") can still fall back to matching them.
 */
import { LRUCache } from 'lru-cache';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';

import { isCompound, splitWords } from './tokenize.ts';

export const STOP_WORDS: ReadonlySet<string> = new Set(eng);
/** Words that phrase a request to an assistant rather than say what it is about ("please help me find",
 *  "can you provide me with", "I need assistance"): "find", "provide", "assist" and "assistance" since
 *  issue 31's seventh round (tuning part, metatool 0.636 -> 0.650: "can you find me" matched the tools
 *  whose one-line descriptions begin "Find ..."; every other set unchanged); "use" and "using" since the
 *  eighth ("use my SPY short strategy to hedge ..." matched other tools' pointers, "use X for that":
 *  tuning part, objective 0.8033 -> 0.8037, metatool 0.650 -> 0.652, every other set unchanged). */
export const REQUEST_WORDS: ReadonlySet<string> = new Set([
  'please',
  'help',
  'assist',
  'assistance',
  'provide',
  'find',
  'tell',
  'give',
  'want',
  'need',
  'show',
  'let',
  'know',
  'will',
  'just',
  'like',
  'kindly',
  'thanks',
  'use',
  'using',
]);
const ASCII_WORD = /^[a-z]+$/;

/** Stems of the words queries used lately: a long request repeats its words in its clauses, and requests
 *  share most of their words (stemming is most of the cost of reading a query). */
const STEMS = new LRUCache<string, string>({ max: 10_000 });
/** No term is this (terms are letters, digits and joiners). */
const DROPPED = '\0';

/** Normalises one term from `splitWords`; `null` drops it. Compounds and non-ASCII terms are not stemmed. */
export function normaliseTerm(term: string, stem: boolean, fold = true): string | null {
  // Single Latin letters (the "s" of "what's") carry nothing; single digits and CJK characters may.
  if (term.length === 1 && /[a-z]/.test(term)) return null;
  if (!stem || isCompound(term) || !ASCII_WORD.test(term)) return term;
  return fold ? oneStem(stemmer(term)) : stemmer(term);
}

/**
 * Porter turns a final y into i ("history" -> histori) but drops it with a suffix ("historical" ->
 * histor): the forms of one word would get two stems. The i is dropped from stems of 5+ letters, so they
 * share one (histor, categor, strateg).
 */
function oneStem(stemmed: string): string {
  return stemmed.length >= 5 && stemmed.endsWith('i') ? stemmed.slice(0, -1) : stemmed;
}

/**
 * Query terms of `query`, normalised like the index's; stop words dropped unless that would leave nothing.
 * Duplicates are kept once: a long task that repeats a word has not asked for it twice as much.
 */
export function queryTerms(query: string, opts: { stem: boolean; stemFold?: boolean; stopWords: boolean; requestWords: boolean }): string[] {
  const words = splitWords(query);
  const kept = words.filter((w) => !(opts.stopWords && STOP_WORDS.has(w)) && !(opts.requestWords && REQUEST_WORDS.has(w)));
  const chosen = kept.length > 0 ? kept : words;
  const fold = opts.stemFold !== false;
  const terms = chosen.map((w) => (opts.stem ? stemmedTerm(w, fold) : normaliseTerm(w, false))).filter((t): t is string => t !== null);
  return [...new Set(terms)];
}

/** `normaliseTerm(term, true)`, remembered for the words of recent queries (`DROPPED` for null). */
function stemmedTerm(term: string, fold: boolean): string | null {
  const key = fold ? term : `\u0001${term}`;
  let stemmed = STEMS.get(key);
  if (stemmed === undefined) {
    stemmed = normaliseTerm(term, true, fold) ?? DROPPED;
    STEMS.set(key, stemmed);
  }
  return stemmed === DROPPED ? null : stemmed;
}
