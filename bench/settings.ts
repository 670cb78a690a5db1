/**
 * Every knob of the benchmarks, read once from the environment. Defaults are sized so that
 * `npm run bench` (all four parts) finishes in under 10 minutes on a 2-core machine, the 5-minute
 * soak included. Durations are in seconds.
 */
const env = process.env;

function num(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
}

function list(name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.some((v) => !Number.isSafeInteger(v) || v < 1))
    throw new Error(`${name} must be a comma-separated list of positive integers, got ${JSON.stringify(raw)}`);
  return values;
}

export const settings = {
  /** autocannon connections for throughput rounds (overhead, scale tools/list). */
  connections: num('BENCH_CONNECTIONS', 8),
  /** Seconds of one A/B round per side (overhead). */
  roundSeconds: num('BENCH_ROUND_SECONDS', 2),
  /** A/B rounds per scenario (overhead); sides alternate ABBA so drift cancels. */
  rounds: num('BENCH_ROUNDS', 2),
  /** Untimed warm-up per side before the rounds, seconds. */
  warmupSeconds: num('BENCH_WARMUP_SECONDS', 0.5),
  /**
   * Overhead: an untimed pass over every scenario and side first, seconds each, so the rounds measure
   * JIT-compiled code and grown heaps in all three processes, not V8 warming up (measured: the first
   * few thousand tools/call cost the gateway and the upstream about twice the CPU of the steady state).
   */
  warmupPassSeconds: num('BENCH_WARMUP_PASS_SECONDS', 10),
  /**
   * Overhead: the warm-up pass of one scenario side also ends once it has answered this many requests
   * (whichever of the two comes first). Measured: the gateway's CPU per tools/call falls from 3.1 ms
   * cold to about 0.9 ms over the first ~9,000 calls, so less than this times a process still warming.
   */
  warmupPassCalls: num('BENCH_WARMUP_PASS_CALLS', 10_000),
  /** Requests of the sequential (one connection) latency run per side. */
  latencyRequests: num('BENCH_LATENCY_REQUESTS', 2000),
  /**
   * Overhead: latency is measured at a fixed offered rate, this fraction of the direct side's maximum
   * throughput (both sides at the same rate), so a p50 is a latency and not throughput in disguise.
   */
  fixedRateFraction: num('BENCH_FIXED_RATE_FRACTION', 0.5),
  /** Seconds of one fixed-rate latency run per side (two per side, alternating). */
  fixedRateSeconds: num('BENCH_FIXED_RATE_SECONDS', 3),
  /** Catalogue sizes of the scale part. */
  scaleSizes: list('BENCH_SCALE_SIZES', [34, 527, 2000, 10000]),
  /** Seconds of the cached tools/list run per size (scale). */
  scaleListSeconds: num('BENCH_SCALE_LIST_SECONDS', 2),
  /** Most seconds one scale measurement may take when the gateway is slow at a size (runs are sized from a first answer). */
  scaleBudgetSeconds: num('BENCH_SCALE_BUDGET_SECONDS', 8),
  /** Catalogue re-index measurements per size (scale). */
  reindexRepeats: num('BENCH_REINDEX_REPEATS', 2),
  /** Distinct credentials of the credentials part. */
  credentials: num('BENCH_CREDENTIALS', 10_000),
  /** Scope cache size configured for the credentials part (smaller than the credentials, to show the bound). */
  scopeCacheSize: num('BENCH_SCOPE_CACHE_SIZE', 4_000),
  /** Distinct random scope sets handed out by the scope stub (each credential draws one). */
  scopeSets: num('BENCH_SCOPE_SETS', 64),
  /** Requests of the skewed (Zipf) traffic measuring the scope cache hit rate. */
  hitRateRequests: num('BENCH_HIT_RATE_REQUESTS', 10_000),
  /** Soak duration, seconds (the five minutes). */
  soakSeconds: num('BENCH_SOAK_SECONDS', 300),
  /** Soak offered load, requests per second over all connections. */
  soakRate: num('BENCH_SOAK_RATE', 250),
  /** Allowed RSS growth of the gateway over the second half of the soak (middle sample to end), MiB. */
  soakRssBoundMiB: num('BENCH_SOAK_RSS_BOUND_MIB', 32),
  /** Allowed growth of the gateway's heap after a full GC over the soak (start to end), MiB. */
  soakHeapBoundMiB: num('BENCH_SOAK_HEAP_BOUND_MIB', 8),
  /** Interleaved rounds of the tools/call and call_tool floor comparison (direct, relay, gateway). */
  floorRounds: num('BENCH_FLOOR_ROUNDS', 6),
  /** Seconds of one side's saturation run, and of its fixed-rate run, per floor round. */
  floorRoundSeconds: num('BENCH_FLOOR_ROUND_SECONDS', 1.5),
  /** Tools in the memory part's catalogue. */
  memoryTools: num('BENCH_MEMORY_TOOLS', 10_000),
  /** Distinct credentials of the memory part. */
  memoryCredentials: num('BENCH_MEMORY_CREDENTIALS', 1_000),
  /** The memory part's target: the gateway's RSS at the end of its run, MiB (half the Helm chart's 768 MiB limit: docs/performance.md). */
  memoryRssTargetMiB: num('BENCH_MEMORY_RSS_TARGET_MIB', 384),
  /** Run the gateway under `node --cpu-prof` (profiles in bench/results/profiles/). */
  cpuProfile: env.BENCH_CPU_PROF === '1' || env.BENCH_CPU_PROF === 'true',
  /** Gateway log level in the benchmarks (its log goes to /dev/null; `info` writes one access line per request, as deployed). */
  gatewayLogLevel: env.BENCH_GATEWAY_LOG_LEVEL ?? 'info',
};
