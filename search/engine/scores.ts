/**
 * Scores of the tools matching a query. Tools are numbered by their position in the catalogue.
 */

/** Scores of some tools: `scores[i]` is tool `ids[i]`'s; each tool appears once. Often views of a
 *  scorer's working arrays (valid until its next use). `top`, when given, is `topScore(scores)`; `matched`,
 *  when given, how many distinct terms of the query each tool matched. */
export type Scores = { ids: Int32Array; scores: Float64Array; top?: number; matched?: Uint8Array };

/** The highest of `scores`, or 0 when none is above 0. */
export function topScore(scores: Float64Array): number {
  let top = 0;
  for (let i = 0; i < scores.length; i += 1) if (scores[i] > top) top = scores[i];
  return top;
}

/**
 * Sums of shares per tool, kept in the order each tool was first added: what a `Map<number, number>` of
 * `(sum ?? 0) + share` holds, in the same order and with the same floating-point sums, without a Map (and
 * its growth) per use. Holds two per-tool arrays (8 bytes per tool), sized once; one use at a time:
 * `begin` starts one and forgets the last, whose `scores()` stay valid.
 */
export class ScoreSums {
  private readonly stamp: Int32Array;
  private readonly place: Int32Array;
  private generation = 0;
  private ids = new Int32Array(0);
  private sums = new Float64Array(0);
  private size = 0;

  /** @param tools - ids added are below this */
  constructor(tools: number) {
    this.stamp = new Int32Array(tools);
    this.place = new Int32Array(tools);
  }

  /** Starts a new set of sums of at most `capacity` distinct tools. */
  begin(capacity: number): this {
    if (this.generation >= 0x7fffffff) {
      this.stamp.fill(0);
      this.generation = 0;
    }
    this.generation += 1;
    this.ids = new Int32Array(capacity);
    this.sums = new Float64Array(capacity);
    this.size = 0;
    return this;
  }

  /** Adds `share` to tool `id`'s sum (a first share is `0 + share`, as `(undefined ?? 0) + share`). */
  add(id: number, share: number): void {
    if (this.stamp[id] === this.generation) {
      this.sums[this.place[id]] += share;
      return;
    }
    this.stamp[id] = this.generation;
    this.place[id] = this.size;
    this.ids[this.size] = id;
    this.sums[this.size] = 0 + share;
    this.size += 1;
  }

  /** The tools added since `begin`, in the order first added, with their sums. */
  scores(): Scores {
    return { ids: this.ids.subarray(0, this.size), scores: this.sums.subarray(0, this.size) };
  }
}
