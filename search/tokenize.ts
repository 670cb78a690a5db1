/**
 * Tokenisation shared by the tool index and the bench's BM25 baseline.
 *
 * `splitWords(text)` turns free text or identifiers into lower-case terms:
 * - identifiers are split on snake_case, kebab-case, dots and camelCase boundaries (`getRecipeById` ->
 *   get, recipe, by, id), and a compound also yields itself whole (`entity_id`), so that a bare parameter
 *   name can be matched exactly as well as by its parts;
 * - CJK runs (Han, kana, Hangul), which carry no spaces, become overlapping character bigrams (a
 *   one-character run stays a unigram), the usual dictionary-free approach (Lucene's CJKAnalyzer).
 * Never throws, whatever the input.
 */

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
/** A word: letters, digits and the joiners identifiers use. Everything else separates words. */
const WORD = /[\p{L}\p{N}]+(?:[._\-'’][\p{L}\p{N}]+)*/gu;
const JOINERS = /[._\-'’]+/;
/** camelCase and letter/digit boundaries: `getHTTPResponse2` -> get HTTP Response 2. */
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

/** Most words: lower-case ASCII letters only, or digits only; nothing to split. */
const PLAIN = /^(?:[a-z]+|[0-9]+)$/;
const ASCII = /^[\x00-\x7f]*$/;

/** Bigrams of one CJK run: 必应搜索 -> 必应 应搜 搜索. */
function cjkBigrams(run: string): string[] {
  const chars = Array.from(run);
  if (chars.length === 1) return chars;
  const grams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i += 1) grams.push(chars[i] + chars[i + 1]);
  return grams;
}

/** Parts of one identifier-like word, lower-cased; the whole word too when it is a compound. */
function identifierParts(word: string): string[] {
  if (PLAIN.test(word)) return [word];
  const parts: string[] = [];
  for (const piece of word.split(JOINERS)) {
    if (PLAIN.test(piece)) parts.push(piece);
    else for (const m of piece.matchAll(CAMEL)) parts.push(m[0].toLowerCase());
  }
  const whole = word.toLowerCase().replace(/[’']/g, '');
  if (parts.length > 1 && !/[’']/.test(word)) parts.push(whole);
  return parts.length > 0 ? parts : [whole];
}

/** Lower-case terms of `text` (see the module docstring). */
export function splitWords(text: string): string[] {
  const normalised = ASCII.test(text) ? text : text.normalize('NFKC');
  const terms: string[] = [];
  let last = 0;
  const latin = (chunk: string): void => {
    for (const m of chunk.matchAll(WORD)) terms.push(...identifierParts(m[0]));
  };
  if (ASCII.test(normalised)) {
    latin(normalised);
    return terms;
  }
  for (const m of normalised.matchAll(CJK)) {
    latin(normalised.slice(last, m.index));
    terms.push(...cjkBigrams(m[0]));
    last = m.index + m[0].length;
  }
  latin(normalised.slice(last));
  return terms;
}

/** True for a compound kept whole by `splitWords` (`entity_id`, `list-components`, `a.b`). */
export function isCompound(term: string): boolean {
  return /[._-]/.test(term);
}
