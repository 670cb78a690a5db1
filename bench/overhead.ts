/**
 * Part 1, overhead (`npm run bench:overhead`): the same JSON-RPC request at the reference upstream
 * directly and through the gateway, alternating A/B rounds in one run, in both eras. Scenarios:
 * tools/list (full key, data key), tools/call list_accounts {limit: 1}, the same call through a bare
 * byte-relaying proxy (the floor of any extra process hop, bare-proxy.ts), and on /mcp/compact
 * search_tools and call_tool (call_tool compared with a direct tools/call of the same tool).
 *
 * Measured, in this order, per era: an untimed warm-up of every scenario side (until it answered
 * `warmupPassCalls` requests or ran `warmupPassSeconds`); then per scenario ABBA rounds at a fixed
 * number of connections (throughput; the gateway's CPU per request comes from these loaded rounds
 * only), fixed-rate runs at `fixedRateFraction` of the direct side's maximum (latency: both sides offered
 * the same open-loop load, paced evenly by load.ts `pacedLoad`, so a p50 is not throughput in disguise)
 * and 1-connection runs. Every tools/call figure
 * is also set against the bare proxy's (the floor of any extra hop).
 *
 * Processes: the platform + reference upstream in one child process, the gateway in another, the
 * bare proxy in a third, the load generators (autocannon; an undici Pool for the paced runs) here. Every request is sent once and fully checked before it is timed
 * (HTTP 200, the right tool set or result); during the rounds every answer passes a cheap body check.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { profileMarkdown, summariseProfile, type ProfileSummary } from './cpu-profile.ts';
import { DEMO_KEYS, EXPECTED, ALL_TOOL_NAMES } from './expected-catalogues.ts';
import { abRounds, runLoad, withoutSamples, type AbResult, type Side } from './load.ts';
import { fmt, mib, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { ERAS, rpcCall, sameNames, searchMatches, sendCall, toolNames, verifiedResult, type Era, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

type Result = Record<string, unknown>;

/** One side of a scenario: the request, its full check (run before and after timing) and the cheap per-answer check. */
interface SideSpec {
  call: RpcCall;
  verify: (result: Result) => string | undefined;
  check: (body: string) => boolean;
}

interface Scenario {
  name: string;
  direct: SideSpec;
  gateway: SideSpec;
  /** The scenario is judged against a target (see {@link targets}). */
  kind: 'list' | 'call' | 'floor' | 'search' | 'call_tool';
  note?: string;
}

const CALL_TOOL_TARGET = { name: 'list_connections', arguments: { limit: 1 } };
const SEARCH_QUERY = 'list my broker accounts';

const noError = (body: string) => body.includes('"result"') && !body.includes('"isError":true');
const listCheck = (mustHave: string, mustNotHave?: string) => (body: string) =>
  body.includes('"tools":[') && body.includes(`"name":"${mustHave}"`) && (mustNotHave === undefined || !body.includes(`"name":"${mustNotHave}"`));

function namesAre(expected: readonly string[]) {
  return (result: Result) =>
    sameNames(toolNames(result), expected) ? undefined : `expected ${expected.length} tools, got ${toolNames(result).length}: ${toolNames(result).join(',')}`;
}

function oneRecord(result: Result): string | undefined {
  if (result.isError) return `isError: ${JSON.stringify(result.content).slice(0, 200)}`;
  const data = (result.structuredContent as { data?: unknown[] } | undefined)?.data;
  return Array.isArray(data) && data.length === 1 ? undefined : 'expected structuredContent.data with one record';
}

function scenarios(era: Era, upstream: string, gateway: string, bareProxy: string, compact: boolean): Scenario[] {
  const full = DEMO_KEYS.full;
  const data = DEMO_KEYS.data;
  const list: Scenario[] = [
    {
      name: 'tools/list, full key',
      kind: 'list',
      direct: { call: rpcCall(era, upstream, full, 'tools/list'), verify: namesAre(ALL_TOOL_NAMES), check: listCheck('place_order') },
      gateway: { call: rpcCall(era, `${gateway}/mcp`, full, 'tools/list'), verify: namesAre(EXPECTED.full.full), check: listCheck('place_order') },
    },
    {
      name: 'tools/list, data key',
      kind: 'list',
      note: 'the upstream answers all 34 tools to every key; the gateway the 10 the data key may use',
      direct: { call: rpcCall(era, upstream, data, 'tools/list'), verify: namesAre(ALL_TOOL_NAMES), check: listCheck('list_accounts') },
      gateway: {
        call: rpcCall(era, `${gateway}/mcp`, data, 'tools/list'),
        verify: namesAre(EXPECTED.data.full),
        check: listCheck('list_accounts', 'place_order'),
      },
    },
    {
      name: 'tools/call list_accounts {limit:1}',
      kind: 'call',
      direct: { call: rpcCall(era, upstream, full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } }), verify: oneRecord, check: noError },
      gateway: {
        call: rpcCall(era, `${gateway}/mcp`, full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } }),
        verify: oneRecord,
        check: noError,
      },
    },
    {
      name: 'floor: the same tools/call through a bare proxy',
      kind: 'floor',
      note: 'not the gateway: a node:http proxy process that only relays bytes (bench/bare-proxy.ts), the floor for any gateway running as its own process on this machine',
      direct: { call: rpcCall(era, upstream, full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } }), verify: oneRecord, check: noError },
      gateway: { call: rpcCall(era, bareProxy, full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } }), verify: oneRecord, check: noError },
    },
  ];
  if (!compact) return list;
  const visible = new Set(EXPECTED.full.full);
  list.push(
    {
      name: `search_tools "${SEARCH_QUERY}" (compact)`,
      kind: 'search',
      note: 'direct side: the upstream tools/list a client without search would fetch instead',
      direct: { call: rpcCall(era, upstream, full, 'tools/list'), verify: namesAre(ALL_TOOL_NAMES), check: listCheck('place_order') },
      gateway: {
        call: rpcCall(era, `${gateway}/mcp/compact`, full, 'tools/call', { name: 'search_tools', arguments: { query: SEARCH_QUERY } }),
        verify: (result) => {
          const names = searchMatches(result);
          if (result.isError) return `isError: ${JSON.stringify(result.content).slice(0, 200)}`;
          if (names.length === 0) return 'no matches';
          if (!names.includes('list_accounts')) return `list_accounts not among ${names.join(',')}`;
          return names.every((n) => visible.has(n)) ? undefined : `a match outside the caller's catalogue: ${names.join(',')}`;
        },
        check: (body) => noError(body) && body.includes('list_accounts'),
      },
    },
    {
      name: `call_tool ${CALL_TOOL_TARGET.name} {limit:1} (compact)`,
      kind: 'call_tool',
      note: `direct side: tools/call ${CALL_TOOL_TARGET.name} at the upstream`,
      direct: { call: rpcCall(era, upstream, full, 'tools/call', CALL_TOOL_TARGET), verify: oneRecord, check: noError },
      gateway: {
        call: rpcCall(era, `${gateway}/mcp/compact`, full, 'tools/call', { name: 'call_tool', arguments: CALL_TOOL_TARGET }),
        verify: oneRecord,
        check: noError,
      },
    },
  );
  return list;
}

/** Whether the gateway serves /mcp/compact with search_tools (issue 8 may not have landed). */
async function hasCompact(gateway: string): Promise<boolean> {
  const { status, answer } = await sendCall(rpcCall('modern', `${gateway}/mcp/compact`, DEMO_KEYS.full, 'tools/list'));
  return status === 200 && toolNames(answer?.result ?? {}).includes('search_tools');
}

async function verifySide(label: string, side: SideSpec): Promise<Result> {
  return verifiedResult(label, side.call, side.verify);
}

/** Calls whose results must be identical direct and through the gateway (the gateway relays them unchanged). */
function sameStructured(direct: Result, gateway: Result): string | undefined {
  return JSON.stringify(direct.structuredContent) === JSON.stringify(gateway.structuredContent)
    ? undefined
    : 'structuredContent differs between direct and gateway';
}

interface ScenarioResult {
  scenario: string;
  era: Era;
  kind: Scenario['kind'];
  note?: string;
  result: AbResult;
  /** CPU the gateway (or, for the floor, the bare proxy) process used per request of its loaded rounds, ms. */
  hopCpuMsPerRequest: number;
}

/** Ratios of one scenario's gateway side against a reference (direct, or the floor's proxy side). */
interface Ratios {
  throughput: number;
  fixedRateP50?: number;
  fixedRateP99?: number;
  sequentialP50?: number;
}

function ratios(r: AbResult, reference: Pick<AbResult, 'direct' | 'directFixedRate' | 'directSequential'>): Ratios {
  return {
    throughput: r.gateway.reqPerSec / reference.direct.reqPerSec,
    fixedRateP50: r.gatewayFixedRate && reference.directFixedRate ? r.gatewayFixedRate.p50 / reference.directFixedRate.p50 : undefined,
    fixedRateP99: r.gatewayFixedRate && reference.directFixedRate ? r.gatewayFixedRate.p99 / reference.directFixedRate.p99 : undefined,
    sequentialP50: r.gatewaySequential && reference.directSequential ? r.gatewaySequential.p50 / reference.directSequential.p50 : undefined,
  };
}

/** The floor scenario's proxy side, shaped as the reference side of {@link ratios}. */
function floorOf(results: readonly ScenarioResult[], era: Era): Pick<AbResult, 'direct' | 'directFixedRate' | 'directSequential'> | undefined {
  const floor = results.find((s) => s.kind === 'floor' && s.era === era)?.result;
  return floor && { direct: floor.gateway, directFixedRate: floor.gatewayFixedRate, directSequential: floor.gatewaySequential };
}

const isCall = (s: ScenarioResult) => s.kind === 'call' || s.kind === 'call_tool';
const x = (value: number | undefined) => (value === undefined ? 'n/a' : `${fmt(value)}x`);

/** The issue-15 targets: tools/call (both eras, `/mcp` and `call_tool`) against direct and the floor. */
function targets(results: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const check = (target: string, value: number | undefined, pass: (v: number) => boolean, measured: string, miss: (v: number) => string) =>
    checks.push(
      value === undefined
        ? { target, measured: 'not measured', pass: false }
        : { target, measured, pass: pass(value), note: pass(value) ? undefined : miss(value) },
    );
  for (const r of results.filter(isCall)) {
    const what = `${r.kind === 'call' ? 'tools/call' : 'call_tool'} (${r.era})`;
    const direct = ratios(r.result, r.result);
    check(
      `${what} throughput >= 0.85x direct, ${settings.connections} connections`,
      direct.throughput,
      (v) => v >= 0.85,
      x(direct.throughput),
      (v) => `missed by ${fmt((0.85 - v) * 100, 0)} points`,
    );
    check(
      `${what} p50 <= 1.2x direct at ${fmt(r.result.rate ?? NaN, 0)} req/s offered`,
      direct.fixedRateP50,
      (v) => v <= 1.2,
      x(direct.fixedRateP50),
      (v) => `missed by ${fmt((v / 1.2 - 1) * 100, 0)}%`,
    );
    check(
      `${what} gateway CPU <= 0.45 ms per call (loaded rounds)`,
      r.hopCpuMsPerRequest,
      (v) => v <= 0.45,
      `${fmt(r.hopCpuMsPerRequest)} ms`,
      (v) => `missed by ${fmt((v - 0.45) * 1000, 0)} us`,
    );
    const floor = floorOf(results, r.era);
    const vsFloor = floor ? ratios(r.result, floor) : undefined;
    const seq = vsFloor?.sequentialP50;
    check(
      `${what} 1-connection p50 <= 1.3x the bare-proxy floor's`,
      seq,
      (v) => v <= 1.3,
      `${x(seq)} (${fmt(r.result.gatewaySequential?.p50 ?? NaN)} vs ${fmt(floor?.directSequential?.p50 ?? NaN)} ms)`,
      (v) => `missed by ${fmt((v / 1.3 - 1) * 100, 0)}%`,
    );
  }
  for (const r of results.filter((s) => s.kind === 'list')) {
    const tp = r.result.gateway.reqPerSec / r.result.direct.reqPerSec;
    checks.push({
      target: `warm ${r.scenario}: gateway faster than upstream (${r.era})`,
      measured: `${fmt(tp)}x req/s`,
      pass: tp > 1,
      note: tp > 1 ? undefined : `gateway at ${fmt(tp * 100, 0)}% of the upstream's throughput`,
    });
  }
  return checks;
}

const pair = (a: LoadResultLike | undefined, key: 'p50' | 'p99' = 'p50') => (a ? fmt(a[key]) : 'n/a');
type LoadResultLike = { p50: number; p99: number };

function rows(results: readonly ScenarioResult[]): (string | number)[][] {
  return results.map((s) => {
    const { scenario, era, result: r, hopCpuMsPerRequest } = s;
    const direct = ratios(r, r);
    const floor = isCall(s) ? floorOf(results, era) : undefined;
    const vsFloor = floor ? ratios(r, floor) : undefined;
    return [
      scenario,
      era,
      fmt(r.direct.reqPerSec),
      fmt(r.gateway.reqPerSec),
      x(direct.throughput),
      vsFloor ? x(vsFloor.throughput) : '',
      r.rate !== undefined ? fmt(r.rate, 0) : 'n/a',
      `${pair(r.directFixedRate)} / ${pair(r.directFixedRate, 'p99')}`,
      `${pair(r.gatewayFixedRate)} / ${pair(r.gatewayFixedRate, 'p99')}`,
      x(direct.fixedRateP50),
      vsFloor ? x(vsFloor.fixedRateP50) : '',
      `${pair(r.directSequential)} / ${pair(r.gatewaySequential)}`,
      x(direct.sequentialP50),
      vsFloor ? x(vsFloor.sequentialP50) : '',
      fmt(hopCpuMsPerRequest),
    ];
  });
}

/**
 * The untimed warm-up of one era: every scenario side until it answered `warmupPassCalls` requests or
 * ran `warmupPassSeconds`, whichever comes first (in runs of at most 2 s, so both bounds hold closely).
 */
async function warmUp(era: Era, list: readonly Scenario[]): Promise<void> {
  if (settings.warmupPassSeconds <= 0 && settings.warmupPassCalls <= 0) return;
  process.stderr.write(`overhead: warm-up (${era}), each scenario side until ${settings.warmupPassCalls} requests or ${settings.warmupPassSeconds} s ...\n`);
  for (const scenario of list) {
    for (const side of [scenario.direct, scenario.gateway]) {
      let answered = 0;
      const started = performance.now();
      while (answered < settings.warmupPassCalls && (performance.now() - started) / 1000 < settings.warmupPassSeconds) {
        const left = settings.warmupPassSeconds - (performance.now() - started) / 1000;
        answered += (await runLoad(side.call, { connections: settings.connections, seconds: Math.max(0.2, Math.min(2, left)), check: side.check })).requests;
      }
    }
  }
}

/** Runs part 1 and writes bench/results/overhead.json. */
export async function runOverhead(): Promise<PartOutcome> {
  let backends: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  let proxy: ServiceProcess | undefined;
  const results: ScenarioResult[] = [];
  /** Timed answers that were not a correct 200 (reported, and a missed target). */
  const problems: string[] = [];
  let profile: ProfileSummary | undefined;
  let gatewayMemory;
  let compact = false;
  try {
    backends = await startServiceProcess({ reference: true }, { name: 'reference' });
    const { upstream, platform } = backends.urls;
    gateway = await startServiceProcess(
      { gateway: gatewaySpec(upstream!, `${platform}/v1/me`, settings.gatewayLogLevel) },
      { name: 'gateway-overhead', cpuProfile: settings.cpuProfile, exposeGc: true },
    );
    const gatewayUrl = gateway.urls.gateway!;
    await waitReady(gatewayUrl);
    proxy = await startServiceProcess({ bareProxy: upstream! }, { name: 'bare-proxy' });
    compact = await hasCompact(gatewayUrl);
    if (!compact) console.log('note: /mcp/compact with search_tools is not served by this gateway yet: search_tools and call_tool scenarios skipped');
    for (const era of ERAS) {
      const list = scenarios(era, upstream!, gatewayUrl, proxy.urls.bareProxy!, compact);
      await warmUp(era, list);
      for (const scenario of list) {
        const label = `${scenario.name} (${era})`;
        const direct = await verifySide(`${label}, direct`, scenario.direct);
        const viaGateway = await verifySide(`${label}, gateway`, scenario.gateway);
        if (scenario.kind === 'call' || scenario.kind === 'floor' || scenario.kind === 'call_tool') {
          const problem = sameStructured(direct, viaGateway);
          if (problem) throw new Error(`${label}: ${problem}`);
        }
        const side = (which: 'direct' | 'gateway'): Side => ({ label: `${label} ${which}`, call: scenario[which].call, check: scenario[which].check });
        process.stderr.write(`overhead: ${label} ...\n`);
        // The gateway (or the bare proxy) is idle during the direct rounds: its CPU over the scenario is its side's.
        const hop = scenario.kind === 'floor' ? proxy : gateway;
        const result = await abRounds(side('direct'), side('gateway'), settings, () => hop.cpuMs());
        const hopCpuMsPerRequest = (result.gatewayLoadedCpuMs ?? NaN) / Math.max(1, result.gateway.requests);
        for (const which of ['direct', 'gateway'] as const) {
          for (const r of [result[which], result[`${which}Sequential` as const], result[`${which}FixedRate` as const]]) {
            if (r && (r.errors || r.non2xx || r.mismatches || r.timeouts)) {
              problems.push(
                `${label}, ${which}: ${r.errors} socket errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx, ${r.mismatches} wrong bodies of ${r.requests} (${JSON.stringify(r.statusCodes)})${r.firstMismatch ? `; first wrong body: ${r.firstMismatch.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`,
              );
            }
          }
        }
        await verifySide(`${label}, direct (after)`, scenario.direct);
        await verifySide(`${label}, gateway (after)`, scenario.gateway);
        results.push({ scenario: scenario.name, era, kind: scenario.kind, note: scenario.note, result, hopCpuMsPerRequest });
      }
    }
    gatewayMemory = await gateway.memory(true);
  } finally {
    await stopAll([proxy, gateway, backends]);
  }
  if (gateway?.profilePath) profile = summariseProfile(gateway.profilePath);

  const checks = targets(results);
  const timed = results.reduce(
    (n, { result: r }) =>
      n +
      r.direct.requests +
      r.gateway.requests +
      [r.directSequential, r.gatewaySequential, r.directFixedRate, r.gatewayFixedRate].reduce((m, run) => m + (run?.requests ?? 0), 0),
    0,
  );
  checks.push({
    target: 'every timed answer a correct HTTP 200',
    measured: problems.length ? `${problems.length} run(s) with failures of ${timed.toLocaleString('en-US')} answers` : `all ${timed.toLocaleString('en-US')}`,
    pass: problems.length === 0,
    note: problems.length ? 'see the list under the table' : undefined,
  });
  const headers = [
    'scenario',
    'era',
    'direct req/s',
    'gateway req/s',
    'throughput vs direct',
    'vs floor',
    'fixed rate req/s',
    'direct p50/p99 ms',
    'gateway p50/p99 ms',
    'p50 vs direct',
    'vs floor',
    '1-conn p50 ms direct / gateway',
    '1-conn vs direct',
    'vs floor',
    'gateway CPU ms/req (loaded)',
  ];
  const markdown = [
    `### Overhead: gateway vs direct`,
    '',
    `Warm-up per era: every scenario side until ${settings.warmupPassCalls.toLocaleString('en-US')} requests or ${settings.warmupPassSeconds} s. ` +
      `Throughput: ${settings.connections} connections, ${settings.rounds} ABBA rounds x ${settings.roundSeconds} s per side. ` +
      `Latency: both sides offered ${fmt(settings.fixedRateFraction * 100, 0)}% of the direct side's throughput, paced evenly (open loop, at most ${settings.connections} connections), 2 x ${settings.fixedRateSeconds} s per side (ABBA); ` +
      `1-connection runs of ${settings.latencyRequests} requests per side. CPU per request: the gateway (or bare proxy) process over its loaded rounds only. ` +
      `"vs floor": the gateway's figure over the bare proxy's (same era, same call).`,
    '',
    table(headers, rows(results)),
    '',
    ...results.filter((r) => r.note && r.era === 'legacy').map((r) => `- ${r.scenario}: ${r.note}.`),
    compact ? '' : '- search_tools / call_tool: skipped (the gateway serves no /mcp/compact yet).',
    ...problems.map((p) => `- **Failed answers while timing**: ${p}`),
    gatewayMemory ? `- Gateway after the run: RSS ${mib(gatewayMemory.rss)} MiB, heap after GC ${mib(gatewayMemory.heapUsed)} MiB.` : '',
    '',
    targetTable(checks),
    ...(profile ? ['', profileMarkdown(profile)] : []),
  ].join('\n');
  const path = writeResult('overhead', {
    settings: {
      connections: settings.connections,
      rounds: settings.rounds,
      roundSeconds: settings.roundSeconds,
      warmupSeconds: settings.warmupSeconds,
      warmupPassSeconds: settings.warmupPassSeconds,
      warmupPassCalls: settings.warmupPassCalls,
      fixedRateFraction: settings.fixedRateFraction,
      fixedRateSeconds: settings.fixedRateSeconds,
      latencyRequests: settings.latencyRequests,
      gatewayLogLevel: settings.gatewayLogLevel,
    },
    processes: 'platform + reference upstream in one child process, gateway in another, the bare proxy (floor) in a third, autocannon in the bench process',
    compact,
    scenarios: results.map((r) => ({
      scenario: r.scenario,
      era: r.era,
      note: r.note,
      direct: withoutSamples(r.result.direct),
      gateway: withoutSamples(r.result.gateway),
      directSequential: withoutSamples(r.result.directSequential),
      gatewaySequential: withoutSamples(r.result.gatewaySequential),
      rate: r.result.rate,
      directFixedRate: withoutSamples(r.result.directFixedRate),
      gatewayFixedRate: withoutSamples(r.result.gatewayFixedRate),
      hopCpuMsPerRequest: r.hopCpuMsPerRequest,
      ratios: ratios(r.result, r.result),
      ratiosToFloor: isCall(r) && floorOf(results, r.era) ? ratios(r.result, floorOf(results, r.era)!) : undefined,
    })),
    gatewayMemory,
    problems,
    targets: checks,
    profile,
  });
  return { part: 'overhead', markdown, targets: checks, path };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runOverhead());
}
