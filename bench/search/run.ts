/**
 * Search benchmark (`npm run bench:search`): how well the tool search ranks, against plain BM25 with and
 * without stop words, measured in one run, by the protocol of bench/search/README.md.
 *
 * Every labelled set (tests/fixtures/search-data.ts) is split for good into a part to tune on and a
 * frozen part (protocol.ts). The default run prints:
 * - the headline: the frozen part of the fresh sets (never seen by any default), each set weighing the
 *   same, for search_tools (through the gateway, end to end), the index in process, BM25 and BM25 with
 *   stop words, with 95% bootstrap intervals and the ratios to both baselines;
 * - the same per set and part (frozen, tune), and for the CPZAI sets with the `_meta` keywords off.
 * `--tune` prints instead every candidate tuning of variants.ts on the tuning part only (nothing of the
 * frozen part): that is the table a default is chosen from.
 * Flags: --offline-only (no gateway: the index in process only), --sets a,b (some sets only),
 * --semantic-seed N (another seed of the LSA for every ranker), --verbose (each frozen query missed at 5),
 * --part tune (every set's tuning part beside the baselines, nothing of the frozen part; writes search-tune-part.json),
 * --misses JSON (the tuning part's queries whose gold is not first, under that tuning), --cpzai-catalog PATH (another CPZAI catalogue file), --variants a,b (with --tune: the default and the
 * variants whose names hold one of these). Writes bench/results/search.json (search-tune.json with --tune).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';

import { buildToolIndex, glossesFor, glossTexts, NO_GLOSSES, type Glosses, type SearchableTool, type TuningOverrides } from '../../search/index.ts';
import { loadQuerySets, PROJECT_ROOT, type QuerySet } from '../../tests/fixtures/search-data.ts';
import { buildBm25 } from './bm25.ts';
import { startEndToEnd } from './e2e.ts';
import { evaluate, type QueryOutcome, type Ranker } from './evaluate.ts';
import { aggregate } from './metrics.ts';
import { queriesOf, type Part } from './protocol.ts';
import { intervals, macro, METRIC_KEYS, perQueryDiffs, type Interval, type MetricKey } from './stats.ts';
import { VARIANTS } from './variants.ts';

const { values: flags } = parseArgs({
  options: {
    tune: { type: 'boolean', default: false },
    misses: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    'cpzai-catalog': { type: 'string' },
    'offline-only': { type: 'boolean', default: false },
    sets: { type: 'string' },
    'semantic-seed': { type: 'string' },
    variants: { type: 'string' },
    part: { type: 'string' },
  },
});

const SEED: TuningOverrides = flags['semantic-seed'] === undefined ? {} : { semanticSeed: Number(flags['semantic-seed']) };
const BM25 = 'BM25';
const BM25_STOP = 'BM25 + stop words';
const fmt = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '-');
const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
const ci = (i: Interval): string => `${fmt(i.value)} [${fmt(i.low)}, ${fmt(i.high)}]`;

/** Glosses of every set's Chinese text, made once (main). */
let glosses: Glosses = NO_GLOSSES;

/** The tools without their `_meta` keywords: what the ranker does alone. */
const withoutKeywords = (tools: SearchableTool[]): SearchableTool[] => tools.map(({ keywords: _k, ...tool }) => tool);
const hasKeywords = (set: QuerySet): boolean => set.tools.some((t) => (t.keywords?.length ?? 0) > 0);

function indexRanker(tools: SearchableTool[], tuning: TuningOverrides = {}): Ranker {
  const index = buildToolIndex(tools, { ...tuning, ...SEED }, { glosses });
  return (query, limit) => index.search(query, { limit }).map((h) => h.name);
}

function bm25Ranker(tools: SearchableTool[], stopWords: boolean): Ranker {
  const bm25 = buildBm25(tools, { stopWords });
  return (query, limit) => bm25.search(query, limit).map((h) => h.name);
}

/** Each ranker's outcomes on every query of a set, in file order. */
type SetRun = { set: QuerySet; outcomes: Record<string, QueryOutcome[]> };

async function runSet(set: QuerySet, offline: boolean): Promise<SetRun> {
  const rankers: [string, Ranker][] = [
    ['search', indexRanker(set.tools)],
    [BM25, bm25Ranker(set.tools, false)],
    [BM25_STOP, bm25Ranker(set.tools, true)],
  ];
  if (hasKeywords(set)) {
    const bare = withoutKeywords(set.tools);
    rankers.push(['search, keywords off', indexRanker(bare)], [`${BM25_STOP}, keywords off`, bm25Ranker(bare, true)]);
  }
  const outcomes: Record<string, QueryOutcome[]> = {};
  if (!offline) {
    const started = await startEndToEnd(set);
    if ('skipped' in started) console.log(`${set.name}: search_tools (end to end) skipped: ${started.skipped}`);
    else {
      try {
        outcomes.search_tools = (await evaluate(started.rank, set.queries)).outcomes;
      } finally {
        await started.close();
      }
    }
  }
  for (const [name, rank] of rankers) outcomes[name] = (await evaluate(rank, set.queries)).outcomes;
  return { set, outcomes };
}

/** `run`'s outcomes restricted to the queries of `part`. */
function partOutcomes(run: SetRun, part: Part | 'all'): Record<string, QueryOutcome[]> {
  const keep = new Set(queriesOf(run.set.name, run.set.queries, part).map((q) => run.set.queries.indexOf(q)));
  return Object.fromEntries(Object.entries(run.outcomes).map(([name, o]) => [name, o.filter((_, i) => keep.has(i))]));
}

/** One table: each ranker's metrics over `runs` (macro over sets) with intervals, then its ratios to both baselines. */
function table(title: string, runs: SetRun[], part: Part | 'all', rankers: string[]): { lines: string[]; figures: unknown } {
  const parts = runs.map((r) => partOutcomes(r, part));
  const present = rankers.filter((n) => parts.every((p) => p[n] !== undefined));
  const outcomes = Object.fromEntries(present.map((n) => [n, parts.map((p) => p[n])]));
  const pairs: [string, string][] = [
    ...['search_tools', 'search'].flatMap((n) => [BM25, BM25_STOP].map((b): [string, string] => [n, b])),
    ['search, keywords off', `${BM25_STOP}, keywords off`],
  ].filter(([n, b]) => present.includes(n) && present.includes(b)) as [string, string][];
  const { metrics, ratios } = intervals(outcomes, [...new Set(pairs.map(([, b]) => b))]);
  const queries = parts.reduce((n, p) => n + (p[present[0]]?.length ?? 0), 0);
  const lines = [
    `\n### ${title} (${queries} queries${runs.length > 1 ? `, ${runs.length} sets, each weighing the same` : ''})\n`,
    row(['ranker', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR']),
    row(['---', '---:', '---:', '---:', '---:', '---:']),
    ...present.map((n) => row([n, ...METRIC_KEYS.map((k) => ci(metrics[n][k]))])),
    '',
    row(['ratio', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR']),
    row(['---', '---:', '---:', '---:', '---:', '---:']),
    ...pairs.map(([n, b]) => row([`${n} / ${b}`, ...METRIC_KEYS.map((k) => ci(ratios[n][b][k]))])),
  ];
  return { lines, figures: { queries, metrics, ratios } };
}

async function main(): Promise<void> {
  const { sets, skipped } = loadQuerySets({ cpzaiCatalog: flags['cpzai-catalog'], only: flags.sets?.split(',') });
  glosses = await glossesFor(sets.flatMap((s) => glossTexts(s.tools)));
  for (const reason of skipped) console.log(`skipped ${reason}`);
  if (flags.tune) return tune(sets);
  if (flags.misses) return misses(sets, flags.misses);
  const load = loadavg();
  const runs: SetRun[] = [];
  for (const set of sets) runs.push(await runSet(set, flags['offline-only']));
  const rankers = ['search_tools', 'search', BM25, BM25_STOP];
  const fresh = runs.filter((r) => r.set.fresh);
  const out: string[] = [];
  const results: Record<string, unknown> = { date: new Date().toISOString(), loadavg: load, sets: {} };
  // `--part tune`: the tuning part beside the baselines, nothing of the frozen part (the protocol's step 2).
  const tuneOnly = flags.part === 'tune';
  if (flags.part !== undefined && !tuneOnly) throw new Error(`--part ${flags.part}: only 'tune' may be asked for (the frozen part is the whole run's)`);
  if (fresh.length > 0 && !tuneOnly) {
    const headline = table(`Headline: the frozen part of the fresh sets (${fresh.map((r) => r.set.name).join(', ')})`, fresh, 'frozen', rankers);
    out.push(...headline.lines);
    results.headline = headline.figures;
  }
  for (const run of runs) {
    const figures: Record<string, unknown> = {
      catalog: relative(PROJECT_ROOT, run.set.catalogPath),
      tools: run.set.tools.length,
      queries: run.set.queries.length,
      fresh: run.set.fresh,
    };
    const all = [...rankers, 'search, keywords off', `${BM25_STOP}, keywords off`];
    for (const part of tuneOnly ? (['tune'] as const) : (['frozen', 'tune'] as const)) {
      const t = table(`${run.set.name}${run.set.fresh ? '' : ' (seen by earlier defaults)'}: ${part} part`, [run], part, all);
      out.push(...t.lines);
      figures[part] = t.figures;
    }
    (results.sets as Record<string, unknown>)[run.set.name] = figures;
    if (flags.verbose && !tuneOnly) {
      const frozen = partOutcomes(run, 'frozen');
      const mine = frozen.search_tools ?? frozen.search;
      out.push(`\n#### ${run.set.name}, frozen: first gold rank, search vs ${BM25_STOP} where they differ (0 = not in the top 10)\n`);
      for (const d of perQueryDiffs(mine, frozen[BM25_STOP])) out.push(`- ${d.a} vs ${d.b}: ${d.query.slice(0, 110)}`);
    }
  }
  console.log(`# Tool search vs BM25 (one run; load average ${load.map((x) => x.toFixed(2)).join(' ')})`);
  console.log(out.join('\n'));
  writeResults(tuneOnly ? 'search-tune-part.json' : 'search.json', results);
}

/** `--tune`: every candidate tuning on the tuning part of every set, nothing else. */
async function tune(sets: QuerySet[]): Promise<void> {
  const rows: string[] = [];
  const results: Record<string, unknown> = {};
  const bare = sets.filter(hasKeywords);
  const header = [
    'variant',
    ...sets.map((s) => s.name),
    ...bare.map((s) => `${s.name}, keywords off`),
    'all sets: hit@1',
    'hit@3',
    'hit@5',
    'recall@5',
    'MRR',
    'objective',
  ];
  const wanted = flags.variants?.split(',');
  for (const v of VARIANTS.filter((x, i) => i === 0 || wanted === undefined || wanted.some((w) => x.name.includes(w)))) {
    const perSet: QueryOutcome[][] = [];
    for (const set of sets) {
      const queries = queriesOf(set.name, set.queries, 'tune');
      perSet.push((await evaluate(indexRanker(set.tools, v.tuning), queries)).outcomes);
    }
    const m = macro(perSet);
    const objective = (m.hit1 + m.hit3 + m.hit5 + m.recall5) / 4;
    const objectiveOf = (o: QueryOutcome[]): number => {
      const a = aggregate(o);
      return (a.hit1 + a.hit3 + a.hit5 + a.recall5) / 4;
    };
    const bySet = perSet.map(objectiveOf);
    // Shown beside, not in the objective: the same sets without their hand-written keywords.
    for (const set of bare) {
      const queries = queriesOf(set.name, set.queries, 'tune');
      bySet.push(objectiveOf((await evaluate(indexRanker(withoutKeywords(set.tools), v.tuning), queries)).outcomes));
    }
    results[v.name] = {
      ...m,
      objective,
      bySet: Object.fromEntries([...sets.map((s) => s.name), ...bare.map((s) => `${s.name}, keywords off`)].map((n, i) => [n, bySet[i]])),
    };
    rows.push(row([v.name, ...bySet.map(fmt), ...METRIC_KEYS.map((k) => fmt(m[k as MetricKey])), fmt(objective)]));
    console.error(`${v.name}: ${fmt(objective)}`);
  }
  console.log('# Candidate tunings on the tuning part only (objective: mean of hit@1, hit@3, hit@5, recall@5; per set, then over sets)\n');
  console.log(row(header));
  console.log(row(header.map((_, i) => (i === 0 ? '---' : '---:'))));
  console.log(rows.join('\n'));
  writeResults('search-tune.json', results);
}

/** `--misses TUNING`: the tuning part's queries whose gold is not first, with what came first (the
 *  frozen part is never listed); `TUNING` is JSON overrides, `{"keywordsOff": true}` drops the keywords. */
async function misses(sets: QuerySet[], spec: string): Promise<void> {
  const { keywordsOff, ...tuning } = JSON.parse(spec) as TuningOverrides & { keywordsOff?: boolean };
  for (const set of sets) {
    const queries = queriesOf(set.name, set.queries, 'tune');
    const { outcomes } = await evaluate(indexRanker(keywordsOff ? withoutKeywords(set.tools) : set.tools, tuning), queries);
    console.log(`\n## ${set.name}, tuning part: gold not first (${outcomes.filter((o) => o.firstRank !== 1).length} of ${outcomes.length})`);
    for (const o of outcomes.filter((x) => x.firstRank !== 1)) {
      console.log(`- [${o.firstRank || '-'}] ${o.query.slice(0, 120)}\n    gold ${o.gold.join(', ')}\n    got  ${o.ranking.slice(0, 5).join(', ')}`);
    }
  }
}

function writeResults(file: string, results: unknown): void {
  const out = resolve(PROJECT_ROOT, 'bench/results', file);
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 1)}\n`);
  console.log(`\nwrote ${relative(PROJECT_ROOT, out)}`);
}

await main();
