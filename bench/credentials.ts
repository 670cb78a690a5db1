/**
 * Part 3, credentials at scale (`npm run bench:credentials`): BENCH_CREDENTIALS (10,000) distinct
 * credentials call tools/list on /mcp. A scope endpoint stub (bench/scope-stub.ts) answers each with
 * one of BENCH_SCOPE_SETS random subsets of the platform's 18 scopes; the gateway's scope cache is
 * configured smaller than the population (BENCH_SCOPE_CACHE_SIZE, 4,000) to show the bound.
 *
 * 1. Fill: every credential once, in chunks; after each chunk the gateway's heap after a full GC.
 *    Memory per entry = slope of heap over credentials while the cache is filling; bounded = the heap
 *    stays flat once the cache is full. Every answer is checked against that caller's expected tools.
 * 2. Hit rate: skewed traffic (Zipf, s = 1) over all credentials; hits and misses from the gateway's
 *    `mcp_scope_lookups_total`, cross-checked with the requests the stub received.
 *
 * The scope sets are few on purpose (64 by default, as roles are in practice): the gateway also keeps
 * one tools/list answer per distinct effective scope set, and with few sets that share stays out of
 * the per-credential figure. BENCH_SCOPE_SETS=10000 measures the worst case instead.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { visibleNames } from './expected-catalogues.ts';
import { sampleSum, scrape } from './gateway-metrics.ts';
import { percentile, SAMPLE_MS } from './load.ts';
import { fmt, mib, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { parseAnswer, rpcCall, sameNames, toolNames } from './rpc-requests.ts';
import { benchCredential, scopeSets, scopesOfKey } from './scope-stub.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type MemorySample, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

interface Traffic {
  /** Credential numbers to call, in order. */
  credentials: number[];
  connections: number;
}

interface TrafficResult {
  requests: number;
  non2xx: number;
  errors: number;
  wrongCatalogues: number;
  distinct: number;
  seconds: number;
  p50: number;
  p99: number;
}

/**
 * Sends tools/list for each credential of `traffic` (autocannon, one request per credential number)
 * and checks every answer against that credential's expected catalogue.
 */
async function send(gatewayUrl: string, traffic: Traffic, expectedFor: (n: number) => string[]): Promise<TrafficResult> {
  const base = rpcCall('modern', `${gatewayUrl}/mcp`, {}, 'tools/list');
  let next = 0;
  let wrongCatalogues = 0;
  const answered = new Set<number>();
  const samples: number[] = [];
  const instance = autocannon({
    url: base.url,
    method: 'POST',
    headers: base.headers,
    body: base.body,
    connections: traffic.connections,
    amount: traffic.credentials.length,
    sampleInt: SAMPLE_MS,
    requests: [
      {
        setupRequest: (request, context) => {
          const n = traffic.credentials[next++ % traffic.credentials.length]!;
          context.n = n;
          return { ...request, headers: { ...base.headers, ...benchCredential(n) } };
        },
        onResponse: (status, body, context) => {
          const n = context.n as number;
          answered.add(n);
          if (status !== 200) return;
          try {
            const names = toolNames(parseAnswer(body).result ?? {});
            if (!sameNames(names, expectedFor(n))) wrongCatalogues++;
          } catch {
            wrongCatalogues++;
          }
        },
      },
    ],
  });
  instance.on('response', (_c, status, _b, ms) => {
    if (status === 200) samples.push(ms);
  });
  const result = await instance;
  samples.sort((a, b) => a - b);
  return {
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    wrongCatalogues,
    distinct: answered.size,
    seconds: (result.finish.getTime() - result.start.getTime()) / 1000,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
  };
}

/** `count` draws from a Zipf(s = 1) popularity over `population` credentials (rank order shuffled by a fixed permutation). */
function zipfTraffic(population: number, count: number, seed = 7): number[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const cdf = new Float64Array(population);
  let total = 0;
  for (let r = 0; r < population; r++) cdf[r] = total += 1 / (r + 1);
  const permutation = Array.from({ length: population }, (_, i) => i);
  for (let i = population - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [permutation[i], permutation[j]] = [permutation[j]!, permutation[i]!];
  }
  return Array.from({ length: count }, () => {
    const target = random() * total;
    let lo = 0;
    let hi = population - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return permutation[lo]!;
  });
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return num / den;
}

interface CurvePoint {
  credentials: number;
  heapUsed: number;
  rss: number;
}

/** Runs part 3 and writes bench/results/credentials.json. */
export async function runCredentials(): Promise<PartOutcome> {
  const population = settings.credentials;
  const cacheSize = settings.scopeCacheSize;
  const sets = scopeSets({ sets: settings.scopeSets });
  const expectedCache = new Map<string, string[]>();
  const expectedFor = (n: number) => {
    const scopes = scopesOfKey(benchCredential(n)['x-cpz-key']!, sets)!;
    const key = scopes.join(' ');
    let names = expectedCache.get(key);
    if (!names) expectedCache.set(key, (names = visibleNames(scopes)));
    return names;
  };
  let backends: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  const curve: CurvePoint[] = [];
  const fills: TrafficResult[] = [];
  let hitRate: { requests: number; hits: number; misses: number; stubRequests: number; result: TrafficResult } | undefined;
  let end: MemorySample | undefined;
  try {
    backends = await startServiceProcess({ reference: true, scopeStub: { sets: settings.scopeSets } }, { name: 'reference-stub' });
    gateway = await startServiceProcess(
      {
        gateway: gatewaySpec(backends.urls.upstream!, backends.urls.scopeStub!, settings.gatewayLogLevel, {
          // Entries must not expire during the run: the bound comes from maxEntries alone.
          scopes: { maxEntries: cacheSize, ttlMs: 3_600_000 },
        }),
      },
      { name: 'gateway-credentials', exposeGc: true, cpuProfile: settings.cpuProfile },
    );
    const gatewayUrl = gateway.urls.gateway!;
    await waitReady(gatewayUrl);
    // Warm-up with one credential (one cache entry): JIT, catalogue, connections.
    const warm = await send(gatewayUrl, { credentials: Array(500).fill(0), connections: settings.connections }, expectedFor);
    if (warm.non2xx || warm.wrongCatalogues) throw new Error(`warm-up: ${warm.non2xx} non-2xx, ${warm.wrongCatalogues} wrong catalogues`);
    const sample = async (credentials: number) => {
      const m = await gateway!.memory(true);
      curve.push({ credentials, heapUsed: m.heapUsed, rss: m.rss });
    };
    await sample(1);
    const chunks = 10;
    const chunk = Math.ceil(population / chunks);
    for (let c = 0; c < chunks; c++) {
      const from = Math.max(1, c * chunk);
      const to = Math.min(population, (c + 1) * chunk);
      if (from >= to) break;
      process.stderr.write(`credentials: ${from}..${to - 1}\n`);
      const result = await send(
        gatewayUrl,
        { credentials: Array.from({ length: to - from }, (_, i) => from + i), connections: settings.connections },
        expectedFor,
      );
      fills.push(result);
      await sample(to);
    }
    // Hit rate under skewed traffic, from the gateway's own counters.
    const before = (await scrape(gatewayUrl)) ?? '';
    const stubBefore = await backends.stats();
    process.stderr.write(`credentials: ${settings.hitRateRequests} Zipf requests\n`);
    const zipf = await send(gatewayUrl, { credentials: zipfTraffic(population, settings.hitRateRequests), connections: settings.connections }, expectedFor);
    const after = (await scrape(gatewayUrl)) ?? '';
    const stubAfter = await backends.stats();
    const delta = (result: string) => sampleSum(after, 'mcp_scope_lookups_total', { result }) - sampleSum(before, 'mcp_scope_lookups_total', { result });
    hitRate = { requests: zipf.requests, hits: delta('hit'), misses: delta('miss'), stubRequests: stubAfter.requests - stubBefore.requests, result: zipf };
    end = await gateway.memory(true);
  } finally {
    await stopAll([gateway, backends]);
  }

  // Per entry: the slope while the cache fills, from the first chunk on (the warm-up-to-first-chunk
  // step also holds the per-scope-set listings and newly compiled code). Bounded: what the heap gained
  // after the cache was full, against what the same credentials would have cost without a bound.
  const firstChunk = curve[1]?.credentials ?? 0;
  const filling = curve.filter((p) => p.credentials >= firstChunk && p.credentials <= cacheSize);
  const perEntry = slope(filling.map((p) => ({ x: p.credentials, y: p.heapUsed })));
  const atBound = curve.find((p) => p.credentials >= cacheSize);
  const last = curve.at(-1);
  const heapAtBound = atBound?.heapUsed ?? NaN;
  const heapAtEnd = last?.heapUsed ?? NaN;
  const grownAfterBound = heapAtEnd - heapAtBound;
  const unboundedWouldGrow = perEntry * ((last?.credentials ?? 0) - (atBound?.credentials ?? 0));
  const afterBound = grownAfterBound / ((last?.credentials ?? 0) - (atBound?.credentials ?? 0));
  const wrong = fills.reduce((s, f) => s + f.wrongCatalogues, 0) + (hitRate?.result.wrongCatalogues ?? 0);
  const non2xx = fills.reduce((s, f) => s + f.non2xx + f.errors, 0) + (hitRate ? hitRate.result.non2xx + hitRate.result.errors : 0);
  const rate = hitRate ? hitRate.hits / (hitRate.hits + hitRate.misses) : NaN;
  const bounded = Number.isFinite(grownAfterBound) && unboundedWouldGrow > 0 && grownAfterBound < 0.5 * unboundedWouldGrow;

  const checks: TargetCheck[] = [
    {
      target: `scope cache bounded (maxEntries ${cacheSize.toLocaleString('en-US')} < ${population.toLocaleString('en-US')} credentials)`,
      measured: `heap +${mib(grownAfterBound)} MiB after the bound (unbounded: +${mib(unboundedWouldGrow)} MiB)`,
      pass: bounded,
      note: `${fmt(perEntry)} B per entry while filling; ${mib(heapAtBound)} MiB at the bound, ${mib(heapAtEnd)} MiB after all ${population.toLocaleString('en-US')} (pass: under half the unbounded growth)`,
    },
    {
      target: 'every caller got its own catalogue',
      measured: `${wrong} wrong, ${non2xx} failed of ${fills.reduce((s, f) => s + f.requests, 0) + (hitRate?.requests ?? 0)}`,
      pass: wrong === 0 && non2xx === 0,
    },
  ];
  const markdown = [
    `### Credentials at scale (${population.toLocaleString('en-US')} credentials, ${settings.scopeSets} random scope sets, scope cache maxEntries ${cacheSize.toLocaleString('en-US')}, tools/list on /mcp)`,
    '',
    table(
      ['credentials seen', 'heap after GC MiB', 'RSS MiB', 'tools/list p50/p99 ms (new credentials: scope lookup + list)'],
      curve.map((p, i) => [
        p.credentials.toLocaleString('en-US'),
        mib(p.heapUsed),
        mib(p.rss),
        i === 0 ? 'warm-up' : `${fmt(fills[i - 1]?.p50)} / ${fmt(fills[i - 1]?.p99)}`,
      ]),
    ),
    '',
    `- Memory per scope cache entry (heap slope while the cache fills, after the first chunk): **${fmt(perEntry)} bytes**; once full: ${fmt(afterBound)} bytes per further credential.`,
    hitRate
      ? `- Hit rate under Zipf traffic (${hitRate.requests.toLocaleString('en-US')} requests over ${population.toLocaleString('en-US')} credentials): **${fmt(rate * 100, 1)}%** (${hitRate.hits} hits, ${hitRate.misses} misses; the stub saw ${hitRate.stubRequests} lookups); p50/p99 ${fmt(hitRate.result.p50)} / ${fmt(hitRate.result.p99)} ms.`
      : '',
    '',
    targetTable(checks),
  ].join('\n');
  const path = writeResult('credentials', {
    settings: {
      credentials: population,
      scopeCacheSize: cacheSize,
      scopeSets: settings.scopeSets,
      hitRateRequests: settings.hitRateRequests,
      connections: settings.connections,
      gatewayLogLevel: settings.gatewayLogLevel,
    },
    processes: 'platform + reference upstream + scope stub in one child process, gateway in another, autocannon in the bench process',
    curve,
    fills,
    bytesPerEntry: perEntry,
    bytesPerCredentialOnceFull: afterBound,
    heapGrowthAfterBound: grownAfterBound,
    heapGrowthIfUnbounded: unboundedWouldGrow,
    hitRate: hitRate && { ...hitRate, rate },
    endMemory: end,
    targets: checks,
  });
  return { part: 'credentials', markdown, targets: checks, path };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runCredentials());
}
