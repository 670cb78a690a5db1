/**
 * Figures with their uncertainty: the mean of each metric over one or more query sets (each set weighs
 * the same, however many queries it has), and the ratio of one ranker's to another's, each with a 95%
 * percentile bootstrap interval. Queries are resampled with replacement within each set, the same draw
 * for every ranker (paired), `SAMPLES` times, from a fixed seed: the same intervals every run.
 */
import { seeded } from '../../search/semantic/seeded-random.ts';
import type { QueryOutcome } from './evaluate.ts';
import { aggregate, type Metrics } from './metrics.ts';

export const METRIC_KEYS = ['hit1', 'hit3', 'hit5', 'recall5', 'mrr'] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/** A figure and its 95% interval. */
export type Interval = { value: number; low: number; high: number };

const SAMPLES = 2000;

/** The mean over sets of each set's metrics (sets with no query left out). */
export function macro(perSet: readonly QueryOutcome[][]): Record<MetricKey, number> {
  const sets = perSet.filter((o) => o.length > 0).map((o) => aggregate(o));
  const out = {} as Record<MetricKey, number>;
  for (const key of METRIC_KEYS) out[key] = sets.length === 0 ? NaN : sets.reduce((s, m) => s + m[key], 0) / sets.length;
  return out;
}

/**
 * Intervals of every ranker's metrics (`outcomes[ranker][set][query]`, the same queries in the same
 * order for every ranker), and of each ranker's ratio to each ranker named in `baselines`.
 */
export function intervals(
  outcomes: Record<string, QueryOutcome[][]>,
  baselines: readonly string[],
  seed = 7,
): { metrics: Record<string, Record<MetricKey, Interval>>; ratios: Record<string, Record<string, Record<MetricKey, Interval>>> } {
  const names = Object.keys(outcomes);
  const first = outcomes[names[0]] ?? [];
  const random = seeded(seed);
  const draws: Record<string, Record<MetricKey, number[]>> = {};
  const ratioDraws: Record<string, Record<string, Record<MetricKey, number[]>>> = {};
  const empty = (): Record<MetricKey, number[]> => ({ hit1: [], hit3: [], hit5: [], recall5: [], mrr: [] });
  for (const n of names) {
    draws[n] = empty();
    ratioDraws[n] = Object.fromEntries(baselines.map((b) => [b, empty()]));
  }
  for (let s = 0; s < SAMPLES; s += 1) {
    const picks = first.map((set) => Array.from(set, () => Math.floor(random() * set.length)));
    const m: Record<string, Record<MetricKey, number>> = {};
    for (const n of names) m[n] = macro(outcomes[n].map((set, i) => picks[i].map((j) => set[j])));
    for (const n of names) {
      for (const key of METRIC_KEYS) {
        draws[n][key].push(m[n][key]);
        for (const b of baselines) if (m[b][key] > 0) ratioDraws[n][b][key].push(m[n][key] / m[b][key]);
      }
    }
  }
  const interval = (value: number, xs: number[]): Interval => {
    const sorted = [...xs].sort((x, y) => x - y);
    const at = (p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
    return { value, low: at(0.025), high: at(0.975) };
  };
  const metrics: Record<string, Record<MetricKey, Interval>> = {};
  const ratios: Record<string, Record<string, Record<MetricKey, Interval>>> = {};
  for (const n of names) {
    const point = macro(outcomes[n]);
    metrics[n] = {} as Record<MetricKey, Interval>;
    ratios[n] = {};
    for (const key of METRIC_KEYS) metrics[n][key] = interval(point[key], draws[n][key]);
    for (const b of baselines) {
      const base = macro(outcomes[b]);
      ratios[n][b] = {} as Record<MetricKey, Interval>;
      for (const key of METRIC_KEYS) ratios[n][b][key] = interval(base[key] > 0 ? point[key] / base[key] : NaN, ratioDraws[n][b][key]);
    }
  }
  return { metrics, ratios };
}

/** Queries whose first gold rank differs between two rankers: `[query, rank in a, rank in b]` (0 = not in
 *  the ranking), wins of `a` first. */
export function perQueryDiffs(a: QueryOutcome[], b: QueryOutcome[]): { query: string; a: number; b: number }[] {
  const rank = (r: number): number => (r === 0 ? Infinity : r);
  return a
    .map((o, i) => ({ query: o.query, a: o.firstRank, b: b[i].firstRank }))
    .filter((d) => d.a !== d.b)
    .sort((x, y) => Math.sign(rank(x.a) - rank(x.b)) - Math.sign(rank(y.a) - rank(y.b)));
}

export type { Metrics };
