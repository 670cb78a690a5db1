/**
 * Which server a request is about, before which tool: each upstream scored as one document made of its
 * tools, by how well it covers the query's terms (for each term, the best score of that term among the
 * upstream's visible tools, in the fields and weights of the tool ranking; summed over the terms). A
 * server whose tools between them hold every word of a multi-step request ("plan a bike route ... with
 * the travel time": the route in one tool, the time in another) outscores a server with one tool that
 * holds the rarest word. The engine lifts the tools of the servers so chosen when the choice is clear,
 * and keeps the flat ranking when it is not (search/engine/tool-index.ts).
 */
import type { QueryTerm } from './query-scores.ts';
import type { FieldRun, TermIndex } from './term-index.ts';

/** The upstreams' scores of one query: `scores[u]` for upstream number `u`; `best`, `second` the two highest. */
export type ServerScores = { scores: Float64Array; best: number; second: number };

/** Scores upstreams for term lists over one index. Working arrays sized once; not reentrant. */
export class ServerChooser {
  private readonly scores: Float64Array;
  private readonly termBest: Float64Array;
  private readonly touched: Int32Array;

  constructor(
    private readonly index: TermIndex,
    private readonly runs: readonly FieldRun[],
    private readonly upstreamOf: Int32Array,
    upstreamCount: number,
  ) {
    this.scores = new Float64Array(upstreamCount);
    this.termBest = new Float64Array(upstreamCount);
    this.touched = new Int32Array(upstreamCount);
  }

  /** Each upstream's coverage of `terms` among the tools with `visible[id] === 1`. The array returned is
   *  this chooser's own: valid until the next call. */
  score(terms: readonly QueryTerm[], visible: Uint8Array): ServerScores {
    const { scores, termBest, touched, upstreamOf } = this;
    const { ids, scores: postings } = this.index;
    scores.fill(0);
    for (const term of terms) {
      let n = 0;
      for (const { entry, weight } of term.matches) {
        for (const run of this.runs) {
          for (let i = 0; i < run.fields.length; i += 1) {
            const f = run.fields[i];
            const factor = weight * (run.boosts[i] || 1);
            for (let j = entry[2 * f], to = entry[2 * f + 1]; j < to; j += 1) {
              const id = ids[j];
              if (visible[id] !== 1) continue;
              const u = upstreamOf[id];
              const s = factor * postings[j];
              if (termBest[u] === 0) touched[n++] = u;
              if (s > termBest[u]) termBest[u] = s;
            }
          }
        }
      }
      for (let i = 0; i < n; i += 1) {
        const u = touched[i];
        scores[u] += termBest[u];
        termBest[u] = 0;
      }
    }
    let best = 0;
    let second = 0;
    for (let u = 0; u < scores.length; u += 1) {
      const s = scores[u];
      if (s > best) {
        second = best;
        best = s;
      } else if (s > second) second = s;
    }
    return { scores, best, second };
  }
}
