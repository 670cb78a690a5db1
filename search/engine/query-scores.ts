/**
 * How one list of query terms scores the tools, from each term's postings per field group ("run"): a
 * run's score is the sum of its terms' scores (minisearch's OR); runs combine dismax-style (the best run
 * plus `tieBreaker` x the others; one run for 'sum' and 'bm25f'); then the coordination factor,
 * (distinct query terms matched) ^ `coordination`; then the server context, `weight` x the best score
 * among the tools of the tool's upstream (a request about one server's domain, maps or Word documents,
 * lifts that server's tools above lone matches elsewhere).
 *
 * Every tool's score is computed with the same floating-point operations, in the same order, as summing
 * term by term within each run, then run by run, then adding the context: only the loops around them are
 * arranged for speed (term-major over the packed postings, sums in flat typed arrays, nothing allocated
 * per tool), so rankings do not depend on this arrangement.
 */
import type { Scores } from './scores.ts';
import type { FieldRun, TermHits, TermIndex, TermMatches } from './term-index.ts';

/** One query term of a search: what it matches, and (filled on first need, shared by every list of the
 *  search that holds the term) its hits per run when those cannot be read straight from the postings. */
export type QueryTerm = { matches: TermMatches; runHits?: (TermHits | undefined)[] };

/** Server context: `upstreamOf[id]` numbers tool `id`'s upstream below `upstreamCount`; 0 `weight`: none. */
export type UpstreamContext = { upstreamOf: Int32Array; upstreamCount: number; weight: number };

/** How a list's scores are made from its terms' (see the module docstring). */
export type ListScoring = {
  /** Field groups scored apart, combined dismax-style. */
  runs: readonly FieldRun[];
  /** Share of the non-best runs' scores added to the best run's. */
  tieBreaker: number;
  /** Factor per number of distinct terms matched (`coordinationFactors`). */
  coordination: Float64Array;
  context: UpstreamContext;
};

/** The coordination factor of a tool matching m distinct query terms, m ** `coordination`, for m up to
 *  `maxTerms`: a table, so that no power is computed per tool. */
export function coordinationFactors(coordination: number, maxTerms: number): Float64Array {
  return Float64Array.from({ length: maxTerms + 1 }, (_, m) => m ** coordination);
}

/**
 * Scores term lists over one index. Holds per-tool working arrays, sized once (about 9 bytes per tool and
 * run, plus 25 per tool and 8 per upstream): a search allocates nothing per tool. Between calls every
 * array is zero, except the term stamps, which only ever grow. Not reentrant: one `score` at a time (a
 * search runs start to end without yielding).
 */
export class ListScorer {
  private readonly size: number;
  /** Sum and number of the terms' scores per run and tool, at `run * size + id`: a term's postings in
   *  one field land in one stretch, in tool order. */
  private readonly sum: Float64Array;
  private readonly count: Uint8Array;
  /** Distinct terms of the list matching each tool (at most 255: lists hold at most 64 terms). */
  private readonly matched: Uint8Array;
  /** The term that last touched each tool: a tool counts once per term however many runs it matches. */
  private readonly stamp: Int32Array;
  private stamps = 0;
  /** Best score per upstream, for the context. */
  private readonly upstreamBest: Float64Array;
  /** The last list's scores: tools in the order first matched, and each one's score. */
  private readonly ids: Int32Array;
  private readonly scores: Float64Array;
  /** The last list's distinct terms matched per tool, in the order of `ids`. */
  private readonly termsMatched: Uint8Array;

  /** @param index - the term index whose postings are read */
  constructor(
    private readonly index: TermIndex,
    private readonly scoring: ListScoring,
  ) {
    const size = index.size;
    const runCount = scoring.runs.length;
    this.size = size;
    this.sum = new Float64Array(size * runCount);
    this.count = new Uint8Array(size * runCount);
    this.matched = new Uint8Array(size);
    this.stamp = new Int32Array(size);
    this.upstreamBest = new Float64Array(scoring.context.upstreamCount);
    this.ids = new Int32Array(size);
    this.scores = new Float64Array(size);
    this.termsMatched = new Uint8Array(size);
  }

  /**
   * Scores of the tools with `visible[id] === 1` matched by any of `terms` (at most as many as
   * `coordination` has factors, and at most 255), each tool once, in the order first matched, with the
   * highest of them as `top`, and how many distinct terms of the list each one matched (`matched`). The
   * arrays returned are views of this scorer's own: valid until the next call, and the caller may change them.
   */
  score(terms: readonly QueryTerm[], visible: Uint8Array): Scores & { top: number; matched: Uint8Array } {
    let n = 0;
    let top: number;
    try {
      for (const term of terms) n = this.addTerm(term, visible, n);
      top = this.finish(n);
    } catch (error) {
      // Nothing here throws on valid input; keep the arrays zero for the next search all the same.
      this.sum.fill(0);
      this.count.fill(0);
      this.matched.fill(0);
      this.upstreamBest.fill(0);
      throw error;
    }
    return { ids: this.ids.subarray(0, n), scores: this.scores.subarray(0, n), top, matched: this.termsMatched.subarray(0, n) };
  }

  /** Adds one term's scores in every run; returns the number of tools matched so far. */
  private addTerm(term: QueryTerm, visible: Uint8Array, n: number): number {
    const { sum, count, matched, stamp, ids, size } = this;
    const { runs } = this.scoring;
    if (this.stamps >= 0x7fffffff) {
      stamp.fill(0);
      this.stamps = 0;
    }
    const mark = (this.stamps += 1);
    const { matches } = term;
    if (matches.length === 0) return n;
    const postingIds = this.index.ids;
    const postingScores = this.index.scores;
    for (let r = 0; r < runs.length; r += 1) {
      const run = runs[r];
      const offset = r * size;
      if (matches.length === 1 && run.fields.length === 1) {
        // The common case, one indexed term in one field: read the postings in place. The score is the
        // one `TermIndex.hits` computes for it (weight x boost, times the posting's BM25+).
        const { entry, weight } = matches[0];
        const f = run.fields[0];
        const factor = weight * (run.boosts[0] || 1);
        for (let j = entry[2 * f], to = entry[2 * f + 1]; j < to; j += 1) {
          const id = postingIds[j];
          if (visible[id] !== 1) continue;
          if (stamp[id] !== mark) {
            stamp[id] = mark;
            if (matched[id]++ === 0) ids[n++] = id;
          }
          count[offset + id] += 1;
          sum[offset + id] += factor * postingScores[j];
        }
        continue;
      }
      term.runHits ??= new Array<TermHits | undefined>(runs.length);
      const hits = (term.runHits[r] ??= this.index.hits(matches, run, visible));
      const { ids: hitIds, scores: hitScores } = hits;
      for (let i = 0; i < hitIds.length; i += 1) {
        const id = hitIds[i];
        if (stamp[id] !== mark) {
          stamp[id] = mark;
          if (matched[id]++ === 0) ids[n++] = id;
        }
        count[offset + id] += 1;
        sum[offset + id] += hitScores[i];
      }
    }
    return n;
  }

  /** Each matched tool's score from its sums per run, then the context; clears the working arrays.
   *  Returns the highest score (0 when none is above 0). */
  private finish(n: number): number {
    const { sum, count, matched, ids, scores, size, upstreamBest, termsMatched } = this;
    const { tieBreaker, coordination, context } = this.scoring;
    const { upstreamOf, weight } = context;
    const end = size * this.scoring.runs.length;
    const withContext = weight > 0;
    let top = 0;
    for (let i = 0; i < n; i += 1) {
      const id = ids[i];
      let best = 0;
      let total = 0;
      for (let k = id; k < end; k += size) {
        const c = count[k];
        if (c === 0) continue;
        const s = sum[k];
        // minisearch multiplies a result by the number of query terms it matched; undone here (same
        // operations, same floats; x * 1 / 1 is x), the coordination factor is applied once below.
        const score = c === 1 ? s : (s * c) / c;
        if (score > best) best = score;
        total += score;
        sum[k] = 0;
        count[k] = 0;
      }
      const score = (best + tieBreaker * (total - best)) * coordination[matched[id]];
      scores[i] = score;
      termsMatched[i] = matched[id];
      matched[id] = 0;
      if (withContext) {
        const u = upstreamOf[id];
        if (score > upstreamBest[u]) upstreamBest[u] = score;
      } else if (score > top) top = score;
    }
    if (!withContext) return top;
    for (let i = 0; i < n; i += 1) {
      const score = (scores[i] += weight * upstreamBest[upstreamOf[ids[i]]]);
      if (score > top) top = score;
    }
    for (let i = 0; i < n; i += 1) upstreamBest[upstreamOf[ids[i]]] = 0;
    return top;
  }
}
