/**
 * Part 2, catalogue scale (`npm run bench:scale`): a replay upstream serving synthetic catalogues
 * built from the shared real ones (34, 527, 2,000, 10,000 tools; upstream/replay/synthetic-catalog.ts),
 * 100 tools a page, cacheable and announcing changes (bench/versioned-replay.ts), a gateway in front.
 * Per size:
 * - re-index: the upstream switches to a new catalogue version and sends tools/list_changed; timed
 *   from the notification to the first search_tools answer that finds the new version's marker word
 *   (the gateway invalidates, fetches every page, builds the catalogue and its search index);
 * - cached tools/list through the gateway: req/s and p50/p99 loaded, p50 on one connection, bytes;
 * - search_tools p50/p99 on one connection for two query sets: short (cpzai-dev, a few words, as a
 *   model types them) and long (livemcpbench-dev, multi-step task descriptions), with the gateway's
 *   own `mcp_search_duration_seconds` histogram (share of searches under 5 ms);
 * - gateway heap (after a full GC) and RSS after the list and search runs;
 * - in this process, the search library alone (search/index.ts): index build time.
 * Runs are sized from a first timed answer, so a slow size stays within BENCH_SCALE_BUDGET_SECONDS.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { buildToolIndex, type SearchableTool } from '../search/index.ts';
import { metaCategory, type ToolDefinition } from '../upstream/replay/catalog-file.ts';
import { replayTools } from '../upstream/replay/replay-tools.ts';
import { syntheticCatalog } from '../upstream/replay/synthetic-catalog.ts';
import { profileMarkdown, summariseProfile, type ProfileSummary } from './cpu-profile.ts';
import { histogramBuckets, scrape } from './gateway-metrics.ts';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { countBytes, percentile, runLoad, SAMPLE_MS, summarise, withoutSamples, type ByteCountResult, type LoadResult } from './load.ts';
import { fmt, mib, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { rpcCall, searchMatches, sendCall, toolNames, verifiedResult, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type MemorySample, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

/** The project's labelled queries (data/README.md). */
const QUERIES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../data/queries');
const QUERY_SETS = { short: 'cpzai-dev.jsonl', long: 'livemcpbench-dev.jsonl' } as const;
type QuerySetName = keyof typeof QUERY_SETS;
const CREDENTIAL = { 'x-cpz-key': 'bench-scale', 'x-cpz-secret': 'bench-scale' };

function readQueries(file: string): string[] {
  return readFileSync(resolve(QUERIES_DIR, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { query: string }).query);
}

type Figures = Omit<LoadResult, 'samples'>;

interface SearchFigures {
  queries: number;
  endToEnd: Figures;
  /** From the gateway's histogram over this run: share of searches under 5 ms and 1 ms. */
  gatewayUnder5ms?: number;
  gatewayUnder1ms?: number;
}

interface SizeResult {
  size: number;
  readyMs: number;
  listBytes: number;
  list: Figures;
  listSequential: Figures;
  /** The same tools/list from a client that only counts bytes (plain, and with Accept-Encoding: gzip). */
  listCounted: ByteCountResult;
  listCountedGzip: ByteCountResult;
  /** A real SDK client's `listTools()` against the gateway (v2 client over fetch: it accepts gzip), median ms. */
  sdkListToolsMs: number;
  search: Partial<Record<QuerySetName, SearchFigures>>;
  reindex: { firstMs: number[]; warmMs: number[]; medianFirstMs: number; medianWarmMs: number; measuredWith: string };
  memory: MemorySample;
  libraryBuildMs: number;
  compact: boolean;
  /** Gateway CPU profile of this size (BENCH_CPU_PROF=1). */
  profile?: ProfileSummary;
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Requests for a one-connection run of about `seconds` at `latencyMs` each (at least `min`). */
function sequentialAmount(latencyMs: number, seconds: number, min = 10): number {
  return Math.max(min, Math.min(2000, Math.floor((seconds * 1000) / Math.max(latencyMs, 0.1))));
}

/**
 * Index build time of the search library alone (search/index.ts, synchronous build), measured in this
 * process before the services of the size start: the share of a re-index that is indexing.
 */
function libraryBuildMs(catalogue: ToolDefinition[]): number {
  const tools: SearchableTool[] = catalogue.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.inputSchema,
    category: metaCategory(t),
  }));
  const started = performance.now();
  buildToolIndex(tools);
  return performance.now() - started;
}

/** One-connection run cycling through `calls`; every answer must be a result without isError. */
/**
 * A full collection of this (the load generator's) heap before a timed search run. The list runs
 * before it leave hundreds of MB of answer strings here; collected in the middle of the run, they
 * stall the generator for 5-15 ms, which would be counted as the gateway's latency.
 */
const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

async function runSequence(calls: RpcCall[], amount: number): Promise<Figures> {
  collectGarbage();
  const samples: number[] = [];
  const instance = autocannon({
    url: calls[0]!.url,
    method: 'POST',
    headers: calls[0]!.headers,
    connections: 1,
    amount,
    sampleInt: SAMPLE_MS,
    requests: calls.map((c) => ({ method: 'POST', body: c.body, headers: c.headers })),
    verifyBody: (body) => body.includes('"result"') && !body.includes('"isError":true'),
  });
  instance.on('response', (_c, status, _b, ms) => status >= 200 && status < 300 && samples.push(ms));
  const result = await instance;
  if (result.non2xx || result.errors || result.mismatches)
    throw new Error(`search_tools run: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.mismatches} wrong bodies`);
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  return withoutSamples(summarise(samples, result, 0, result.requests.total, seconds))!;
}

/** Share of the gateway's searches under 5 ms and 1 ms between two scrapes. */
function searchShare(before: string, after: string): { under5ms: number; under1ms: number } | undefined {
  const a = histogramBuckets(after, 'mcp_search_duration_seconds');
  const b = histogramBuckets(before, 'mcp_search_duration_seconds');
  const delta = (le: number) => (a.get(le) ?? 0) - (b.get(le) ?? 0);
  const count = delta(Infinity);
  return count ? { under5ms: delta(0.005) / count, under1ms: delta(0.001) / count } : undefined;
}

async function measureSize(size: number, sets: Record<QuerySetName, string[]>): Promise<SizeResult> {
  // The same catalogue the replay process serves (synthetic-catalog.ts is deterministic).
  const catalogue = replayTools(syntheticCatalog(size));
  const buildMs = libraryBuildMs(catalogue);
  let backend: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  try {
    backend = await startServiceProcess({ replay: { size } }, { name: `replay-${size}` });
    const started = performance.now();
    gateway = await startServiceProcess(
      { gateway: gatewaySpec(backend.urls.replay!, undefined, settings.gatewayLogLevel, { limits: { maxListPages: 1000 }, upstreams: [{ name: 'replay' }] }) },
      { name: `gateway-scale-${size}`, exposeGc: true, cpuProfile: settings.cpuProfile },
    );
    const gatewayUrl = gateway.urls.gateway!;
    await waitReady(gatewayUrl, 120_000);
    const readyMs = performance.now() - started;

    // Cached tools/list: verified once (every tool, in one answer), then timed.
    const listCall = rpcCall('modern', `${gatewayUrl}/mcp`, CREDENTIAL, 'tools/list');
    await verifiedResult(`tools/list at ${size}`, listCall, (r) =>
      toolNames(r).length === size ? undefined : `expected ${size} tools, got ${toolNames(r).length}`,
    );
    const t0 = performance.now();
    const listBytes = Buffer.byteLength((await sendCall(listCall)).body);
    const listMs = performance.now() - t0;
    const listCheck = (body: string) => body.includes('"tools":[');
    const loaded =
      listMs * 4 < settings.scaleListSeconds * 1000
        ? { seconds: settings.scaleListSeconds }
        : { amount: Math.max(settings.connections, Math.min(4 * settings.connections, Math.floor((settings.scaleBudgetSeconds * 1000) / listMs))) };
    const list = await runLoad(listCall, { connections: settings.connections, check: listCheck, ...loaded });
    const listSequential = await runLoad(listCall, { connections: 1, amount: sequentialAmount(listMs, settings.scaleListSeconds / 2), check: listCheck });
    const counted = { connections: settings.connections, ...loaded };
    const listCounted = await countBytes(listCall, { ...counted, expectBytes: listBytes });
    const listCountedGzip = await countBytes(listCall, { ...counted, headers: { 'accept-encoding': 'gzip' } });
    if (listCounted.wrong || listCountedGzip.wrong)
      throw new Error(`tools/list at ${size}: ${listCounted.wrong + listCountedGzip.wrong} answers not 200 or not ${listBytes} bytes`);
    const sdkListToolsMs = await sdkListTools(`${gatewayUrl}/mcp`, size);

    // search_tools, one connection, per query set.
    const compactUrl = `${gatewayUrl}/mcp/compact`;
    const probe = await sendCall(rpcCall('modern', compactUrl, CREDENTIAL, 'tools/list'));
    const compact = probe.status === 200 && toolNames(probe.answer?.result ?? {}).includes('search_tools');
    const searchCall = (query: string): RpcCall =>
      rpcCall('modern', compactUrl, CREDENTIAL, 'tools/call', { name: 'search_tools', arguments: { query, limit: 5 } });
    const noError = (r: Record<string, unknown>) => (r.isError ? `isError ${JSON.stringify(r.content).slice(0, 200)}` : undefined);
    const searchRuns: SizeResult['search'] = {};
    if (compact) {
      await verifiedResult(`search_tools at ${size} (builds the index)`, searchCall(sets.short[0]!), noError);
      for (const [name, queries] of Object.entries(sets) as [QuerySetName, string[]][]) {
        const t1 = performance.now();
        const probes = queries.slice(0, 5);
        for (const q of probes) await verifiedResult(`search_tools at ${size}: ${q.slice(0, 40)}`, searchCall(q), noError);
        const each = (performance.now() - t1) / probes.length;
        const before = (await scrape(gatewayUrl)) ?? '';
        const endToEnd = await runSequence(
          queries.map(searchCall),
          Math.min(Math.max(queries.length * 3, 150), sequentialAmount(each, settings.scaleBudgetSeconds / 2, 20)),
        );
        const share = searchShare(before, (await scrape(gatewayUrl)) ?? '');
        searchRuns[name] = { queries: queries.length, endToEnd, gatewayUnder5ms: share?.under5ms, gatewayUnder1ms: share?.under1ms };
      }
    }
    const memory = await gateway.memory(true);

    // Re-index: a new catalogue version announced with tools/list_changed; the clock runs from the
    // notification to the first answer reflecting it (each request waits for the refresh in flight).
    const firstMs: number[] = [];
    const warmMs: number[] = [];
    for (let r = 1; r <= settings.reindexRepeats; r++) {
      const t2 = performance.now();
      const { marker } = await backend.bump();
      const call = compact ? searchCall(marker) : listCall;
      const isNew = (result: Record<string, unknown>) =>
        compact ? searchMatches(result)[0] === catalogue[0]!.name : JSON.stringify((result.tools as unknown[] | undefined)?.[0] ?? {}).includes(marker);
      for (let found = false; !found; ) {
        if (performance.now() - t2 > 60_000) throw new Error(`re-index at ${size}: the version with ${marker} was not served after 60 s`);
        found = isNew(await verifiedResult(`re-index at ${size}`, call, () => undefined));
      }
      firstMs.push(performance.now() - t2);
      const t3 = performance.now();
      await verifiedResult(`warm after re-index at ${size}`, call, (result) => (isNew(result) ? undefined : `the new version (${marker}) is gone`));
      warmMs.push(performance.now() - t3);
    }
    const result: SizeResult = {
      size,
      readyMs,
      listBytes,
      list: withoutSamples(list)!,
      listSequential: withoutSamples(listSequential)!,
      listCounted,
      listCountedGzip,
      sdkListToolsMs,
      search: searchRuns,
      reindex: {
        firstMs,
        warmMs,
        medianFirstMs: median(firstMs),
        medianWarmMs: median(warmMs),
        measuredWith: compact
          ? "from the upstream's list_changed to the first search_tools answer finding the new version (invalidate, fetch every page, build the catalogue and its index)"
          : "from the upstream's list_changed to the first tools/list with the new version (no /mcp/compact: fetch and catalogue, no index)",
      },
      memory,
      libraryBuildMs: buildMs,
      compact,
    };
    await stopAll([gateway, backend]);
    if (gateway.profilePath) result.profile = summariseProfile(gateway.profilePath);
    return result;
  } finally {
    await stopAll([gateway, backend]);
  }
}

/**
 * Median ms of a real SDK client's `listTools()` through the gateway (the v2 client, 2026-07-28, its
 * own fetch: it sends Accept-Encoding and decompresses), after one untimed call; checks the count.
 */
async function sdkListTools(url: string, size: number): Promise<number> {
  const client = new Client({ name: 'bench-scale', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const fetchWithCredential = (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(CREDENTIAL)) headers.set(name, value);
    return fetch(input, { ...init, headers });
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithCredential }));
  try {
    const times: number[] = [];
    for (let i = 0; i <= 5; i++) {
      const started = performance.now();
      // Past the client's response cache: a private list now carries a ttlMs (SEP-2549), which the client honours.
      const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' });
      if (tools.length !== size) throw new Error(`SDK listTools at ${size}: got ${tools.length} tools`);
      if (i > 0) times.push(performance.now() - started);
    }
    return median(times);
  } finally {
    await client.close();
  }
}

function targets(results: SizeResult[]): TargetCheck[] {
  const largest = results.find((r) => r.size === 10_000);
  if (!largest) return [];
  const checks: TargetCheck[] = [];
  for (const name of Object.keys(QUERY_SETS) as QuerySetName[]) {
    const s = largest.search[name];
    if (!s) {
      checks.push({
        target: `search_tools p99 < 5 ms at 10,000 tools (${name} queries)`,
        measured: 'not measured',
        pass: false,
        note: 'no /mcp/compact in this gateway',
      });
      continue;
    }
    const p99 = s.endToEnd.p99;
    checks.push({
      target: `search_tools p99 < 5 ms at 10,000 tools (${name} queries, end to end, 1 connection)`,
      measured: `${fmt(p99)} ms (p50 ${fmt(s.endToEnd.p50)} ms)`,
      pass: p99 < 5,
      note: p99 < 5 ? undefined : `missed by ${fmt(p99 - 5)} ms`,
    });
    if (s.gatewayUnder5ms !== undefined) {
      // The gateway's own mcp_search_duration_seconds (the index search, no HTTP): p99 < 5 ms when 99% fall under 5 ms.
      checks.push({
        target: `search_tools p99 < 5 ms at 10,000 tools (${name} queries, gateway's search histogram)`,
        measured: `${fmt(s.gatewayUnder5ms * 100, 1)}% under 5 ms`,
        pass: s.gatewayUnder5ms >= 0.99,
        note: s.gatewayUnder5ms >= 0.99 ? undefined : `p99 above 5 ms: ${fmt((1 - s.gatewayUnder5ms) * 100, 1)}% of searches took longer`,
      });
    }
  }
  const ms = largest.reindex.medianFirstMs;
  checks.push({
    target: 'catalogue re-index < 1 s at 10,000 tools',
    measured: `${fmt(ms / 1000)} s (index build alone ${fmt(largest.libraryBuildMs / 1000)} s)`,
    pass: ms < 1000,
    note: ms < 1000 ? undefined : `missed by ${fmt((ms - 1000) / 1000)} s`,
  });
  return checks;
}

/** Runs part 2 and writes bench/results/scale.json. */
export async function runScale(): Promise<PartOutcome> {
  const sets = { short: readQueries(QUERY_SETS.short), long: readQueries(QUERY_SETS.long) };
  const results: SizeResult[] = [];
  for (const size of settings.scaleSizes) {
    process.stderr.write(`scale: ${size} tools ...\n`);
    results.push(await measureSize(size, sets));
  }
  const checks = targets(results);
  const catalogueRows = results.map((r) => [
    r.size.toLocaleString('en-US'),
    fmt(r.reindex.medianFirstMs),
    fmt(r.libraryBuildMs),
    fmt(r.listBytes / 1024, 1),
    fmt(r.list.reqPerSec),
    fmt(r.listCounted.reqPerSec),
    `${fmt(r.listCountedGzip.reqPerSec)} (${fmt(r.listCountedGzip.bytesPerAnswer / 1024, 1)} KiB)`,
    fmt(r.sdkListToolsMs),
    `${fmt(r.list.p50)} / ${fmt(r.list.p99)}`,
    fmt(r.listSequential.p50),
    mib(r.memory.heapUsed),
    mib(r.memory.rss),
  ]);
  const searchRows = results.flatMap((r) =>
    (Object.keys(r.search) as QuerySetName[]).map((name) => {
      const s = r.search[name]!;
      return [
        r.size.toLocaleString('en-US'),
        `${name} (${s.queries})`,
        `${fmt(s.endToEnd.p50)} / ${fmt(s.endToEnd.p99)}`,
        s.gatewayUnder5ms !== undefined ? `${fmt(s.gatewayUnder5ms * 100, 1)}%` : 'n/a',
        s.gatewayUnder1ms !== undefined ? `${fmt(s.gatewayUnder1ms * 100, 1)}%` : 'n/a',
      ];
    }),
  );
  const markdown = [
    `### Catalogue scale (replay upstream: 100 tools a page, cacheScope public, list_changed; tools/list ${settings.connections} connections)`,
    '',
    table(
      [
        'tools',
        'new version to first search answer ms',
        'index build ms (library alone)',
        'tools/list KiB',
        'tools/list req/s (autocannon, checks each body)',
        'req/s (byte-counting client)',
        'req/s gzip (byte-counting; KiB on the wire)',
        'SDK listTools() ms (median)',
        'tools/list p50/p99 ms',
        'tools/list 1-conn p50 ms',
        'gateway heap MiB (after GC)',
        'gateway RSS MiB',
      ],
      catalogueRows,
    ),
    '',
    table(
      ['tools', 'queries', 'search_tools p50/p99 ms (end to end, 1 conn)', 'index searches < 5 ms (gateway histogram)', 'index searches < 1 ms'],
      searchRows,
    ),
    '',
    `- New version: ${results[0]?.reindex.measuredWith ?? 'n/a'}; median of ${settings.reindexRepeats}.`,
    '- Queries: short = cpzai-dev (a few words, as a model types them), long = livemcpbench-dev (multi-step task descriptions).',
    '- Heap and RSS: the gateway process after the tools/list and search runs, before the re-index runs.',
    `- tools/list throughput three ways: autocannon (its body check joins each answer into one string: at 10,000 tools it measures the load generator), a client that only counts the bytes (bench/load.ts countBytes; plain, then with Accept-Encoding: gzip), and the time of a real v2 SDK client's listTools() (it accepts gzip, parses and validates the answer).`,
    '',
    targetTable(checks),
    ...results
      .filter((r) => r.profile)
      .slice(-1)
      .map((r) => `\nGateway CPU profile at ${r.size.toLocaleString('en-US')} tools (whole run of that size):\n\n${profileMarkdown(r.profile!)}`),
  ].join('\n');
  const path = writeResult('scale', {
    settings: {
      sizes: settings.scaleSizes,
      connections: settings.connections,
      listSeconds: settings.scaleListSeconds,
      budgetSeconds: settings.scaleBudgetSeconds,
      reindexRepeats: settings.reindexRepeats,
      pageSize: 100,
      gatewayLogLevel: settings.gatewayLogLevel,
    },
    processes: 'replay upstream in one child process, gateway in another, autocannon and the library measurements in the bench process',
    sizes: results,
    targets: checks,
  });
  return { part: 'scale', markdown, targets: checks, path };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runScale());
}
