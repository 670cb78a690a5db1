/**
 * Search benchmark (`npm run bench:search`): hit@1, hit@3, hit@5, recall@5 and MRR per labelled query set,
 * for the tool index and for a plain BM25 baseline computed in the same run, plus one line per ranking
 * variant (bench/search/variants.ts). Prints markdown tables and writes bench/results/search.json.
 *
 * Modes: offline (the catalogue indexed in process: the baseline and every variant) and end to end (the
 * catalogue served by replay upstreams, each query through the gateway's search_tools on /mcp/compact
 * with a real MCP client: e2e.ts; printed as skipped, with the reason, when the gateway cannot serve it).
 * Every figure that matters is a held-fold one: the knobs (one candidate tuning of variants.ts) are chosen
 * by k-fold cross-validation on the training folds and scored on the held fold (cross-validation.ts); ratios
 * to BM25 carry 95% bootstrap intervals, and the queries whose rank differs from BM25's are listed.
 * Flags: --offline-only, --no-variants (the default tuning only: held = dev), --folds K (default 5),
 * --base NAME (the variant the folds start from instead of the default: a default chosen on these very
 * queries starts with an edge the folds cannot see; from an earlier default, the folds must find it),
 * --semantic-seed N (another seed of the LSA's random test matrix for every ranker: the figures' spread
 * over seeds is the share of them that is luck of the draw),
 * --verbose (print each held query missed at 5), --cpzai-catalog PATH (another CPZAI catalogue file).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { buildToolIndex, glossesFor, glossTexts, NO_GLOSSES, type Glosses } from '../../search/index.ts';
import { buildBm25 } from './bm25.ts';
import { startEndToEnd } from './e2e.ts';
import { evaluate, type Evaluation } from './evaluate.ts';
import { MRR_DEPTH, type Metrics } from './metrics.ts';
import { bootstrapRatios, crossValidate, perQueryDiffs, type Candidate, type Interval, type MetricKey } from './cross-validation.ts';
import { loadQuerySets, PROJECT_ROOT, type QuerySet } from '../../tests/fixtures/search-data.ts';
import { VARIANTS } from './variants.ts';

const { values: flags } = parseArgs({
  options: {
    'no-variants': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    'cpzai-catalog': { type: 'string' },
    'offline-only': { type: 'boolean', default: false },
    folds: { type: 'string', default: '5' },
    base: { type: 'string' },
    'semantic-seed': { type: 'string' },
  },
});

const fmt = (x: number): string => x.toFixed(3);
const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
const metricCells = (m: Metrics): string[] => [fmt(m.hit1), fmt(m.hit3), fmt(m.hit5), fmt(m.recall5), fmt(m.mrr)];

const SEED = flags['semantic-seed'] === undefined ? {} : { semanticSeed: Number(flags['semantic-seed']) };

/** Glosses of every set's Chinese text, made once (main). */
let glosses: Glosses = NO_GLOSSES;

function offlineRanker(set: QuerySet, tuning = {}) {
  const index = buildToolIndex(set.tools, { ...tuning, ...SEED }, { glosses });
  return (query: string, limit: number) => index.search(query, { limit }).map((h) => h.name);
}

function bm25Ranker(set: QuerySet) {
  const bm25 = buildBm25(set.tools);
  return (query: string, limit: number) => bm25.search(query, limit).map((h) => h.name);
}

async function main(): Promise<void> {
  // The gateway's async build glosses Chinese text itself; the sync builds here need the glosses first.
  const { sets, skipped } = loadQuerySets({ cpzaiCatalog: flags['cpzai-catalog'] });
  glosses = await glossesFor(sets.flatMap((s) => glossTexts(s.tools)));
  for (const reason of skipped) console.log(`skipped ${reason}`);
  const k = Number(flags.folds);
  const results: Record<string, unknown> = { mode: flags['offline-only'] ? 'offline' : 'offline+e2e', date: new Date().toISOString(), folds: k, sets: {} };
  const summary: string[] = [
    row(['query set', 'tools', 'queries', 'ranker', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR', 'p50 ms', 'p99 ms']),
    row(['---', '---:', '---:', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  const ratioRows: string[] = [
    row(['query set', 'ranker / BM25', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR']),
    row(['---', '---', '---:', '---:', '---:', '---:', '---:']),
  ];
  const variantRows: string[] = [];
  const diffs: string[] = [];
  const choices: string[] = [];

  for (const set of sets) {
    const baseline = await evaluate(bm25Ranker(set), set.queries);
    const search = await evaluate(offlineRanker(set), set.queries);
    const variants = flags['no-variants'] ? VARIANTS.slice(0, 1) : withBase(VARIANTS, flags.base);
    const candidates: Candidate[] = [];
    const variantMetrics: Record<string, Metrics> = {};
    for (const v of variants) {
      const ev: Evaluation = v.name === 'default' ? search : await evaluate(offlineRanker(set, v.tuning), set.queries);
      candidates.push({ name: v.name, outcomes: ev.outcomes });
      variantMetrics[v.name] = ev.metrics;
      variantRows.push(row([set.name, v.name, ...metricCells(ev.metrics)]));
    }
    const cv = crossValidate(candidates, k);
    const held: Evaluation = { metrics: cv.metrics, outcomes: cv.held, p50Ms: search.p50Ms, p99Ms: search.p99Ms };
    const rows: [string, Evaluation][] = [
      ['BM25 baseline', baseline],
      [`search, held folds (${cv.folds}-fold CV)`, held],
      ['search (default), all queries (dev)', search],
    ];
    let e2e: Evaluation | undefined;
    if (!flags['offline-only']) {
      const started = await startEndToEnd(set);
      if ('skipped' in started) console.log(`${set.name}: end-to-end skipped: ${started.skipped}`);
      else {
        try {
          e2e = await evaluate(started.rank, set.queries);
          rows.push(['search_tools via gateway (e2e, default)', e2e]);
        } finally {
          await started.close();
        }
      }
    }
    for (const [ranker, ev] of rows) {
      summary.push(row([set.name, set.tools.length, set.queries.length, ranker, ...metricCells(ev.metrics), ev.p50Ms.toFixed(2), ev.p99Ms.toFixed(2)]));
    }
    const intervals: Record<string, Record<MetricKey, Interval>> = {};
    for (const [ranker, ev] of rows.slice(1)) {
      const ci = bootstrapRatios(ev.outcomes, baseline.outcomes);
      intervals[ranker] = ci;
      ratioRows.push(row([set.name, ranker, ...(['hit1', 'hit3', 'hit5', 'recall5', 'mrr'] as const).map((m) => ciCell(ci[m]))]));
    }
    choices.push(`${set.name}: ${cv.chosen.map((c) => `fold ${c.fold + 1} (${c.queries.length} q) -> ${c.candidate}`).join('; ')}`);
    const d = perQueryDiffs(cv.held, baseline.outcomes);
    diffs.push(`\n### ${set.name}: held-fold search vs BM25, queries whose first gold rank differs (${d.length}; 0 = not in top ${MRR_DEPTH})\n`);
    for (const x of d) diffs.push(`- ${x.a === 0 ? '-' : x.a} vs ${x.b === 0 ? '-' : x.b}: ${x.query.slice(0, 100)}`);
    if (flags.verbose) printMisses(set.name, held);
    (results.sets as Record<string, unknown>)[set.name] = {
      catalog: relative(PROJECT_ROOT, set.catalogPath),
      tools: set.tools.length,
      queries: set.queries.length,
      baseline: { ...baseline.metrics, p50Ms: baseline.p50Ms, p99Ms: baseline.p99Ms },
      held: cv.metrics,
      chosen: cv.chosen.map(({ fold, candidate }) => ({ fold, candidate })),
      search: { ...search.metrics, p50Ms: search.p50Ms, p99Ms: search.p99Ms },
      ...(e2e ? { endToEnd: { ...e2e.metrics, p50Ms: e2e.p50Ms, p99Ms: e2e.p99Ms } } : {}),
      ratios: intervals,
      variants: variantMetrics,
      outcomes: cv.held.map(({ query, gold, ranking, firstRank }, i) => ({
        query,
        gold,
        top5: ranking.slice(0, 5),
        firstRank,
        bm25FirstRank: baseline.outcomes[i].firstRank,
      })),
    };
  }

  console.log(`\n## Tool search vs plain BM25 (same run${flags['offline-only'] ? ', offline' : '; offline and end to end'})\n`);
  console.log(summary.join('\n'));
  console.log(`\n## Ratios to BM25, with 95% bootstrap intervals (queries resampled, paired)\n`);
  console.log(ratioRows.join('\n'));
  console.log(
    `\nKnobs chosen on the training folds (objective: mean of hit@1, hit@3, hit@5, recall@5; a candidate replaces the default only if it wins on the union and on most training folds):\n${choices.join('\n')}`,
  );
  console.log(diffs.join('\n'));
  if (variantRows.length > 0 && !flags['no-variants']) {
    console.log('\n## Candidate tunings, all queries (dev figures: these are what the folds choose among)\n');
    console.log(row(['query set', 'variant', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR']));
    console.log(row(['---', '---', '---:', '---:', '---:', '---:', '---:']));
    console.log(variantRows.join('\n'));
  }
  const out = resolve(PROJECT_ROOT, 'bench/results/search.json');
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwrote ${out}`);
}

/** `variants` with the one named `base` first (the one the folds start from); throws on an unknown name. */
function withBase(variants: typeof VARIANTS, base: string | undefined): typeof VARIANTS {
  if (base === undefined) return variants;
  const at = variants.findIndex((v) => v.name === base);
  if (at < 0) throw new Error(`--base: no variant named ${JSON.stringify(base)} in bench/search/variants.ts`);
  return [variants[at], ...variants.filter((_, i) => i !== at)];
}

const ciCell = (i: Interval): string => `${fmt(i.ratio)} [${fmt(i.low)}, ${fmt(i.high)}]`;

function printMisses(name: string, ev: Evaluation): void {
  console.log(`\n### ${name}: queries without a gold tool in the top 5`);
  for (const o of ev.outcomes.filter((x) => x.firstRank === 0 || x.firstRank > 5)) {
    console.log(`- ${o.query.slice(0, 110)}\n    gold ${o.gold.join(', ')}\n    got  ${o.ranking.slice(0, 5).join(', ')}`);
  }
}

await main();
