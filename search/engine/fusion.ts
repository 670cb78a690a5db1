/**
 * Fusion of score lists into one: a multi-step request's clauses (search/analysis/clauses.ts), each ranked
 * on its own, fused with the whole request's list so that every step gets a place near the top.
 */
import { topScore, type Scores } from './scores.ts';

/** How lists fuse: reciprocal-rank fusion (Cormack et al., 2009) or a sum of max-normalised scores. */
export type FusionMethod = 'rrf' | 'sum';

/**
 * Fuses score lists, one at a time, into one: `rrf` adds `weight / (k + rank + 1)` per list (ties keep
 * list order); `sum` adds each list divided by its own best score (so every list counts in [0, weight];
 * a list with no score above 0 adds nothing). Per-tool working arrays are sized once per index; not
 * reentrant.
 */
export class Fusion {
  private readonly sum: Float64Array;
  private readonly seen: Uint8Array;
  private readonly ids: Int32Array;
  private readonly scores: Float64Array;

  /** @param size - tools in the index; @param k - the RRF constant */
  constructor(
    size: number,
    private readonly method: FusionMethod,
    private readonly k = 60,
  ) {
    this.sum = new Float64Array(size);
    this.seen = new Uint8Array(size);
    this.ids = new Int32Array(size);
    this.scores = new Float64Array(size);
  }

  /**
   * The fusion of `count` lists, `list(i)` asked for each in order (its arrays may be reused by the next
   * call: each is read before the next is asked). Tools in the order first listed. The arrays returned are
   * views of this fusion's own: valid until its next use.
   */
  fuse(count: number, list: (i: number) => { scores: Scores; weight: number }): Scores {
    let n = 0;
    const { sum, seen, ids, scores } = this;
    try {
      for (let l = 0; l < count; l += 1) {
        const {
          scores: { ids: listIds, scores: listScores, top: knownTop },
          weight,
        } = list(l);
        if (this.method === 'rrf') {
          const ranked = Array.from(listIds, (_, i) => i).sort((a, b) => listScores[b] - listScores[a]);
          for (let rank = 0; rank < ranked.length; rank += 1) n = this.add(n, listIds[ranked[rank]], weight / (this.k + rank + 1));
        } else {
          const top = knownTop ?? topScore(listScores);
          if (top <= 0) continue;
          for (let i = 0; i < listIds.length; i += 1) n = this.add(n, listIds[i], (weight * listScores[i]) / top);
        }
      }
      for (let i = 0; i < n; i += 1) scores[i] = sum[ids[i]];
      return { ids: ids.subarray(0, n), scores: scores.subarray(0, n) };
    } finally {
      for (let i = 0; i < n; i += 1) {
        sum[ids[i]] = 0;
        seen[ids[i]] = 0;
      }
    }
  }

  /** Adds `x` to tool `id`'s sum, listing the tool the first time; returns the tools listed. */
  private add(n: number, id: number, x: number): number {
    if (this.seen[id] === 0) {
      this.seen[id] = 1;
      this.ids[n] = id;
      n += 1;
    }
    this.sum[id] += x;
    return n;
  }
}
