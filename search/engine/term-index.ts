/**
 * The inverted index under the tool search: per term and field, the tools holding the term (postings,
 * in tool order) with the term's BM25+ score in that field of that tool, computed once at build time.
 * Scores are exactly minisearch 7's (same formula and operations, field length = distinct tokens of
 * the field, same running mean of lengths, same prefix and fuzzy weights), prefix terms are found in
 * minisearch's own radix tree (`minisearch/SearchableMap`) and fuzzy ones as its walk of that tree finds
 * them (`fuzzyGet` below: the same terms in the same order, 4-6x faster at 10,000 tools): rankings are the
 * ones a `MiniSearch` index gives, bit for bit (tests/unit/search/term-index.test.ts compares them).
 *
 * Why not a `MiniSearch` instance: at 10,000 tools its build takes 1.7-2.5 s, and the lookups alone of
 * the shared queries (one `search` per term and field, the least the ranking needs; each makes a result
 * object, a stored-fields copy and a sort per matching tool) 3.4-5.7 ms p50 and 25-40 ms p99 (2 shared
 * cores, load average 3-6), against a 0.5 s build and a whole search in 0.2 ms p50 / 1.9 ms p99 here
 * (load average 1.5; `npm run bench:search-scale -- --minisearch`).
 * Tools are numbered by position; nothing is removed or added after the build.
 */
import { distance as editDistance } from 'fastest-levenshtein';
import SearchableMap from 'minisearch/SearchableMap';

/**
 * A built term: where its postings lie in the index's packed arrays, per field number `f`: from
 * `[2f]` to `[2f + 1]` (equal when the field does not hold the term).
 */
export type TermEntry = Int32Array;

/** The fields one query term is scored in, summed (minisearch's `fields` and `boost` options). */
export type FieldRun = {
  /** Field numbers, in order, and each one's weight (minisearch reads a weight of 0 as 1). */
  fields: readonly number[];
  boosts: readonly number[];
};

/** Which other indexed terms a query term also matches (minisearch's `prefix` and `fuzzy` options). */
export type Expansion = {
  /** Terms that extend the query term. */
  prefix: boolean;
  /** Terms within this edit distance: a fraction of the term's length below 1, else a count; false: none. */
  fuzzy: number | false;
};

/** Indexed terms one query term matches: itself and its prefix and fuzzy expansions, each with its weight
 *  (1 for the term itself), in the order minisearch scores them. */
export type TermMatches = { entry: TermEntry; weight: number }[];

/** Scores of the tools matching one query term: `ids` in the order first matched, `scores` alike. */
export type TermHits = { ids: Int32Array; scores: Float64Array };

const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;
/** The weight minisearch gives an indexed term `distance` edits away from the query term (its fuzzy weight). */
export function fuzzyWeight(termLength: number, distance: number): number {
  return (FUZZY_WEIGHT * termLength) / (termLength + distance);
}
const NO_HITS: TermHits = { ids: new Int32Array(0), scores: new Float64Array(0) };

/** A built index: read-only. */
export class TermIndex {
  /** The terms in a radix tree, for prefix and fuzzy matching; built on first need. */
  private tree: SearchableMap<TermEntry> | undefined;
  /** The terms by bigram, for fuzzy matching; built on first need. */
  private grams: BigramIndex | undefined;
  // Scratch of `hits`: score and "already matched" per tool, reset after each use.
  private readonly acc: Float64Array;
  private readonly seen: Uint8Array;

  /**
   * @param ids - every term's postings, packed (see `TermEntry`): the tool of each posting; built by
   *   `TermIndexBuilder`. Read-only, like `scores` (the query scorer reads both in place).
   * @param scores - BM25+ of each posting's term in its field of its tool
   */
  constructor(
    readonly size: number,
    private readonly terms: Map<string, TermEntry>,
    readonly ids: Int32Array,
    readonly scores: Float64Array,
  ) {
    this.acc = new Float64Array(size);
    this.seen = new Uint8Array(size);
  }

  /** Calls `fn` with every indexed term and its entry, in the index's term order. */
  forEachTerm(fn: (term: string, entry: TermEntry) => void): void {
    for (const [term, entry] of this.terms) fn(term, entry);
  }

  /** The entry of `term` (already normalised), if indexed. */
  entry(term: string): TermEntry | undefined {
    return this.terms.get(term);
  }

  /** What `term` (already normalised) matches: the term itself, then its expansions (minisearch's
   *  `executeQuerySpec`: prefix terms, then fuzzy ones not already found as prefixes). */
  matches(term: string, x: Expansion): TermMatches {
    const out: TermMatches = [];
    const exact = this.terms.get(term);
    if (exact !== undefined) out.push({ entry: exact, weight: 1 });
    if (!x.prefix && !x.fuzzy) return out;
    let fuzzy: Map<string, [TermEntry, number]> | undefined;
    if (x.fuzzy) {
      const maxDistance = x.fuzzy < 1 ? Math.min(MAX_FUZZY, Math.round(term.length * x.fuzzy)) : x.fuzzy;
      if (maxDistance) fuzzy = this.fuzzyGet(term, maxDistance);
    }
    if (x.prefix) {
      this.tree ??= SearchableMap.from(this.terms);
      for (const [other, entry] of this.tree.atPrefix(term)) {
        const distance = other.length - term.length;
        if (!distance) continue;
        fuzzy?.delete(other);
        out.push({ entry, weight: (PREFIX_WEIGHT * other.length) / (other.length + 0.3 * distance) });
      }
    }
    if (fuzzy) {
      for (const [other, [entry, distance]] of fuzzy) {
        if (distance) out.push({ entry, weight: fuzzyWeight(other.length, distance) });
      }
    }
    return out;
  }

  /**
   * The indexed terms within `maxDistance` edits (Levenshtein, UTF-16 code units) of `term`, each with its
   * distance, in the order minisearch's radix-tree walk (`SearchableMap.fuzzyGet`) finds them: the same Map,
   * entry for entry (tests/unit/search/term-index-fuzzy.test.ts). Found by a count of shared bigrams
   * instead of the walk, which visits most of a large index's short branches for two edits: a term within k
   * edits of another shares at least max(|s|, |t|) - 1 - 2k of its bigrams, as multisets (Ukkonen,
   * "Approximate string-matching with q-grams and maximal matches", 1992), so every term it can be is among
   * those counted, and each is checked by its distance. Where that bound is not positive (a short term, many
   * edits), the walk itself.
   */
  private fuzzyGet(term: string, maxDistance: number): Map<string, [TermEntry, number]> {
    const length = term.length;
    if (length - 1 - 2 * maxDistance <= 0) {
      this.tree ??= SearchableMap.from(this.terms);
      return this.tree.fuzzyGet(term, maxDistance);
    }
    const g = (this.grams ??= new BigramIndex(this.terms, () => (this.tree ??= SearchableMap.from(this.terms))));
    const found: [id: number, distance: number][] = [];
    for (const id of g.sharing(term)) {
      const other = g.terms[id];
      if (Math.abs(other.length - length) > maxDistance) continue;
      if (g.shared(id) < Math.max(length, other.length) - 1 - 2 * maxDistance) continue;
      const distance = editDistance(term, other);
      if (distance <= maxDistance) found.push([id, distance]);
    }
    g.clear();
    found.sort((a, b) => g.walkRank(a[0]) - g.walkRank(b[0]));
    return new Map(found.map(([id, distance]) => [g.terms[id], [this.terms.get(g.terms[id])!, distance]]));
  }

  /** Sets `marks[id]` to 1 for every tool that `matches` finds in any of `fields`. */
  mark(matches: TermMatches, fields: readonly number[], marks: Uint8Array): void {
    for (const { entry } of matches) {
      for (const f of fields) for (let j = entry[2 * f]; j < entry[2 * f + 1]; j += 1) marks[this.ids[j]] = 1;
    }
  }

  /**
   * Scores of the tools `matches` finds in the fields of `run`, those with `visible[id] === 1` only: each
   * posting's BM25+ times the field's boost, times the match's weight, summed over fields and matches in
   * minisearch's order (its `termResults`).
   */
  hits(matches: TermMatches, run: FieldRun, visible: Uint8Array): TermHits {
    // The common case, one indexed term in one field: each tool appears once, nothing to sum.
    if (matches.length === 1 && run.fields.length === 1) {
      const { entry, weight } = matches[0];
      const f = run.fields[0];
      const from = entry[2 * f];
      const to = entry[2 * f + 1];
      if (from === to) return NO_HITS;
      const factor = weight * (run.boosts[0] || 1);
      const out: TermHits = { ids: new Int32Array(to - from), scores: new Float64Array(to - from) };
      let n = 0;
      for (let j = from; j < to; j += 1) {
        const id = this.ids[j];
        if (visible[id] !== 1) continue;
        out.ids[n] = id;
        // minisearch: termWeight * termBoost(1) * fieldBoost * docBoost(1) * rawScore, left to right.
        out.scores[n] = factor * this.scores[j];
        n += 1;
      }
      return { ids: out.ids.subarray(0, n), scores: out.scores.subarray(0, n) };
    }
    const found: number[] = [];
    try {
      for (const { entry, weight } of matches) {
        for (let i = 0; i < run.fields.length; i += 1) {
          const f = run.fields[i];
          const factor = weight * (run.boosts[i] || 1);
          for (let j = entry[2 * f]; j < entry[2 * f + 1]; j += 1) {
            const id = this.ids[j];
            if (visible[id] !== 1) continue;
            this.acc[id] += factor * this.scores[j];
            if (this.seen[id] === 0) {
              this.seen[id] = 1;
              found.push(id);
            }
          }
        }
      }
      return { ids: Int32Array.from(found), scores: Float64Array.from(found, (id) => this.acc[id]) };
    } finally {
      for (const id of found) {
        this.acc[id] = 0;
        this.seen[id] = 0;
      }
    }
  }
}

/**
 * Every indexed term's bigrams (pairs of UTF-16 code units, as multisets): per bigram, the terms holding it
 * and how often. `sharing(term)` counts, per indexed term, the bigrams it shares with `term` (the multiset
 * intersection's size), read back with `shared(id)` until `clear()`. Also each term's place in minisearch's
 * radix-tree walk (`walkRank`), so fuzzy matches keep the order minisearch gives them.
 */
class BigramIndex {
  readonly terms: string[];
  private readonly postings = new Map<number, { ids: Int32Array; counts: Uint16Array }>();
  private readonly counts: Int32Array;
  private readonly touched: number[] = [];
  private rank: Int32Array | undefined;

  /** @param tree - the index's radix tree (built on first need), for `walkRank` */
  constructor(
    source: Map<string, TermEntry>,
    private readonly tree: () => SearchableMap<TermEntry>,
  ) {
    this.terms = [...source.keys()];
    const lists = new Map<number, { ids: number[]; counts: number[] }>();
    const own = new Map<number, number>();
    this.terms.forEach((term, id) => {
      own.clear();
      for (let i = 0; i + 1 < term.length; i += 1) {
        const gram = term.charCodeAt(i) * 65536 + term.charCodeAt(i + 1);
        own.set(gram, (own.get(gram) ?? 0) + 1);
      }
      for (const [gram, n] of own) {
        let list = lists.get(gram);
        if (list === undefined) lists.set(gram, (list = { ids: [], counts: [] }));
        list.ids.push(id);
        list.counts.push(n);
      }
    });
    for (const [gram, list] of lists) this.postings.set(gram, { ids: Int32Array.from(list.ids), counts: Uint16Array.from(list.counts) });
    this.counts = new Int32Array(this.terms.length);
  }

  /** The ids of the indexed terms sharing a bigram with `term`; their shared counts are set (see `shared`). */
  sharing(term: string): readonly number[] {
    const own = new Map<number, number>();
    for (let i = 0; i + 1 < term.length; i += 1) {
      const gram = term.charCodeAt(i) * 65536 + term.charCodeAt(i + 1);
      own.set(gram, (own.get(gram) ?? 0) + 1);
    }
    for (const [gram, n] of own) {
      const list = this.postings.get(gram);
      if (list === undefined) continue;
      for (let j = 0; j < list.ids.length; j += 1) {
        const id = list.ids[j];
        if (this.counts[id] === 0) this.touched.push(id);
        this.counts[id] += Math.min(n, list.counts[j]);
      }
    }
    return this.touched;
  }

  shared(id: number): number {
    return this.counts[id];
  }

  clear(): void {
    for (const id of this.touched) this.counts[id] = 0;
    this.touched.length = 0;
  }

  /** Where `fuzzyGet`'s walk meets the term: its tree iterator lists every term in exactly the reverse order. */
  walkRank(id: number): number {
    if (this.rank === undefined) {
      const ids = new Map(this.terms.map((term, i) => [term, i]));
      this.rank = new Int32Array(this.terms.length);
      let r = this.terms.length;
      for (const term of this.tree().keys()) this.rank[ids.get(term)!] = --r;
    }
    return this.rank[id];
  }
}
