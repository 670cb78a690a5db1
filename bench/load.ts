/**
 * Load runs with autocannon (its programmatic API), and the A/B runner of the overhead part.
 *
 * autocannon's own latency histogram has 1 ms resolution; the runs here also keep every 2xx response
 * time autocannon reports (its `response` event, measured with process.hrtime) to get sub-millisecond
 * percentiles. A cheap body check runs on every response (`verifyBody`: counted as mismatches).
 */
import autocannon from 'autocannon';
import type { RpcCall } from './rpc-requests.ts';

export interface LoadOptions {
  connections: number;
  /** Seconds; or */
  seconds?: number;
  /** a number of requests. */
  amount?: number;
  /** Every response body must pass this (counted in `mismatches` otherwise). */
  check?: (body: string) => boolean;
  /** Offered load, requests per second over all connections (default: as fast as answers come). */
  rate?: number;
}

/** What one load run measured. */
export interface LoadResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** Latency percentiles of 2xx answers, ms. */
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  /** Average bytes per response (headers + body). */
  bytesPerResponse: number;
  /** Paced runs: requests sent more than 1 ms after their scheduled time (all connections busy, or a late timer). */
  lateSends?: number;
  /** The first answer that failed the body check (start of it), when one did. */
  firstMismatch?: string;
  /** Raw 2xx latencies, ms (kept for merging rounds; not written to results). */
  samples: number[];
}

/** Nearest-rank percentile of sorted `values`. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** p50, p99 (nearest rank) and mean of latency `samples` (ms, any order; not modified). */
function latencyFigures(samples: readonly number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1) };
}

/**
 * Runs `call` and resolves with the measured figures: autocannon as fast as answers come, or, with
 * `rate`, {@link pacedLoad} (autocannon's own `overallRate` refills a quota once a second and sends it
 * back to back, so half of every second ran saturated: its "fixed-rate" p50 was the 8-connection p50).
 */
export async function runLoad(call: RpcCall, options: LoadOptions): Promise<LoadResult> {
  if (options.rate !== undefined)
    return pacedLoad(call, { connections: options.connections, seconds: options.seconds ?? 1, rate: options.rate, check: options.check });
  const samples: number[] = [];
  let bytes = 0;
  let responses = 0;
  let lastAt = 0;
  let firstMismatch: string | undefined;
  const check = options.check;
  const verifyBody =
    check &&
    ((body: string) => {
      const ok = check(body);
      if (!ok) firstMismatch ??= body.slice(0, 400);
      return ok;
    });
  const startedAt = performance.now();
  const instance = autocannon({
    url: call.url,
    method: call.method,
    headers: call.headers,
    body: call.body,
    connections: options.connections,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.seconds ?? 1 }),
    timeout: 30,
    sampleInt: SAMPLE_MS,
    ...(verifyBody ? { verifyBody } : {}),
  });
  instance.on('response', (_client, statusCode, resBytes, responseTime) => {
    bytes += resBytes;
    responses++;
    lastAt = performance.now();
    if (statusCode >= 200 && statusCode < 300) samples.push(responseTime);
  });
  const result = await instance;
  return { ...summarise(samples, result, bytes, responses, (lastAt - startedAt) / 1000), ...(firstMismatch ? { firstMismatch } : {}) };
}

/**
 * autocannon checks for the end of a run on its sample tick (1 s by default), so a run's own
 * start/finish span rounds up; throughput here is responses over the span from start to last response.
 */
export const SAMPLE_MS = 100;

/**
 * The figures of one autocannon run: `samples` are 2xx latencies (ms), `bytes` the bytes of all `total`
 * responses, `seconds` the span measured.
 */
export function summarise(samples: number[], result: autocannon.Result, bytes: number, total: number, seconds: number): LoadResult {
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  return {
    requests: total,
    seconds,
    reqPerSec: total / seconds,
    ...latencyFigures(samples),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    mismatches: result.mismatches,
    statusCodes,
    bytesPerResponse: total ? bytes / total : 0,
    samples,
  };
}

/** Merges runs of one side: totals add up, percentiles come from all samples together. */
export function mergeRuns(runs: readonly LoadResult[]): LoadResult {
  const samples = runs.flatMap((r) => r.samples);
  const requests = runs.reduce((s, r) => s + r.requests, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const statusCodes: Record<string, number> = {};
  for (const r of runs) for (const [code, count] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const sum = (key: 'errors' | 'timeouts' | 'non2xx' | 'mismatches') => runs.reduce((s, r) => s + r[key], 0);
  return {
    requests,
    seconds,
    reqPerSec: requests / seconds,
    ...latencyFigures(samples),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    non2xx: sum('non2xx'),
    mismatches: sum('mismatches'),
    statusCodes,
    bytesPerResponse: runs.reduce((s, r) => s + r.bytesPerResponse * r.requests, 0) / (requests || 1),
    ...(runs.some((r) => r.lateSends !== undefined) ? { lateSends: runs.reduce((s, r) => s + (r.lateSends ?? 0), 0) } : {}),
    ...(runs.find((r) => r.firstMismatch) ? { firstMismatch: runs.find((r) => r.firstMismatch)!.firstMismatch } : {}),
    samples,
  };
}

/** A side of an A/B comparison: a request and the check every answer must pass. */
export interface Side {
  label: string;
  call: RpcCall;
  check: (body: string) => boolean;
}

export interface AbOptions {
  rounds: number;
  roundSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** Requests of the one-connection latency run per side (0 skips it). */
  latencyRequests: number;
  /** Fixed-rate latency runs at this fraction of the direct side's throughput (0 skips them). */
  fixedRateFraction: number;
  /** Seconds of one fixed-rate run per side. */
  fixedRateSeconds: number;
}

/** Loaded (throughput) and unloaded (one connection) figures of both sides, measured in alternation. */
export interface AbResult {
  direct: LoadResult;
  gateway: LoadResult;
  directSequential?: LoadResult;
  gatewaySequential?: LoadResult;
  /** Both sides at the same offered rate (`rate` req/s): latency, not throughput. */
  directFixedRate?: LoadResult;
  gatewayFixedRate?: LoadResult;
  /** The offered rate of the fixed-rate runs, req/s. */
  rate?: number;
  /** Requests the gateway side answered in its untimed warm-up. */
  gatewayWarmupRequests: number;
  /** CPU (ms) the measured process spent during the gateway side's loaded rounds only, when `cpuMs` was given. */
  gatewayLoadedCpuMs?: number;
  /** The same for the direct side's process, when `directCpuMs` was given (bench/trees.ts: both sides are gateways). */
  directLoadedCpuMs?: number;
}

/**
 * Alternating A/B rounds in one run: an untimed warm-up per side, then `rounds` rounds ordered
 * ABBA (so slow drift of the machine hits both sides alike), each side `roundSeconds` at
 * `connections`; then one-connection latency runs, again alternating (A B B A, half the requests each).
 */
export async function abRounds(
  direct: Side,
  gateway: Side,
  options: AbOptions,
  cpuMs?: () => Promise<number>,
  directCpuMs?: () => Promise<number>,
): Promise<AbResult> {
  const load = (side: Side, connections: number, extra: Partial<LoadOptions>) => runLoad(side.call, { connections, check: side.check, ...extra });
  let gatewayWarmupRequests = 0;
  if (options.warmupSeconds > 0) {
    await load(direct, options.connections, { seconds: options.warmupSeconds });
    gatewayWarmupRequests = (await load(gateway, options.connections, { seconds: options.warmupSeconds })).requests;
  }
  const runs = { direct: [] as LoadResult[], gateway: [] as LoadResult[] };
  let gatewayLoadedCpuMs = cpuMs ? 0 : undefined;
  let directLoadedCpuMs = directCpuMs ? 0 : undefined;
  for (let round = 0; round < options.rounds; round++) {
    const order: ('direct' | 'gateway')[] = round % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct'];
    for (const which of order) {
      // CPU per request comes from the loaded gateway rounds only (not warm-up, 1-connection or fixed-rate runs).
      const meter = which === 'gateway' ? cpuMs : directCpuMs;
      const before = meter ? await meter() : undefined;
      runs[which].push(await load(which === 'direct' ? direct : gateway, options.connections, { seconds: options.roundSeconds }));
      if (before !== undefined && meter) {
        const spent = (await meter()) - before;
        if (which === 'gateway') gatewayLoadedCpuMs! += spent;
        else directLoadedCpuMs! += spent;
      }
    }
  }
  const result: AbResult = { direct: mergeRuns(runs.direct), gateway: mergeRuns(runs.gateway), gatewayWarmupRequests, gatewayLoadedCpuMs, directLoadedCpuMs };
  if (options.fixedRateFraction > 0 && options.fixedRateSeconds > 0) {
    const rate = result.direct.reqPerSec * options.fixedRateFraction;
    const fixed = { direct: [] as LoadResult[], gateway: [] as LoadResult[] };
    for (const which of ['direct', 'gateway', 'gateway', 'direct'] as const)
      fixed[which].push(await load(which === 'direct' ? direct : gateway, options.connections, { seconds: options.fixedRateSeconds, rate }));
    result.directFixedRate = mergeRuns(fixed.direct);
    result.gatewayFixedRate = mergeRuns(fixed.gateway);
    result.rate = rate;
  }
  if (options.latencyRequests > 0) {
    const half = Math.max(1, Math.floor(options.latencyRequests / 2));
    const seq = { direct: [] as LoadResult[], gateway: [] as LoadResult[] };
    for (const which of ['direct', 'gateway', 'gateway', 'direct'] as const)
      seq[which].push(await load(which === 'direct' ? direct : gateway, 1, { amount: half }));
    result.directSequential = mergeRuns(seq.direct);
    result.gatewaySequential = mergeRuns(seq.gateway);
  }
  return result;
}

/** A LoadResult without its raw samples, for the JSON results. */
export function withoutSamples(result: LoadResult | undefined): Omit<LoadResult, 'samples'> | undefined {
  if (!result) return undefined;
  const { samples: _samples, ...rest } = result;
  return rest;
}

/**
 * An open-loop load at a fixed offered rate: request i is due at `i / rate` seconds from the start and
 * is sent when it is due (on a timer of about 1 ms resolution, so sends are spread evenly, never
 * batched per second), over an undici Pool of at most `connections` sockets. A request due while every
 * socket is busy waits for one and counts in `lateSends`. Latency is from the send to the end of the
 * answer's body; every body passes `check` or counts as a mismatch. Why not autocannon: see
 * {@link runLoad}.
 */
export async function pacedLoad(
  call: RpcCall,
  options: { connections: number; seconds: number; rate: number; check?: (body: string) => boolean },
): Promise<LoadResult> {
  const { Pool } = await import('undici');
  const url = new URL(call.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1 });
  const path = `${url.pathname}${url.search}`;
  const intervalMs = 1000 / options.rate;
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let non2xx = 0;
  let mismatches = 0;
  let bytes = 0;
  let responses = 0;
  let inFlight = 0;
  let lateSends = 0;
  let firstMismatch: string | undefined;
  let sent = 0;
  const t0 = performance.now();
  let lastAt = t0;
  let wake: (() => void) | undefined;
  const send = async () => {
    inFlight++;
    const at = performance.now();
    try {
      const response = await pool.request({ path, method: call.method, headers: call.headers, body: call.body });
      const body = await response.body.text();
      const ms = performance.now() - at;
      statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
      bytes += Buffer.byteLength(body);
      if (response.statusCode < 200 || response.statusCode >= 300) non2xx++;
      else {
        samples.push(ms);
        if (options.check && !options.check(body)) {
          mismatches++;
          firstMismatch ??= body.slice(0, 400);
        }
      }
    } catch {
      errors++;
    } finally {
      inFlight--;
      responses++;
      lastAt = performance.now();
      wake?.();
    }
  };
  await new Promise<void>((done) => {
    const tick = () => {
      wake = undefined;
      const now = performance.now();
      while (sent < total && t0 + sent * intervalMs <= now) {
        if (inFlight >= options.connections) {
          // Sent when a socket frees up.
          wake = tick;
          return;
        }
        if (now - (t0 + sent * intervalMs) > 1) lateSends++;
        sent++;
        void send();
      }
      if (sent >= total) done();
      else setTimeout(tick, Math.max(0, t0 + sent * intervalMs - now));
    };
    tick();
  });
  while (inFlight > 0) await new Promise<void>((resolve) => (wake = resolve));
  await pool.close();
  const seconds = (lastAt - t0) / 1000;
  return {
    requests: responses,
    seconds,
    reqPerSec: responses / seconds,
    ...latencyFigures(samples),
    errors,
    timeouts: 0,
    non2xx,
    mismatches,
    statusCodes,
    bytesPerResponse: responses ? bytes / responses : 0,
    lateSends,
    ...(firstMismatch ? { firstMismatch } : {}),
    samples,
  };
}

/** What a {@link countBytes} run measured. */
export interface ByteCountResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** Body bytes per answer as received (compressed when the answer was). */
  bytesPerAnswer: number;
  /** Answers that were not HTTP 200 or not `expectBytes` long. */
  wrong: number;
  p50: number;
  p99: number;
}

/**
 * A load generator that only counts bytes: `connections` loops on an undici Pool, each reading the
 * body as it arrives and checking its status and length against `expectBytes`, never joining it into a
 * string. Why: at 10,000 tools autocannon's body check (the answer as one string) costs the generator
 * 41-48 ms of CPU per 8 MiB answer, ten times what the gateway spends, so it measures itself.
 * Runs `seconds`, or until `amount` answers.
 */
export async function countBytes(
  call: RpcCall,
  options: { connections: number; seconds?: number; amount?: number; expectBytes?: number; headers?: Record<string, string> },
): Promise<ByteCountResult> {
  const { Pool } = await import('undici');
  const url = new URL(call.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1 });
  const headers = { ...call.headers, ...options.headers };
  const samples: number[] = [];
  let bytes = 0;
  let wrong = 0;
  let started = 0;
  const t0 = performance.now();
  const deadline = t0 + (options.seconds ?? 3600) * 1000;
  const more = () => (options.amount !== undefined ? started < options.amount : performance.now() < deadline);
  const loop = async () => {
    while (more()) {
      started++;
      const at = performance.now();
      const response = await pool.request({ path: `${url.pathname}${url.search}`, method: 'POST', headers, body: call.body });
      let length = 0;
      for await (const chunk of response.body) length += (chunk as Buffer).length;
      samples.push(performance.now() - at);
      bytes += length;
      if (response.statusCode !== 200 || (options.expectBytes !== undefined && length !== options.expectBytes)) wrong++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const seconds = (performance.now() - t0) / 1000;
  await pool.close();
  const { p50, p99 } = latencyFigures(samples);
  return {
    requests: samples.length,
    seconds,
    reqPerSec: samples.length / seconds,
    bytesPerAnswer: bytes / Math.max(1, samples.length),
    wrong,
    p50,
    p99,
  };
}

/** The three sides of a floor comparison: the upstream directly, through a bare byte relay, through the gateway. */
export type FloorSide = 'direct' | 'relay' | 'gateway';
export const FLOOR_SIDES: readonly FloorSide[] = ['direct', 'relay', 'gateway'];

export interface FloorOptions {
  rounds: number;
  /** Seconds of one saturation run per side and round. */
  roundSeconds: number;
  /** Seconds of one fixed-rate run per side and round. */
  fixedRateSeconds: number;
  /** The fixed rate as a fraction of the slowest side's saturation throughput. */
  fixedRateFraction: number;
  connections: number;
}

/** One side's figures over every round, and per round (for medians of per-round ratios). */
export interface FloorSideResult {
  saturation: LoadResult;
  fixedRate: LoadResult;
  /** Per round: saturation req/s and fixed-rate p50 (ms). */
  rounds: { reqPerSec: number; fixedRateP50: number }[];
  /** CPU ms per request of the side's own process over its saturation runs (direct: none). */
  ownCpuMsPerRequest?: number;
  /** CPU ms per request of the upstream process over this side's saturation runs. */
  upstreamCpuMsPerRequest?: number;
}

export interface FloorResult {
  rate: number;
  sides: Record<FloorSide, FloorSideResult>;
}

/**
 * Direct, relay and gateway interleaved round by round in one run (the method of the yardstick outside the project,
 * overhead-floor.sh in issue 34): `rounds` saturation rounds (each side `roundSeconds` at `connections`
 * closed loops, the order rotated each round so drift hits every side alike) with each process's CPU
 * over its side's windows, then `rounds` fixed-rate rounds at `fixedRateFraction` of the slowest
 * side's saturation throughput (paced evenly, {@link pacedLoad}), again rotated. `cpu` reads a process's
 * CPU time (ms): the relay's, the gateway's and the upstream's.
 */
export async function floorRounds(
  sides: Record<FloorSide, Side>,
  options: FloorOptions,
  cpu: { relay: () => Promise<number>; gateway: () => Promise<number>; upstream: () => Promise<number> },
): Promise<FloorResult> {
  const order = (round: number) => FLOOR_SIDES.map((_, i) => FLOOR_SIDES[(i + round) % FLOOR_SIDES.length]!);
  const saturation = { direct: [] as LoadResult[], relay: [] as LoadResult[], gateway: [] as LoadResult[] };
  const own = { direct: 0, relay: 0, gateway: 0 };
  const upstream = { direct: 0, relay: 0, gateway: 0 };
  for (let round = 0; round < options.rounds; round++) {
    for (const which of order(round)) {
      const meter = which === 'direct' ? undefined : cpu[which];
      const [ownBefore, upBefore] = await Promise.all([meter?.(), cpu.upstream()]);
      saturation[which].push(await runLoad(sides[which].call, { connections: options.connections, seconds: options.roundSeconds, check: sides[which].check }));
      const [ownAfter, upAfter] = await Promise.all([meter?.(), cpu.upstream()]);
      if (meter) own[which] += ownAfter! - ownBefore!;
      upstream[which] += upAfter - upBefore;
    }
  }
  const rate = Math.min(...FLOOR_SIDES.map((s) => mergeRuns(saturation[s]).reqPerSec)) * options.fixedRateFraction;
  const fixed = { direct: [] as LoadResult[], relay: [] as LoadResult[], gateway: [] as LoadResult[] };
  for (let round = 0; round < options.rounds; round++)
    for (const which of order(round))
      fixed[which].push(
        await runLoad(sides[which].call, { connections: options.connections, seconds: options.fixedRateSeconds, rate, check: sides[which].check }),
      );
  const result = (which: FloorSide): FloorSideResult => {
    const merged = mergeRuns(saturation[which]);
    return {
      saturation: merged,
      fixedRate: mergeRuns(fixed[which]),
      rounds: saturation[which].map((r, i) => ({ reqPerSec: r.reqPerSec, fixedRateP50: fixed[which][i]!.p50 })),
      ...(which === 'direct' ? {} : { ownCpuMsPerRequest: own[which] / Math.max(1, merged.requests) }),
      upstreamCpuMsPerRequest: upstream[which] / Math.max(1, merged.requests),
    };
  };
  return { rate, sides: { direct: result('direct'), relay: result('relay'), gateway: result('gateway') } };
}

/** Median of `values` (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
