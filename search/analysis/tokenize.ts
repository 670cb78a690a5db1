/**
 * Tokenisation shared by the tool index and the bench's BM25 baseline.
 *
 * `splitWords(text)` turns free text or identifiers into lower-case terms:
 * - identifiers are split on snake_case, kebab-case, dots and camelCase boundaries (`getRecipeById` ->
 *   get, recipe, by, id), and a compound also yields itself whole (`entity_id`), so that a bare parameter
 *   name can be matched exactly as well as by its parts; letters joined by an ampersand are one such
 *   compound too (`P&L`, `S&P`, `R&B`: their single letters alone carry nothing and are dropped);
 * - accents on Latin letters are folded ("ordérs" -> orders), and time-frame codes read as their words
 *   (`1Min` -> 1, minute, 1min; `4h` -> 4, hour, 4h);
 * - CJK runs (Han, kana, Hangul), which carry no spaces, become overlapping character bigrams (a
 *   one-character run stays a unigram), the usual dictionary-free approach (Lucene's CJKAnalyzer).
 * Never throws, whatever the input.
 *
 * The index reads text word by word (`forEachWordSpan`) so that it can cache `identifierParts` per distinct
 * word: a catalogue repeats a small vocabulary many times.
 */

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const JOINERS = /[._\-'’&]+/;
/** camelCase and letter/digit boundaries: `getHTTPResponse2` -> get HTTP Response 2. */
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

const LATIN_MARKS = /(\p{Script=Latin})\p{M}+/gu;
const MARK = /\p{M}/u;
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

/**
 * Calls `fn` with each word of `text` in order, as a span of a string (`source.slice(start, end)` is the
 * word, not cut out: a reader that looks words up by span allocates nothing for words it knows): an
 * identifier-like word (`cjk` false), or one bigram (or lone character) of a CJK run (`cjk` true, already
 * a term, the whole of `source`).
 */
export function forEachWordSpan(text: string, fn: (source: string, start: number, end: number, cjk: boolean) => void): void {
  const spans: number[] = [];
  if (isAscii(text)) {
    asciiWordSpans(text, spans, true, false);
    for (let i = 0; i < spans.length; i += 2) fn(text, spans[i], spans[i + 1], false);
    return;
  }
  // Accents folded on Latin letters ("ordérs" is "orders"); NFKC after, so Hangul and kana recompose.
  const decomposed = text.normalize('NFKD');
  // Most non-ASCII text has no mark to fold (a dash, a quote, CJK): one scan for any mark is cheaper
  // than the folding pattern's try at every Latin letter.
  const normalised = (MARK.test(decomposed) ? decomposed.replace(LATIN_MARKS, '$1') : decomposed).normalize('NFKC');
  const latin = (chunk: string): void => {
    spans.length = 0;
    wordSpans(chunk, spans, true);
    for (let i = 0; i < spans.length; i += 2) fn(chunk, spans[i], spans[i + 1], false);
  };
  let last = 0;
  for (const m of normalised.matchAll(CJK)) {
    latin(normalised.slice(last, m.index));
    cjkBigrams(m[0], fn);
    last = m.index + m[0].length;
  }
  latin(normalised.slice(last));
}

/** Per ASCII character: bit 1 a letter or digit, 2 lower case, 4 upper case. */
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, c) => (c >= 97 && c <= 122 ? 3 : c >= 65 && c <= 90 ? 5 : c >= 48 && c <= 57 ? 1 : 0));
const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const LOWER = /^\p{Ll}$/u;
const UPPER = /^\p{Lu}$/u;
/** Classes of the non-ASCII code points met (a catalogue uses few); emptied if it ever grows large. */
const classes = new Map<number, number>();

/** `ASCII_CLASS`'s bits for any code point, by Unicode's properties (`\p{L}`, `\p{N}`, `\p{Ll}`, `\p{Lu}`). */
function classOf(cp: number): number {
  if (cp < 128) return ASCII_CLASS[cp];
  let k = classes.get(cp);
  if (k === undefined) {
    const ch = String.fromCodePoint(cp);
    k = (LETTER_OR_NUMBER.test(ch) ? 1 : 0) | (LOWER.test(ch) ? 2 : 0) | (UPPER.test(ch) ? 4 : 0);
    if (classes.size >= 65_536) classes.clear();
    classes.set(cp, k);
  }
  return k;
}

/**
 * The words of `text` as [start, end) pairs in `spans`: runs of letters and digits (`\p{L}`, `\p{N}`),
 * continued by a joiner followed by another run (`entity_id`, not `id_`), as the Unicode regex
 * `[\p{L}\p{N}]+(?:[<joiners>][\p{L}\p{N}]+)*` matches them. The joiners are `_ - .` (and `&` between letters), and with
 * `apostrophes` also `' ’` (words; identifiers have none). With `compoundOnly`, only the words joined at
 * least once or with a lower-case letter followed by a capital (`getStories`). Read character by
 * character: a regex's match objects cost as much as the words (a large catalogue has millions), and one
 * with a rule per alternative backtracks over every plain word.
 */
export function wordSpans(text: string, spans: number[], apostrophes: boolean, compoundOnly = false): void {
  if (isAscii(text)) {
    asciiWordSpans(text, spans, apostrophes, compoundOnly);
    return;
  }
  const n = text.length;
  let start = -1;
  let compound = false;
  let lower = false;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    let k: number;
    let width = 1;
    if (c < 128) k = ASCII_CLASS[c];
    else {
      c = text.codePointAt(i) as number;
      k = classOf(c);
      if (c > 0xffff) width = 2;
    }
    if ((k & 1) !== 0) {
      if (start < 0) {
        start = i;
        compound = false;
      } else if ((k & 4) !== 0 && lower) compound = true;
      lower = (k & 2) !== 0;
      i += width;
      continue;
    }
    if (start >= 0) {
      const joiner = c === 95 || c === 45 || c === 46 || (apostrophes && (c === 39 || c === 0x2019)) || (c === 38 && isLetter(text.charCodeAt(i - 1)));
      if (joiner && i + 1 < n && (classAt(text, i + 1) & 1) !== 0 && (c !== 38 || isLetter(text.charCodeAt(i + 1)))) {
        compound = true;
        lower = false;
        i += 1;
        continue;
      }
      if (!compoundOnly || compound) spans.push(start, i);
      start = -1;
    }
    i += width;
  }
  if (start >= 0 && (!compoundOnly || compound)) spans.push(start, n);
}

function classAt(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c < 128 ? ASCII_CLASS[c] : classOf(text.codePointAt(at) as number);
}

/** An ASCII letter (a UTF-16 code unit): what an ampersand joins (`P&L`), not `a=1&b=2`'s digits. */
export const isLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);

/** An ASCII letter or digit (a UTF-16 code unit). */
export const isAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);

/** `wordSpans` for ASCII-only `text` (most catalogue text), a third faster: no code points to decode. */
function asciiWordSpans(text: string, spans: number[], apostrophes: boolean, compoundOnly: boolean): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && !isAlnum(text.charCodeAt(i))) i += 1;
    if (i === n) return;
    const start = i;
    let compound = false;
    let previous = 0;
    for (;;) {
      for (let c = text.charCodeAt(i); i < n && isAlnum(c); c = text.charCodeAt(i)) {
        if (c >= 65 && c <= 90 && previous >= 97) compound = true;
        previous = c;
        i += 1;
      }
      const c = text.charCodeAt(i);
      const joiner = c === 95 || c === 45 || c === 46 || (apostrophes && c === 39) || (c === 38 && isLetter(previous) && isLetter(text.charCodeAt(i + 1)));
      if (joiner && i + 1 < n && isAlnum(text.charCodeAt(i + 1))) {
        compound = true;
        previous = 0;
        i += 1;
      } else break;
    }
    if (!compoundOnly || compound) spans.push(start, i);
  }
}

/** Bigrams of one CJK run: 必应搜索 -> 必应 应搜 搜索 (code points: a run may hold astral characters). */
function cjkBigrams(run: string, fn: (source: string, start: number, end: number, cjk: boolean) => void): void {
  if (!SURROGATE.test(run)) {
    // One code unit per character: bigrams are two-unit slices, with no array of characters between.
    if (run.length === 1) fn(run, 0, 1, true);
    for (let i = 0; i + 1 < run.length; i += 1) {
      const term = run.slice(i, i + 2);
      fn(term, 0, 2, true);
    }
    return;
  }
  const chars = Array.from(run);
  const emit = (term: string): void => fn(term, 0, term.length, true);
  if (chars.length === 1) emit(chars[0]);
  for (let i = 0; i + 1 < chars.length; i += 1) emit(chars[i] + chars[i + 1]);
}

const SURROGATE = /[\uD800-\uDFFF]/;

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
  forEachWordSpan(text, (source, start, end, cjk) => {
    if (cjk) terms.push(source);
    else for (const part of identifierParts(source.slice(start, end))) terms.push(part);
  });
  return terms;
}

/** True for a compound kept whole by `splitWords` (`entity_id`, `list-components`, `a.b`, `p&l`). */
export function isCompound(term: string): boolean {
  return /[._&-]/.test(term);
}
