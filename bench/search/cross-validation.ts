/**
 * An evaluation that cannot overfit the shared query sets: k-fold cross-validation of the knob choice,
 * bootstrap confidence intervals on every ratio to the BM25 baseline, and per-query diffs.
 *
 * The rankers learn nothing from queries: the only thing chosen on queries is which candidate tuning
 * (bench/search/variants.ts) to use. So every candidate is asked every query once, and cross-validation
 * is a choice over those per-query outcomes: for each fold, the candidate with the best objective on the
 * other folds is scored on the held fold. Every query is held exactly once; the held-fold figures are
 * the outcomes so collected. Folds are a seeded shuffle (same folds every run).
 */
import { aggregate, type Metrics } from './metrics.ts';
import type { QueryOutcome } from './evaluate.ts';
import { seeded } from '../../search/semantic/seeded-random.ts';

export { seeded };

export type Candidate = { name: string; outcomes: QueryOutcome[] };

export type CrossValidation = {
  folds: number;
  /** Per held query (in query order), the outcome of the candidate chosen on the other folds. */
  held: QueryOutcome[];
  /** Candidate chosen for each fold, and the fold's query positions. */
  chosen: { fold: number; candidate: string; queries: number[] }[];
  metrics: Metrics;
};

/** Query positions 0..n-1 dealt into `k` folds after a seeded shuffle. */
export function folds(n: number, k: number, seed = 16): number[][] {
  const order = Array.from({ length: n }, (_, i) => i);
  const random = seeded(seed);
  for (let i = n - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const out: number[][] = Array.from({ length: k }, () => []);
  order.forEach((q, i) => out[i % k].push(q));
  return out.map((f) => f.sort((a, b) => a - b));
}

/** The figure a candidate is chosen by: the mean of the figures the search is held to (issue 16: hit@1
 *  and hit@3 on single-tool questions, hit@5 and recall@5 on multi-step tasks), one number for every set. */
export function objective(m: Metrics): number {
  return (m.hit1 + m.hit3 + m.hit5 + m.recall5) / 4;
}

/**
 * k-fold choice among `candidates` (each with outcomes for the same queries in the same order), the first
 * being the default. For each held fold, a candidate replaces the default only if it wins across the
 * training folds: a higher objective on their union AND on more than half of them one by one (a knob
 * that wins on one lucky fold does not stay); among those, the best on the union (ties: the earlier).
 */
export function crossValidate(candidates: Candidate[], k: number, seed = 16): CrossValidation {
  const n = candidates[0]?.outcomes.length ?? 0;
  const parts = folds(n, Math.min(k, Math.max(1, n)), seed);
  const held: QueryOutcome[] = new Array(n);
  const chosen: CrossValidation['chosen'] = [];
  parts.forEach((fold, f) => {
    const inFold = new Set(fold);
    const training = Array.from({ length: n }, (_, i) => i).filter((i) => !inFold.has(i));
    const others = parts.filter((_, g) => g !== f);
    const scoreOn = (c: Candidate, queries: number[]): number => objective(aggregate(queries.map((i) => c.outcomes[i])));
    const base = candidates[0];
    let best = base;
    let bestScore = scoreOn(base, training);
    for (const c of candidates.slice(1)) {
      const score = scoreOn(c, training);
      if (score <= bestScore) continue;
      const wins = others.filter((g) => scoreOn(c, g) > scoreOn(base, g)).length;
      if (wins * 2 <= others.length) continue;
      best = c;
      bestScore = score;
    }
    for (const i of fold) held[i] = best.outcomes[i];
    chosen.push({ fold: f, candidate: best.name, queries: fold });
  });
  return { folds: parts.length, held, chosen, metrics: aggregate(held) };
}

export type Interval = { ratio: number; low: number; high: number };

const METRIC_KEYS = ['hit1', 'hit3', 'hit5', 'recall5', 'mrr'] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/**
 * Ratio of `a`'s metric to `b`'s over the same queries (paired), with a 95% percentile bootstrap interval
 * (queries resampled with replacement, `samples` times). A resample where `b` scores 0 is skipped.
 */
export function bootstrapRatios(a: QueryOutcome[], b: QueryOutcome[], samples = 2000, seed = 7): Record<MetricKey, Interval> {
  const random = seeded(seed);
  const n = a.length;
  const point = ratiosOf(aggregate(a), aggregate(b));
  const draws: Record<MetricKey, number[]> = { hit1: [], hit3: [], hit5: [], recall5: [], mrr: [] };
  const pickA: QueryOutcome[] = new Array(n);
  const pickB: QueryOutcome[] = new Array(n);
  for (let s = 0; s < samples; s += 1) {
    for (let i = 0; i < n; i += 1) {
      const j = Math.floor(random() * n);
      pickA[i] = a[j];
      pickB[i] = b[j];
    }
    const r = ratiosOf(aggregate(pickA), aggregate(pickB));
    for (const key of METRIC_KEYS) if (Number.isFinite(r[key])) draws[key].push(r[key]);
  }
  const out = {} as Record<MetricKey, Interval>;
  for (const key of METRIC_KEYS) {
    const sorted = draws[key].sort((x, y) => x - y);
    const at = (p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);
    out[key] = { ratio: point[key], low: at(0.025), high: at(0.975) };
  }
  return out;
}

function ratiosOf(a: Metrics, b: Metrics): Record<MetricKey, number> {
  const r = {} as Record<MetricKey, number>;
  for (const key of METRIC_KEYS) r[key] = b[key] === 0 ? NaN : a[key] / b[key];
  return r;
}

/** Queries whose first gold rank differs between two rankers: `[query, rank in a, rank in b]` (0 = not in
 *  the top `MRR_DEPTH`), wins of `a` first. */
export function perQueryDiffs(a: QueryOutcome[], b: QueryOutcome[]): { query: string; a: number; b: number }[] {
  const rank = (r: number): number => (r === 0 ? Infinity : r);
  return a
    .map((o, i) => ({ query: o.query, a: o.firstRank, b: b[i].firstRank }))
    .filter((d) => d.a !== d.b)
    .sort((x, y) => Math.sign(rank(x.a) - rank(x.b)) - Math.sign(rank(y.a) - rank(y.b)));
}
