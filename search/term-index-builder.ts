/**
 * Builds a `TermIndex` tool by tool: tokens per field (each distinct word split and normalised once per
 * build), postings per term and field, field lengths, then the packed postings with each one's BM25+.
 */
import { TermIndex, type TermEntry } from './term-index.ts';
import { forEachWord, identifierParts } from './tokenize.ts';

/** BM25+ parameters (minisearch's names): term-frequency saturation k, length normalisation b, floor d. */
export type Bm25Params = { k: number; b: number; d: number };

/** While building: tools holding one term in one field, in tool order, with the term's count in each. */
type Postings = { ids: number[]; counts: number[] };
type Building = (Postings | undefined)[];

/** One distinct token (a part of a word, as `splitWords` yields it) met while indexing. */
type Token = { term: Building | undefined; stamp: number };

// minisearch's BM25+ (its `calcBM25Score`) in two parts, the term's and each tool's, kept to the same
// operations so that the floats come out equal: invDocFreq * (d + tf (k + 1) / (tf + k (1 - b + b len / avg))).
function invDocFreq(matchingCount: number, totalCount: number): number {
  return Math.log(1 + (totalCount - matchingCount + 0.5) / (matchingCount + 0.5));
}
function bm25(idf: number, termFreq: number, fieldLength: number, avgFieldLength: number, p: Bm25Params): number {
  return idf * (p.d + (termFreq * (p.k + 1)) / (termFreq + p.k * (1 - p.b + (p.b * fieldLength) / avgFieldLength)));
}

/** Adds tools to an index under construction, in tool order, field by field. */
export class TermIndexBuilder {
  private readonly terms = new Map<string, Building>();
  /** Token -> its term; per word, its tokens: the same words recur across a whole catalogue. */
  private readonly tokens = new Map<string, Token>();
  private readonly words = new Map<string, Token[]>();
  private readonly lengths: Int32Array[];
  private readonly avgLengths: number[];
  private added = 0;
  private postings = 0;
  private stamp = 0;
  // The document and field being read (set per field: `onWord` is created once, not per field).
  private doc = 0;
  private field = 0;
  private length = 0;
  private readonly onWord = (word: string, cjk: boolean): void => {
    if (cjk) this.count(this.token(word));
    else for (const token of this.wordTokens(word)) this.count(token);
  };

  /**
   * @param size - number of tools that will be added
   * @param fieldCount - fields per tool
   * @param normalise - term of a token (stemming and the like); `null` leaves the token out of the postings
   *   (it still counts in the field's length, as in minisearch)
   * @param bm25Params - the scoring's BM25+ parameters
   */
  constructor(
    private readonly size: number,
    private readonly fieldCount: number,
    private readonly normalise: (token: string) => string | null,
    private readonly bm25Params: Bm25Params,
  ) {
    this.lengths = Array.from({ length: fieldCount }, () => new Int32Array(size));
    this.avgLengths = new Array<number>(fieldCount).fill(0);
  }

  /** Indexes the next tool: `fields[f]` is the text of field `f`. Throws past `size` tools. */
  add(fields: readonly string[]): void {
    if (this.added >= this.size) throw new Error(`TermIndexBuilder: more than ${this.size} tools added`);
    this.doc = this.added;
    for (let f = 0; f < this.fieldCount; f += 1) {
      this.field = f;
      this.length = 0;
      this.stamp += 1;
      forEachWord(fields[f] ?? '', this.onWord);
      this.lengths[f][this.doc] = this.length;
      // minisearch's running mean, operation for operation (its `addFieldLength`).
      this.avgLengths[f] = (this.avgLengths[f] * this.doc + this.length) / (this.doc + 1);
    }
    this.added += 1;
  }

  /** The index of the tools added: postings packed, each with its BM25+ score. */
  finish(): TermIndex {
    const ids = new Int32Array(this.postings);
    const scores = new Float64Array(this.postings);
    const terms = new Map<string, TermEntry>();
    let at = 0;
    for (const [term, building] of this.terms) {
      const entry = new Int32Array(2 * this.fieldCount);
      for (let f = 0; f < this.fieldCount; f += 1) {
        entry[2 * f] = at;
        const postings = building[f];
        if (postings !== undefined) {
          const idf = invDocFreq(postings.ids.length, this.added);
          for (let j = 0; j < postings.ids.length; j += 1) {
            const id = postings.ids[j];
            ids[at] = id;
            scores[at] = bm25(idf, postings.counts[j], this.lengths[f][id], this.avgLengths[f], this.bm25Params);
            at += 1;
          }
        }
        entry[2 * f + 1] = at;
      }
      terms.set(term, entry);
    }
    return new TermIndex(this.added, terms, ids, scores);
  }

  private token(text: string): Token {
    let token = this.tokens.get(text);
    if (token === undefined) {
      const normalised = this.normalise(text);
      let term: Building | undefined;
      if (normalised) {
        term = this.terms.get(normalised);
        if (term === undefined) this.terms.set(normalised, (term = []));
      }
      token = { term, stamp: 0 };
      this.tokens.set(text, token);
    }
    return token;
  }

  private wordTokens(word: string): Token[] {
    let tokens = this.words.get(word);
    if (tokens === undefined) {
      tokens = identifierParts(word).map((part) => this.token(part));
      this.words.set(word, tokens);
    }
    return tokens;
  }

  private count(token: Token): void {
    if (token.stamp !== this.stamp) {
      token.stamp = this.stamp;
      this.length += 1;
    }
    if (token.term === undefined) return;
    const postings = (token.term[this.field] ??= { ids: [], counts: [] });
    const last = postings.ids.length - 1;
    if (last >= 0 && postings.ids[last] === this.doc) postings.counts[last] += 1;
    else {
      postings.ids.push(this.doc);
      postings.counts.push(1);
      this.postings += 1;
    }
  }
}
