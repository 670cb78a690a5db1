/**
 * The inverted index under the tool search: per term and field, the tools holding the term (postings,
 * in tool order) with the term's BM25+ score in that field of that tool, computed once at build time.
 * Scores are exactly minisearch 7's (same formula and operations, field length = distinct tokens of
 * the field, same running mean of lengths, same prefix and fuzzy weights), and prefix and fuzzy terms
 * are found in minisearch's own radix tree (`minisearch/SearchableMap`): rankings are the ones a
 * `MiniSearch` index gives, bit for bit (tests/search/term-index.test.ts compares them).
 *
 * Why not a `MiniSearch` instance: at 10,000 tools its build takes 1.7-2.5 s, and the lookups alone of
 * the shared queries (one `search` per term and field, the least the ranking needs; each makes a result
 * object, a stored-fields copy and a sort per matching tool) 3.4-5.7 ms p50 and 25-40 ms p99 (2 shared
 * cores, load average 3-6), against a 0.5 s build and a whole search in 0.2 ms p50 / 1.9 ms p99 here
 * (load average 1.5; `npm run bench:search-scale -- --minisearch`).
 * Tools are numbered by position; nothing is removed or added after the build.
 */
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
    this.tree ??= SearchableMap.from(this.terms);
    let fuzzy: Map<string, [TermEntry, number]> | undefined;
    if (x.fuzzy) {
      const maxDistance = x.fuzzy < 1 ? Math.min(MAX_FUZZY, Math.round(term.length * x.fuzzy)) : x.fuzzy;
      if (maxDistance) fuzzy = this.tree.fuzzyGet(term, maxDistance);
    }
    if (x.prefix) {
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
