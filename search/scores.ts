/**
 * Scores of the tools matching a query, and the per-tool working arrays that combine them. Tools are
 * numbered by their position in the catalogue.
 */

/** Scores of some tools: `scores[i]` is tool `ids[i]`'s; each tool appears once. */
export type Scores = { ids: number[]; scores: number[] };

/**
 * Per-tool working arrays of one index, sized once, so that a search allocates nothing per tool. All
 * zero between uses: a search runs start to end without yielding, and whoever sets an entry clears it
 * (in a `finally`) before returning.
 */
export class Scratch {
  readonly sum: Float64Array;
  readonly best: Float64Array;
  readonly total: Float64Array;
  /** Small counts (query terms matched: at most 64) and flags. */
  readonly count: Uint8Array;
  readonly matched: Uint8Array;
  readonly seen: Uint8Array;

  constructor(size: number) {
    this.sum = new Float64Array(size);
    this.best = new Float64Array(size);
    this.total = new Float64Array(size);
    this.count = new Uint8Array(size);
    this.matched = new Uint8Array(size);
    this.seen = new Uint8Array(size);
  }

  /** Clears every array at `ids`. */
  clear(ids: readonly number[]): void {
    for (const id of ids) {
      this.sum[id] = 0;
      this.best[id] = 0;
      this.total[id] = 0;
      this.count[id] = 0;
      this.matched[id] = 0;
      this.seen[id] = 0;
    }
  }
}

/** The highest of `scores`, or 0 when none is above 0. */
export function topScore(scores: readonly number[]): number {
  let top = 0;
  for (const s of scores) if (s > top) top = s;
  return top;
}
