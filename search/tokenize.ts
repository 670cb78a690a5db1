/**
 * Tokenisation shared by the tool index and the bench's BM25 baseline.
 *
 * `splitWords(text)` turns free text or identifiers into lower-case terms:
 * - identifiers are split on snake_case, kebab-case, dots and camelCase boundaries (`getRecipeById` ->
 *   get, recipe, by, id), and a compound also yields itself whole (`entity_id`), so that a bare parameter
 *   name can be matched exactly as well as by its parts;
 * - accents on Latin letters are folded ("ordérs" -> orders), and time-frame codes read as their words
 *   (`1Min` -> 1, minute, 1min; `4h` -> 4, hour, 4h);
 * - CJK runs (Han, kana, Hangul), which carry no spaces, become overlapping character bigrams (a
 *   one-character run stays a unigram), the usual dictionary-free approach (Lucene's CJKAnalyzer).
 * Never throws, whatever the input.
 *
 * The index reads text word by word (`forEachWord`) so that it can cache `identifierParts` per distinct
 * word: a catalogue repeats a small vocabulary many times.
 */

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
/** A word: letters, digits and the joiners identifiers use. Everything else separates words. */
const WORD = /[\p{L}\p{N}]+(?:[._\-'’][\p{L}\p{N}]+)*/gu;
const JOINERS = /[._\-'’]+/;
/** camelCase and letter/digit boundaries: `getHTTPResponse2` -> get HTTP Response 2. */
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

const LATIN_MARKS = /(\p{Script=Latin})\p{M}+/gu;
/** A time-frame code (`1Min`, `15Min`, `1Hour`, `1D`, `4h`): a count and a unit. */
const TIME_FRAME = /^(\d+)(min|mins|minute|minutes|h|hr|hrs|hour|hours|day|days|wk|week|weeks|month|months|yr|year|years)$/i;
const UNIT_WORDS: Record<string, string> = {
  min: 'minute',
  mins: 'minute',
  minute: 'minute',
  minutes: 'minute',
  m: 'minute',
  h: 'hour',
  hr: 'hour',
  hrs: 'hour',
  hour: 'hour',
  hours: 'hour',
  d: 'day',
  day: 'day',
  days: 'day',
  w: 'week',
  wk: 'week',
  week: 'week',
  weeks: 'week',
  mo: 'month',
  mon: 'month',
  month: 'month',
  months: 'month',
  y: 'year',
  yr: 'year',
  year: 'year',
  years: 'year',
};

/** Most words: lower-case ASCII letters only, or digits only; nothing to split. */
const PLAIN = /^(?:[a-z]+|[0-9]+)$/;
const ASCII = /^[\x00-\x7f]*$/;

/** True when `text` is ASCII only (the fast paths below apply). */
export function isAscii(text: string): boolean {
  return ASCII.test(text);
}

/** Calls `fn` with each word of `text` in order: an identifier-like word (`cjk` false), or one bigram
 *  (or lone character) of a CJK run (`cjk` true, already a term). */
export function forEachWord(text: string, fn: (word: string, cjk: boolean) => void): void {
  if (isAscii(text)) {
    const spans: number[] = [];
    asciiSpans(text, spans);
    for (let i = 0; i < spans.length; i += 2) fn(text.slice(spans[i], spans[i + 1]), false);
    return;
  }
  // Accents folded on Latin letters ("ordérs" is "orders"); NFKC after, so Hangul and kana recompose.
  const normalised = text.normalize('NFKD').replace(LATIN_MARKS, '$1').normalize('NFKC');
  const latin = (chunk: string): void => {
    for (const m of chunk.matchAll(WORD)) fn(m[0], false);
  };
  let last = 0;
  for (const m of normalised.matchAll(CJK)) {
    latin(normalised.slice(last, m.index));
    cjkBigrams(m[0], fn);
    last = m.index + m[0].length;
  }
  latin(normalised.slice(last));
}

const isAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
/** `WORD`'s joiners: _ - . ' */
const isJoiner = (c: number): boolean => c === 95 || c === 45 || c === 46 || c === 39;

/**
 * The words `WORD` matches in ASCII-only `text`, as [start, end) pairs in `spans`: runs of letters and
 * digits, continued by a joiner followed by another run (`entity_id`, not `id_`). Read character by
 * character: most catalogue text is ASCII, and a regex's match objects cost as much as the words (a
 * large catalogue has millions).
 */
function asciiSpans(text: string, spans: number[]): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && !isAlnum(text.charCodeAt(i))) i += 1;
    if (i === n) return;
    const start = i;
    while (i < n && isAlnum(text.charCodeAt(i))) i += 1;
    while (i + 1 < n && isJoiner(text.charCodeAt(i)) && isAlnum(text.charCodeAt(i + 1))) {
      i += 2;
      while (i < n && isAlnum(text.charCodeAt(i))) i += 1;
    }
    spans.push(start, i);
  }
}

/** Bigrams of one CJK run: 必应搜索 -> 必应 应搜 搜索. */
function cjkBigrams(run: string, fn: (word: string, cjk: boolean) => void): void {
  const chars = Array.from(run);
  if (chars.length === 1) fn(chars[0], true);
  for (let i = 0; i + 1 < chars.length; i += 1) fn(chars[i] + chars[i + 1], true);
}

/** Terms of one identifier-like word, lower-cased; the whole word too when it is a compound. */
export function identifierParts(word: string): string[] {
  if (PLAIN.test(word)) return [word];
  // Time-frame codes read as their words: `1Min` is "1 minute" (and stays whole too, for exact matches).
  const frame = TIME_FRAME.exec(word);
  if (frame) return [frame[1], UNIT_WORDS[frame[2].toLowerCase()], word.toLowerCase()];
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
  const terms: string[] = [];
  forEachWord(text, (word, cjk) => {
    if (cjk) terms.push(word);
    else for (const part of identifierParts(word)) terms.push(part);
  });
  return terms;
}

/** True for a compound kept whole by `splitWords` (`entity_id`, `list-components`, `a.b`). */
export function isCompound(term: string): boolean {
  return /[._-]/.test(term);
}
