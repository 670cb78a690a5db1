/**
 * Search micro-benchmark (`npm run bench:search-scale`): the tool index alone (search/index.ts), in this
 * process, over synthetic catalogues of 34, 527, 2,000 and 10,000 tools (upstream/replay/synthetic-catalog.ts:
 * the shared real catalogues repeated under distinct server prefixes). Per size: synchronous build time,
 * the gateway's async build (wall time, and its longest synchronous slice: how long a build can stall
 * other requests), and search p50/p99 over the shared queries (cpzai-dev and livemcpbench-dev, shuffled),
 * each asked through a `filter` as the gateway's scope filtering does. Targets (issue 4): search p99
 * under 5 ms and re-index under 1 s at 10,000 tools.
 *
 * The machine is shared: every figure is the median over `--runs` runs (default 3), and the load average
 * is printed next to it. Writes bench/results/search-scale.json.
 * Flags: --sizes 34,527,2000,10000  --runs 3  --rounds N (passes over the query mix per run; default by
 * size)  --minisearch (also time a MiniSearch index of the same tools: bench/search/minisearch-floor.ts)
 * --compare-word-vectors FILE (another word vectors file, e.g. `git show REV:data/word-vectors/...`: per
 * size, one index with the project's vectors and one with FILE's, built and searched interleaved in this
 * process, query by query, with their ratios; the A/B of a change to the word arm on a shared machine)
 * --compare-tuning JSON (the same A/B against an index with these tuning overrides, e.g. a knob turned off).
 * Every figure is given in wall time and in CPU time (process.cpuUsage, user + system): on a shared
 * machine a search waits for a core far longer than it runs, and the CPU figures stay comparable.
 * Profile: `node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/search/scale.ts --sizes 10000`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import {
  buildToolIndex,
  buildToolIndexAsync,
  DEFAULT_TUNING,
  glossesFor,
  NO_GLOSSES,
  parseWordVectors,
  type WordVectors,
  type Glosses,
  glossTexts,
  type SearchableTool,
  type TuningOverrides,
} from '../../search/index.ts';
import { baseEntries, syntheticCatalog } from '../../upstream/replay/synthetic-catalog.ts';
import { miniSearchFloor } from './minisearch-floor.ts';
import { loadQuerySets, PROJECT_ROOT, searchableTools, DATA_DIR } from '../../tests/fixtures/search-data.ts';

const { values: flags } = parseArgs({
  options: {
    sizes: { type: 'string', default: '34,527,2000,10000' },
    runs: { type: 'string', default: '3' },
    rounds: { type: 'string' },
    minisearch: { type: 'boolean', default: false },
    tuning: { type: 'string', default: '{}' },
    'compare-word-vectors': { type: 'string' },
    'compare-tuning': { type: 'string' },
  },
});

/** Glosses of the base catalogues' Chinese text, made once (main): the synthetic catalogues repeat those texts. */
let glosses: Glosses = NO_GLOSSES;

/** `--tuning` (JSON overrides of search/tuning.ts), e.g. '{"semantic":"off"}' for the lexical arm alone. */
const TUNING = JSON.parse(flags.tuning) as TuningOverrides;

type QueryFigures = {
  searches: number;
  /** Over every timed search. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The same in CPU time (process.cpuUsage, user + system): what a search costs without the time other
   *  processes held the core, the figure that stays comparable on a shared machine. */
  cpuP50Ms: number;
  cpuP99Ms: number;
  /** Over the queries, each timed by its median over the rounds: the slow queries themselves, with
   *  most of what other processes cost (descheduling, cache eviction) left out. */
  queryP99Ms: number;
  /** The query with the highest median, and that median. */
  slowest: { query: string; ms: number };
};

type SizeFigures = QueryFigures & {
  tools: number;
  buildMs: number;
  /** CPU time of the synchronous build (absent for the MiniSearch floor). */
  buildCpuMs?: number;
  /** The gateway's build (`buildToolIndexAsync`); absent for the MiniSearch floor. */
  asyncBuildMs?: number;
  /** Longest gap between event-loop turns during the async build (ms). */
  asyncStallMs?: number;
  /** The same searches with the filter but no `filterKey` (the filter asked on every search). */
  unkeyed?: QueryFigures;
};

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

/** Deterministic shuffle (mulberry32), so every run asks the same mix in the same order. */
function shuffled<T>(xs: T[], seed: number): T[] {
  let a = seed;
  const random = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Wall time of the async build and the longest stretch without an event-loop turn meanwhile. */
async function asyncBuild(tools: SearchableTool[]): Promise<{ ms: number; stallMs: number }> {
  let last = performance.now();
  let stall = 0;
  let building = true;
  const tick = (): void => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
    if (building) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  await buildToolIndexAsync(tools, TUNING, { glosses });
  const ms = performance.now() - started;
  building = false;
  return { ms, stallMs: Math.max(stall, performance.now() - last) };
}

/** Times `ask` on every query, `rounds` times over (after one untimed pass). */
function timeQueries(queries: string[], rounds: number, ask: (query: string) => void): QueryFigures {
  for (const q of queries) ask(q);
  const perQuery = queries.map((): number[] => []);
  const cpu: number[] = [];
  for (let r = 0; r < rounds; r += 1) {
    queries.forEach((q, i) => {
      const cpuStarted = process.cpuUsage();
      const started = performance.now();
      ask(q);
      perQuery[i].push(performance.now() - started);
      cpu.push(cpuMs(process.cpuUsage(cpuStarted)));
    });
  }
  cpu.sort((a, b) => a - b);
  const ms = perQuery.flat().sort((a, b) => a - b);
  const medians = perQuery.map(median);
  const worst = medians.indexOf(Math.max(...medians));
  return {
    searches: ms.length,
    p50Ms: percentile(ms, 50),
    p99Ms: percentile(ms, 99),
    maxMs: ms.at(-1) ?? 0,
    cpuP50Ms: percentile(cpu, 50),
    cpuP99Ms: percentile(cpu, 99),
    queryP99Ms: percentile(
      [...medians].sort((a, b) => a - b),
      99,
    ),
    slowest: { query: queries[worst], ms: medians[worst] },
  };
}

/** User + system CPU time of a `process.cpuUsage` difference, ms. */
function cpuMs(used: NodeJS.CpuUsage): number {
  return (used.user + used.system) / 1000;
}

/** As the gateway does: every search goes through a scope filter (here one admitting every tool). */
function admitAll(tools: SearchableTool[]): (name: string) => boolean {
  const visible = new Set(tools.map((t) => t.name));
  return (name) => visible.has(name);
}

/** The index's own figures: searches pass a `filterKey` as the gateway does (its caller's catalogue
 *  version and scopes), and again without one. */
async function measure(tools: SearchableTool[], queries: string[], rounds: number): Promise<SizeFigures> {
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  const index = buildToolIndex(tools, TUNING, { glosses });
  const buildMs = performance.now() - started;
  const buildCpuMs = cpuMs(process.cpuUsage(cpuStarted));
  const built = await asyncBuild(tools);
  const filter = admitAll(tools);
  const keyed = timeQueries(queries, rounds, (q) => index.search(q, { limit: 5, filter, filterKey: 'bench' }));
  const unkeyed = timeQueries(queries, rounds, (q) => index.search(q, { limit: 5, filter }));
  return { tools: tools.length, buildMs, buildCpuMs, asyncBuildMs: built.ms, asyncStallMs: built.stallMs, ...keyed, unkeyed };
}

function measureMiniSearch(tools: SearchableTool[], queries: string[], rounds: number): SizeFigures {
  const floor = miniSearchFloor(tools);
  const filter = admitAll(tools);
  return { tools: tools.length, buildMs: floor.buildMs, ...timeQueries(queries, rounds, (q) => floor.lookups(q, filter)) };
}

/** Medians over runs, figure by figure; the slowest query of all runs. */
function medianOf(all: SizeFigures[]): SizeFigures {
  const pick = (
    k: 'buildMs' | 'buildCpuMs' | 'asyncBuildMs' | 'asyncStallMs' | 'p50Ms' | 'p99Ms' | 'maxMs' | 'queryP99Ms' | 'cpuP50Ms' | 'cpuP99Ms',
  ): number | undefined => (all[0][k] === undefined ? undefined : median(all.map((f) => f[k] as number)));
  return {
    tools: all[0].tools,
    searches: all[0].searches,
    buildMs: pick('buildMs') as number,
    buildCpuMs: pick('buildCpuMs'),
    asyncBuildMs: pick('asyncBuildMs'),
    asyncStallMs: pick('asyncStallMs'),
    p50Ms: pick('p50Ms') as number,
    p99Ms: pick('p99Ms') as number,
    maxMs: pick('maxMs') as number,
    queryP99Ms: pick('queryP99Ms') as number,
    cpuP50Ms: pick('cpuP50Ms') as number,
    cpuP99Ms: pick('cpuP99Ms') as number,
    slowest: all.reduce((a, f) => (f.slowest.ms > a.slowest.ms ? f : a)).slowest,
    ...(all[0].unkeyed ? { unkeyed: medianOf(all.map((f) => ({ ...f, ...(f.unkeyed as QueryFigures), unkeyed: undefined }))) } : {}),
  };
}

/**
 * The project's index against another build of the same tools (`other`: other word vectors, or other tuning
 * overrides on top of `--tuning`): `runs` builds of each, alternating, then every query asked of both
 * indexes in turn (which goes first alternating too), `rounds` times over. Prints and returns each side's
 * median build and its search p50 / p99, and their ratios (other / project).
 */
function compareBuilds(
  tools: SearchableTool[],
  queries: string[],
  rounds: number,
  runs: number,
  other: { wordVectors?: WordVectors; tuning?: TuningOverrides; label: string },
): { project: Record<string, number>; other: Record<string, number> } {
  const builds: [number[], number[]] = [[], []];
  const buildCpu: [number[], number[]] = [[], []];
  const build = (side: number): ReturnType<typeof buildToolIndex> =>
    side === 0
      ? buildToolIndex(tools, TUNING, { glosses })
      : buildToolIndex(tools, { ...TUNING, ...other.tuning }, { glosses, wordVectors: other.wordVectors });
  // One untimed build of each first: the first build of a process reads the word vectors file and compiles.
  const indexes = [0, 1].map(build);
  for (let r = 0; r < runs; r += 1) {
    // Which side builds first alternates: the garbage of the builds before lands on the one that follows.
    for (const side of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const cpuStarted = process.cpuUsage();
      const started = performance.now();
      indexes[side] = build(side);
      builds[side].push(performance.now() - started);
      buildCpu[side].push(cpuMs(process.cpuUsage(cpuStarted)));
    }
  }
  const filter = admitAll(tools);
  const times: [number[], number[]] = [[], []];
  const cpu: [number[], number[]] = [[], []];
  const ask = (side: number, q: string): void => {
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    indexes[side].search(q, { limit: 5, filter, filterKey: 'bench' });
    times[side].push(performance.now() - started);
    cpu[side].push(cpuMs(process.cpuUsage(cpuStarted)));
  };
  for (const q of queries) for (const side of [0, 1]) ask(side, q);
  for (const t of [...times, ...cpu]) t.length = 0;
  for (let r = 0; r < rounds; r += 1) {
    queries.forEach((q, i) => {
      const order = (r + i) % 2 === 0 ? [0, 1] : [1, 0];
      for (const side of order) ask(side, q);
    });
  }
  /** One side's median build and search percentiles, wall and CPU time. */
  const figuresOf = (side: number): Record<'buildMs' | 'buildCpuMs' | 'p50Ms' | 'p99Ms' | 'cpuP50Ms' | 'cpuP99Ms', number> => {
    const wall = [...times[side]].sort((a, b) => a - b);
    const used = [...cpu[side]].sort((a, b) => a - b);
    return {
      buildMs: median(builds[side]),
      buildCpuMs: median(buildCpu[side]),
      p50Ms: percentile(wall, 50),
      p99Ms: percentile(wall, 99),
      cpuP50Ms: percentile(used, 50),
      cpuP99Ms: percentile(used, 99),
    };
  };
  const [a, b] = [figuresOf(0), figuresOf(1)];
  const pair = (k: keyof typeof a, digits = 2): string => `${fmt(a[k], digits)} vs ${fmt(b[k], digits)} ms (x${fmt(b[k] / a[k])})`;
  console.log(
    `\nA/B, ${tools.length} tools (${runs} builds each, ${times[0].length} searches each, interleaved; project vs ${other.label}): ` +
      `build ${pair('buildMs', 0)}, p50 ${pair('p50Ms')}, p99 ${pair('p99Ms')}; ` +
      `CPU time: build ${pair('buildCpuMs', 0)}, search p50 ${pair('cpuP50Ms')}, p99 ${pair('cpuP99Ms')}`,
  );
  return { project: a, other: b };
}

const fmt = (x: number | undefined, digits = 2): string => (x === undefined ? '-' : x.toFixed(digits));
const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;

async function main(): Promise<void> {
  // Glosses of the catalogues' Chinese text are made once, from the gloss table (a new text's cost, not a build's).
  const glossStarted = performance.now();
  glosses = await glossesFor(glossTexts(searchableTools(baseEntries(resolve(DATA_DIR, 'catalogs')))));
  const glossMs = performance.now() - glossStarted;
  const sizes = flags.sizes.split(',').map(Number);
  const runs = Math.max(1, Number(flags.runs));
  const { sets } = loadQuerySets();
  const queries = shuffled(
    sets.flatMap((s) => s.queries.map((q) => q.query)),
    42,
  );
  const loadBefore = loadavg();
  const results: { index: string; tools: number; runs: SizeFigures[]; median: SizeFigures }[] = [];
  for (const size of sizes) {
    // Through JSON, as a gateway receives a catalogue (flat strings, not the concatenations built here).
    const tools = JSON.parse(JSON.stringify(searchableTools(syntheticCatalog(size, baseEntries(resolve(DATA_DIR, 'catalogs')))))) as SearchableTool[];
    // About 2,000 timed searches per run for small catalogues, fewer for large ones.
    const rounds = flags.rounds !== undefined ? Number(flags.rounds) : Math.max(5, Math.round(20 * Math.min(1, 2000 / size)));
    const otherFile = flags['compare-word-vectors'];
    if (otherFile !== undefined) {
      compareBuilds(tools, queries, rounds, runs, { wordVectors: parseWordVectors(readFileSync(otherFile)), label: otherFile });
      continue;
    }
    const otherTuning = flags['compare-tuning'];
    if (otherTuning !== undefined) {
      compareBuilds(tools, queries, rounds, runs, { tuning: JSON.parse(otherTuning) as TuningOverrides, label: otherTuning });
      continue;
    }
    const rankers: [string, () => Promise<SizeFigures> | SizeFigures][] = [['tool index', () => measure(tools, queries, rounds)]];
    if (flags.minisearch) rankers.push(['MiniSearch floor', () => measureMiniSearch(tools, queries, rounds)]);
    for (const [name, run] of rankers) {
      const all: SizeFigures[] = [];
      for (let r = 0; r < runs; r += 1) all.push(await run());
      const m = medianOf(all);
      results.push({ index: name, tools: size, runs: all, median: m });
      console.error(
        `${name}, ${size} tools: build ${fmt(m.buildMs, 0)} ms, search p50 ${fmt(m.p50Ms)} ms p99 ${fmt(m.p99Ms)} ms; slowest query ${fmt(m.slowest.ms)} ms: ${m.slowest.query.slice(0, 60)}...`,
      );
    }
  }
  const loadAfter = loadavg();
  const load = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' ');
  if (flags['compare-word-vectors'] !== undefined || flags['compare-tuning'] !== undefined) {
    console.log(`\nload average before ${load(loadBefore)}, after ${load(loadAfter)} (${process.version}, 1/5/15 min, 2 cores)`);
    return;
  }
  const lines = [
    row([
      'index',
      'tools',
      'build ms',
      'build CPU ms',
      'async build ms',
      'longest stall ms',
      'searches/run',
      'search p50 ms',
      'search p99 ms',
      'max ms',
      'query p99 ms',
      'CPU p50 / p99 ms',
      'p50 / p99 ms, no filterKey',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...results.map(({ index, median: m }) =>
      row([
        index,
        m.tools,
        fmt(m.buildMs, 0),
        fmt(m.buildCpuMs, 0),
        fmt(m.asyncBuildMs, 0),
        fmt(m.asyncStallMs, 0),
        m.searches,
        fmt(m.p50Ms),
        fmt(m.p99Ms),
        fmt(m.maxMs),
        fmt(m.queryP99Ms),
        `${fmt(m.cpuP50Ms)} / ${fmt(m.cpuP99Ms)}`,
        m.unkeyed ? `${fmt(m.unkeyed.p50Ms)} / ${fmt(m.unkeyed.p99Ms)}` : '-',
      ]),
    ),
  ];
  console.log(
    `\n## Tool index at scale (in process; median of ${runs} runs; ${queries.length} shared queries, limit 5, filtered; semantic arm ${TUNING.semantic ?? DEFAULT_TUNING.semantic})\n`,
  );
  console.log(lines.join('\n'));
  console.log('\nSearches pass a filter admitting every tool, with a filterKey as the gateway does; the last column without it.');
  console.log('CPU: the same searches in CPU time (process.cpuUsage, user + system): their cost without the time other processes held the core.');
  console.log(
    "query p99: p99 over the queries of each query's median time over the rounds (the slowest queries, with most interference from other processes left out).",
  );
  if (flags.minisearch)
    console.log('MiniSearch floor: one MiniSearch search per query term and field, nothing of the ranking on top (bench/search/minisearch-floor.ts).');
  console.log(`Chinese glosses (the CC-CEDICT gloss table) made once before timing: ${glossMs.toFixed(0)} ms.`);
  console.log(`\nload average before ${load(loadBefore)}, after ${load(loadAfter)} (${process.version}, 1/5/15 min, 2 cores)`);
  const out = resolve(PROJECT_ROOT, 'bench/results/search-scale.json');
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, loadBefore, loadAfter, queries: queries.length, results }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);
}

await main();
