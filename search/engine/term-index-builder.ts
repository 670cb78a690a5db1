/**
 * Builds a `TermIndex` tool by tool: each tool's fields read into terms with their counts (each distinct
 * word split and normalised once per build), then, once every tool is in, the counts turned around into
 * postings per term and field, packed, each with its BM25+. Flat typed arrays throughout: a build
 * allocates per term and per tool, not per posting.
 */
import { TermIndex, type TermEntry } from './term-index.ts';
import { forEachWordSpan, identifierParts, isAlnum, isAscii, isLetter } from '../analysis/tokenize.ts';

/** BM25+ parameters (minisearch's names): term-frequency saturation k, length normalisation b, floor d;
 *  `idf`: a term's rarity counted among the tools holding it in the field scored ('field', minisearch's)
 *  or in any field ('tool', as BM25F does: Robertson, Zaragoza and Taylor, 2004), or the mean of both;
 *  `idfFields[f]` false leaves field `f` out of the tools counted for 'tool' (never fewer than the field's own). */
export type Bm25Params = { k: number; b: number; d: number; idf?: 'field' | 'tool' | 'mean'; idfFields?: readonly boolean[] };

/** One distinct token (a part of a word, as `splitWords` yields it) met while indexing: its term's
 *  number in the dictionary (-1: left out of the postings) and the field it was last counted in. */
type Token = { term: number; stamp: number };

/**
 * Terms numbered for good: an analysed tool names its terms by these numbers, so that a later build
 * sharing the dictionary takes the tool over without looking its terms up. Only grows.
 */
export class TermDictionary {
  private readonly numbers = new Map<string, number>();
  readonly terms: string[] = [];

  /** The number of `term`, numbering it when new. */
  number(term: string): number {
    let n = this.numbers.get(term);
    if (n === undefined) {
      n = this.terms.length;
      this.numbers.set(term, n);
      this.terms.push(term);
    }
    return n;
  }
}

/**
 * A tool's fields as the index counts them (`TermIndexBuilder.analyse`), ready to add to any build over
 * the same dictionary, fields and normalisation. For F fields and n terms: each field's length (distinct
 * tokens, dropped ones included) at [f]; where each field's terms end at [F + f] (so n at [2F - 1]);
 * the terms (dictionary numbers), field after field, each field's in the order first met, from [2F];
 * each one's count in its field from [2F + n]. 2F + 2n numbers in all.
 */
export type AnalysedTool = Int32Array;

/** How many numbers `tool` (an `AnalysedTool` of `fieldCount` fields) takes, from its start. */
export function analysedLength(tool: Int32Array, fieldCount: number, start = 0): number {
  return 2 * fieldCount + 2 * tool[start + 2 * fieldCount - 1];
}

// minisearch's BM25+ (its `calcBM25Score`) in two parts, the term's and each tool's, kept to the same
// operations so that the floats come out equal: invDocFreq * (d + tf (k + 1) / (tf + k (1 - b + b len / avg))).
function invDocFreq(matchingCount: number, totalCount: number): number {
  return Math.log(1 + (totalCount - matchingCount + 0.5) / (matchingCount + 0.5));
}
function bm25(idf: number, termFreq: number, fieldLength: number, avgFieldLength: number, p: Bm25Params): number {
  return idf * (p.d + (termFreq * (p.k + 1)) / (termFreq + p.k * (1 - p.b + (p.b * fieldLength) / avgFieldLength)));
}

/** An Int32Array that grows (doubling) on demand, zeros beyond what was written, and how much of it is
 *  in use (`length`, kept by the user). `grow` may replace `array` by a bigger copy. */
export class Int32List {
  array: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.array = new Int32Array(Math.max(16, capacity));
  }
  /** Makes room for `n` numbers. */
  grow(n: number): void {
    if (n <= this.array.length) return;
    const bigger = new Int32Array(Math.max(n, 2 * this.array.length));
    bigger.set(this.array);
    this.array = bigger;
  }
}

/**
 * Values by word, looked up by the word's span in a larger string, so that a word met again costs no new
 * string (a catalogue's text is millions of words over a vocabulary of thousands; a Map needs the word cut
 * out and hashed, and that was the build's largest single cost). Open addressing over FNV-1a hashes, at
 * most half full.
 */
/** FNV-1a's offset basis; a span's hash is FNV-1a over its UTF-16 code units (Math.imul by the FNV prime). */
const SPAN_HASH_SEED = 0x811c9dc5;

export class SpanTable<T> {
  private slots = new Int32Array(1 << 12).fill(-1);
  private readonly hashes: number[] = [];
  private readonly keys: string[] = [];
  private readonly values: T[] = [];

  /** @param make - the value of a word met for the first time */
  constructor(private readonly make: (word: string) => T) {}

  /** The value of `source.slice(start, end)`, made when that word is new. */
  get(source: string, start: number, end: number): T {
    let h = SPAN_HASH_SEED;
    for (let i = start; i < end; i += 1) h = Math.imul(h ^ source.charCodeAt(i), 16777619);
    return this.getHashed(source, start, end, h);
  }

  /** {@link get} with the span's hash already computed (`spanHash` of the same characters). */
  getHashed(source: string, start: number, end: number, h: number): T {
    const mask = this.slots.length - 1;
    let at = h & mask;
    for (let id = this.slots[at]; id >= 0; id = this.slots[at]) {
      if (this.hashes[id] === h) {
        const key = this.keys[id];
        if (key.length === end - start && source.startsWith(key, start)) return this.values[id];
      }
      at = (at + 1) & mask;
    }
    const word = source.slice(start, end);
    const value = this.make(word);
    this.slots[at] = this.keys.length;
    this.keys.push(word);
    this.hashes.push(h);
    this.values.push(value);
    if (2 * this.keys.length > this.slots.length) this.grow();
    return value;
  }

  private grow(): void {
    const slots = new Int32Array(2 * this.slots.length).fill(-1);
    const mask = slots.length - 1;
    this.hashes.forEach((h, id) => {
      let at = h & mask;
      while (slots[at] >= 0) at = (at + 1) & mask;
      slots[at] = id;
    });
    this.slots = slots;
  }
}

/** Adds tools to an index under construction, in tool order, field by field. */
export class TermIndexBuilder {
  /** This build's terms in the order first met (the packed index and its radix tree keep that order),
   *  and each dictionary number's place in it, plus one (0: not met yet). */
  private readonly termList: string[] = [];
  private readonly local = new Int32List(1024);
  /** Per dictionary number: the field it was last counted in while analysing, and where in that field's list. */
  private readonly termStamp = new Int32List(1024);
  private readonly termAt = new Int32List(1024);
  /** Token -> its term; per word, its tokens: the same words recur across a whole catalogue. */
  private readonly tokens = new Map<string, Token>();
  private readonly words = new SpanTable<Token[]>((word) => identifierParts(word).map((part) => this.token(part)));
  /** Every tool's terms (this build's numbers) and their counts, tool after tool, field after field;
   *  where each tool's field ends in them, at [tool * F + f]; how many tools hold each term in each
   *  field, at [term * F + f]. */
  private readonly occurrenceTerms: Int32List;
  private readonly occurrenceCounts: Int32List;
  private occurrences = 0;
  private readonly fieldEnds: Int32Array;
  private readonly holders = new Int32List(1024);
  private readonly lengths: Int32Array[];
  private readonly avgLengths: number[];
  private added = 0;
  private stamp = 0;
  // The field being analysed (set per field: `onWord` is created once, not per field).
  private length = 0;
  private fieldTerms: number[] = [];
  private fieldCounts: number[] = [];
  private readonly onWord = (source: string, start: number, end: number, cjk: boolean): void => {
    if (cjk) this.count(this.token(source));
    else for (const token of this.words.get(source, start, end)) this.count(token);
  };

  /**
   * @param size - number of tools that will be added
   * @param fieldCount - fields per tool
   * @param normalise - term of a token (stemming and the like); `null` leaves the token out of the postings
   *   (it still counts in the field's length, as in minisearch)
   * @param bm25Params - the scoring's BM25+ parameters
   * @param dictionary - the term numbers analysed tools use (shared with the builds whose tools are taken over)
   */
  constructor(
    private readonly size: number,
    private readonly fieldCount: number,
    private readonly normalise: (token: string) => string | null,
    private readonly bm25Params: Bm25Params,
    readonly dictionary = new TermDictionary(),
  ) {
    this.lengths = Array.from({ length: fieldCount }, () => new Int32Array(size));
    this.avgLengths = new Array<number>(fieldCount).fill(0);
    this.fieldEnds = new Int32Array(size * fieldCount);
    this.occurrenceTerms = new Int32List(size * 32);
    this.occurrenceCounts = new Int32List(size * 32);
  }

  /** Distinct terms met so far. */
  get termCount(): number {
    return this.termList.length;
  }

  /** Indexes the next tool: `fields[f]` is the text of field `f`. Throws past `size` tools. */
  add(fields: readonly string[]): void {
    this.addAnalysed(this.analyse(fields));
  }

  /**
   * The terms of one tool's fields (`fields[f]` is the text of field `f`), counted, without adding the
   * tool. Terms first met here take their place in the index's term order now: analyse a tool just
   * before adding it.
   */
  analyse(fields: readonly string[]): AnalysedTool {
    const F = this.fieldCount;
    const lengths: number[] = [];
    const ends: number[] = [];
    const terms: number[] = [];
    const counts: number[] = [];
    this.fieldTerms = terms;
    this.fieldCounts = counts;
    for (let f = 0; f < F; f += 1) {
      const text = fields[f] ?? '';
      // A field with an earlier field's text has its terms (a one-paragraph description is its own summary).
      const same = text.length > 0 ? fields.indexOf(text) : -1;
      if (same >= 0 && same < f) {
        for (let i = same === 0 ? 0 : ends[same - 1]; i < ends[same]; i += 1) {
          terms.push(terms[i]);
          counts.push(counts[i]);
        }
        lengths.push(lengths[same]);
        ends.push(terms.length);
        continue;
      }
      this.length = 0;
      this.stamp += 1;
      if (isAscii(text)) this.asciiWords(text);
      else forEachWordSpan(text, this.onWord);
      lengths.push(this.length);
      ends.push(terms.length);
    }
    const tool = new Int32Array(2 * F + 2 * terms.length);
    tool.set(lengths, 0);
    tool.set(ends, F);
    tool.set(terms, 2 * F);
    tool.set(counts, 2 * F + terms.length);
    return tool;
  }

  /** Adds the next tool from its analysis (by a builder over the same dictionary, fields and
   *  normalisation). Throws past `size` tools. */
  addAnalysed(tool: AnalysedTool): void {
    if (this.added >= this.size) throw new Error(`TermIndexBuilder: more than ${this.size} tools added`);
    const doc = this.added;
    const F = this.fieldCount;
    const n = tool[2 * F - 1];
    let k = this.occurrences;
    this.occurrenceTerms.grow(k + n);
    this.occurrenceCounts.grow(k + n);
    const occurrenceTerms = this.occurrenceTerms.array;
    const occurrenceCounts = this.occurrenceCounts.array;
    let i = 0;
    for (let f = 0; f < F; f += 1) {
      for (const end = tool[F + f]; i < end; i += 1) {
        const term = this.localNumber(tool[2 * F + i]);
        occurrenceTerms[k] = term;
        occurrenceCounts[k] = tool[2 * F + n + i];
        k += 1;
        this.holders.array[term * F + f] += 1;
      }
      this.fieldEnds[doc * F + f] = k;
      const length = tool[f];
      this.lengths[f][doc] = length;
      // minisearch's running mean, operation for operation (its `addFieldLength`).
      this.avgLengths[f] = (this.avgLengths[f] * doc + length) / (doc + 1);
    }
    this.occurrences = k;
    this.added += 1;
  }

  /** The index of the tools added: postings packed term by term, field by field, in tool order, each
   *  with its BM25+ score. */
  finish(): TermIndex {
    const F = this.fieldCount;
    const termCount = this.termList.length;
    const holders = this.holders.array;
    // Where each term's postings in each field start: terms in order, fields in order.
    const starts = new Int32Array(termCount * F + 1);
    for (let k = 0; k < termCount * F; k += 1) starts[k + 1] = starts[k] + holders[k];
    const total = starts[termCount * F];
    const ids = new Int32Array(total);
    const counts = new Int32Array(total);
    const next = starts.slice(0, termCount * F);
    const occurrenceTerms = this.occurrenceTerms.array;
    const occurrenceCounts = this.occurrenceCounts.array;
    let k = 0;
    for (let doc = 0; doc < this.added; doc += 1) {
      for (let f = 0; f < F; f += 1) {
        for (const end = this.fieldEnds[doc * F + f]; k < end; k += 1) {
          const at = next[occurrenceTerms[k] * F + f]++;
          ids[at] = doc;
          counts[at] = occurrenceCounts[k];
        }
      }
    }
    const scores = new Float64Array(total);
    const terms = new Map<string, TermEntry>();
    const idfOf = this.bm25Params.idf ?? 'field';
    const perTool = idfOf !== 'field';
    const lastTool = perTool ? new Int32Array(this.added).fill(-1) : undefined;
    for (let term = 0; term < termCount; term += 1) {
      const entry = new Int32Array(2 * F);
      // 'tool': the tools holding the term in any field (each once), the same rarity in every field.
      let holding = 0;
      if (lastTool !== undefined) {
        for (let f = 0; f < F; f += 1) {
          if (this.bm25Params.idfFields?.[f] === false) continue;
          for (let j = starts[term * F + f]; j < starts[term * F + f + 1]; j += 1) {
            if (lastTool[ids[j]] === term) continue;
            lastTool[ids[j]] = term;
            holding += 1;
          }
        }
      }
      for (let f = 0; f < F; f += 1) {
        const from = starts[term * F + f];
        const to = starts[term * F + f + 1];
        entry[2 * f] = from;
        entry[2 * f + 1] = to;
        if (from === to) continue;
        const idf =
          idfOf === 'field'
            ? invDocFreq(to - from, this.added)
            : idfOf === 'tool'
              ? invDocFreq(Math.max(holding, to - from), this.added)
              : (invDocFreq(Math.max(holding, to - from), this.added) + invDocFreq(to - from, this.added)) / 2;
        const lengths = this.lengths[f];
        const avgLength = this.avgLengths[f];
        for (let j = from; j < to; j += 1) scores[j] = bm25(idf, counts[j], lengths[ids[j]], avgLength, this.bm25Params);
      }
      terms.set(this.termList[term], entry);
    }
    return new TermIndex(this.added, terms, ids, scores);
  }

  /** This build's number of dictionary term `d`, numbering it when first met. */
  private localNumber(d: number): number {
    if (d >= this.local.array.length) this.local.grow(d + 1);
    let n = this.local.array[d] - 1;
    if (n < 0) {
      n = this.termList.length;
      this.termList.push(this.dictionary.terms[d]);
      this.local.array[d] = n + 1;
      this.holders.grow((n + 1) * this.fieldCount);
    }
    return n;
  }

  private token(text: string): Token {
    let token = this.tokens.get(text);
    if (token === undefined) {
      const normalised = this.normalise(text);
      let term = -1;
      if (normalised) {
        term = this.dictionary.number(normalised);
        this.localNumber(term);
        this.termStamp.grow(term + 1);
        this.termAt.grow(term + 1);
      }
      token = { term, stamp: 0 };
      this.tokens.set(text, token);
    }
    return token;
  }

  /**
   * The words of ASCII-only `text` counted in one pass: each word found as `forEachWordSpan` finds it
   * (letters and digits, continued by a joiner `_ - . '` before another run, or `&` between letters), hashed as it is read, and
   * looked up by its span. The same counts as `forEachWordSpan(text, this.onWord)`, without a span list,
   * a callback or a second pass over each word per occurrence (most catalogue text is ASCII).
   */
  private asciiWords(text: string): void {
    const n = text.length;
    let i = 0;
    while (i < n) {
      let c = text.charCodeAt(i);
      while (!isAlnum(c)) {
        i += 1;
        if (i === n) return;
        c = text.charCodeAt(i);
      }
      const start = i;
      let h = SPAN_HASH_SEED;
      for (;;) {
        while (i < n && isAlnum(c)) {
          h = Math.imul(h ^ c, 16777619);
          i += 1;
          c = text.charCodeAt(i);
        }
        if (
          (c === 95 || c === 45 || c === 46 || c === 39 || (c === 38 && isLetter(text.charCodeAt(i - 1)) && isLetter(text.charCodeAt(i + 1)))) &&
          i + 1 < n &&
          isAlnum(text.charCodeAt(i + 1))
        ) {
          h = Math.imul(h ^ c, 16777619);
          i += 1;
          c = text.charCodeAt(i);
        } else break;
      }
      const tokens = this.words.getHashed(text, start, i, h);
      for (let t = 0; t < tokens.length; t += 1) this.count(tokens[t]);
    }
  }

  /** Counts one token of the field being analysed: in the field's length when first met in it, and for
   *  its term. */
  private count(token: Token): void {
    if (token.stamp !== this.stamp) {
      token.stamp = this.stamp;
      this.length += 1;
    }
    const term = token.term;
    if (term < 0) return;
    const stamps = this.termStamp.array;
    if (stamps[term] !== this.stamp) {
      stamps[term] = this.stamp;
      this.termAt.array[term] = this.fieldTerms.length;
      this.fieldTerms.push(term);
      this.fieldCounts.push(1);
    } else this.fieldCounts[this.termAt.array[term]] += 1;
  }
}
