/**
 * Search benchmark (`npm run bench:search`): hit@1, hit@3, hit@5, recall@5 and MRR per labelled query set,
 * for the tool index and for a plain BM25 baseline computed in the same run, plus one line per ranking
 * variant (bench/search/variants.ts). Prints markdown tables and writes bench/results/search.json.
 *
 * Modes: offline (the catalogue indexed in process: the baseline and every variant) and end to end (the
 * catalogue served by replay upstreams, each query through the gateway's search_tools on /mcp/compact
 * with a real MCP client: e2e.ts; printed as skipped, with the reason, when the gateway cannot serve it).
 * Flags: --offline-only, --no-variants (skip the variant sweep), --verbose (print each query the index
 * misses at 5), --cpzai-catalog PATH (measure another CPZAI catalogue file than tool-catalog.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { buildToolIndex } from '../../search/index.ts';
import { buildBm25 } from './bm25.ts';
import { startEndToEnd } from './e2e.ts';
import { evaluate, type Evaluation } from './evaluate.ts';
import type { Metrics } from './metrics.ts';
import { loadQuerySets, PROJECT_ROOT, type QuerySet } from './query-sets.ts';
import { VARIANTS } from './variants.ts';

const { values: flags } = parseArgs({
  options: {
    'no-variants': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    'cpzai-catalog': { type: 'string' },
    'offline-only': { type: 'boolean', default: false },
  },
});

const fmt = (x: number): string => x.toFixed(3);
const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
const metricCells = (m: Metrics): string[] => [fmt(m.hit1), fmt(m.hit3), fmt(m.hit5), fmt(m.recall5), fmt(m.mrr)];

function offlineRanker(set: QuerySet, tuning = {}) {
  const index = buildToolIndex(set.tools, tuning);
  return (query: string, limit: number) => index.search(query, { limit }).map((h) => h.name);
}

function bm25Ranker(set: QuerySet) {
  const bm25 = buildBm25(set.tools);
  return (query: string, limit: number) => bm25.search(query, limit).map((h) => h.name);
}

async function main(): Promise<void> {
  const { sets, skipped } = loadQuerySets({ cpzaiCatalog: flags['cpzai-catalog'] });
  for (const reason of skipped) console.log(`skipped ${reason}`);
  const results: Record<string, unknown> = { mode: flags['offline-only'] ? 'offline' : 'offline+e2e', date: new Date().toISOString(), sets: {} };
  const summary: string[] = [
    row(['query set', 'tools', 'queries', 'ranker', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR', 'p50 ms', 'p99 ms']),
    row(['---', '---:', '---:', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  const ratios: string[] = [];
  const variantRows: string[] = [];

  for (const set of sets) {
    const baseline = await evaluate(bm25Ranker(set), set.queries);
    const search = await evaluate(offlineRanker(set), set.queries);
    const rows: [string, Evaluation][] = [['BM25 baseline', baseline], ['search (default)', search]];
    let e2e: Evaluation | undefined;
    if (!flags['offline-only']) {
      const started = await startEndToEnd(set);
      if ('skipped' in started) console.log(`${set.name}: end-to-end skipped: ${started.skipped}`);
      else {
        try {
          e2e = await evaluate(started.rank, set.queries);
          rows.push(['search_tools via gateway (e2e)', e2e]);
        } finally {
          await started.close();
        }
      }
    }
    for (const [ranker, ev] of rows) {
      summary.push(row([set.name, set.tools.length, set.queries.length, ranker, ...metricCells(ev.metrics), ev.p50Ms.toFixed(2), ev.p99Ms.toFixed(2)]));
    }
    const ratio = (ev: Evaluation): string =>
      `hit@5 ${fmt(ev.metrics.hit5 / baseline.metrics.hit5)}x, recall@5 ${fmt(ev.metrics.recall5 / baseline.metrics.recall5)}x`;
    ratios.push(`${set.name}: search ${ratio(search)}${e2e ? `; end to end ${ratio(e2e)}` : ''} the BM25 baseline`);
    const variants: Record<string, Metrics> = {};
    if (!flags['no-variants']) {
      for (const v of VARIANTS) {
        const ev: Evaluation = v.name === 'default' ? search : await evaluate(offlineRanker(set, v.tuning), set.queries);
        variants[v.name] = ev.metrics;
        variantRows.push(row([set.name, v.name, ...metricCells(ev.metrics)]));
      }
    }
    if (flags.verbose) printMisses(set.name, search);
    (results.sets as Record<string, unknown>)[set.name] = {
      catalog: set.catalogPath,
      tools: set.tools.length,
      queries: set.queries.length,
      baseline: { ...baseline.metrics, p50Ms: baseline.p50Ms, p99Ms: baseline.p99Ms },
      search: { ...search.metrics, p50Ms: search.p50Ms, p99Ms: search.p99Ms },
      ...(e2e ? { endToEnd: { ...e2e.metrics, p50Ms: e2e.p50Ms, p99Ms: e2e.p99Ms } } : {}),
      variants,
      outcomes: search.outcomes.map(({ query, gold, ranking, firstRank }) => ({ query, gold, top5: ranking.slice(0, 5), firstRank })),
    };
  }

  console.log(`\n## Tool search vs plain BM25 (same run${flags['offline-only'] ? ', offline' : '; offline and end to end'})\n`);
  console.log(summary.join('\n'));
  console.log(`\n${ratios.join('\n')}`);
  if (variantRows.length > 0) {
    console.log('\n## Variants\n');
    console.log(row(['query set', 'variant', 'hit@1', 'hit@3', 'hit@5', 'recall@5', 'MRR']));
    console.log(row(['---', '---', '---:', '---:', '---:', '---:', '---:']));
    console.log(variantRows.join('\n'));
  }
  const out = resolve(PROJECT_ROOT, 'bench/results/search.json');
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwrote ${out}`);
}

function printMisses(name: string, ev: Evaluation): void {
  console.log(`\n### ${name}: queries without a gold tool in the top 5`);
  for (const o of ev.outcomes.filter((x) => x.firstRank === 0 || x.firstRank > 5)) {
    console.log(`- ${o.query.slice(0, 110)}\n    gold ${o.gold.join(', ')}\n    got  ${o.ranking.slice(0, 5).join(', ')}`);
  }
}

await main();
