/**
 * Part 1, overhead (`npm run bench:overhead`): what the gateway adds to one MCP request, in both eras.
 *
 * tools/call (list_accounts {limit:1} on /mcp) and call_tool (list_connections {limit:1} through
 * /mcp/compact) are judged against a bare byte relay measured beside them (bench/bare-proxy.ts: one
 * extra process that only moves bytes, the least any extra hop costs on this machine): direct, relay
 * and gateway interleaved round by round in one run (load.ts `floorRounds`): saturation at
 * `connections` closed loops with each process's CPU per call (process.cpuUsage of the relay, the
 * gateway and the upstream over their side's windows), then a fixed, evenly paced rate at
 * `fixedRateFraction` of the slowest side's saturation. Ratios are medians of per-round ratios; the
 * targets (issue 34): gateway vs relay fixed-rate p50 <= 1.1x, saturation throughput >= 0.9x, CPU per
 * call <= 2x, no errors. The yardstick outside the project (overhead-floor.sh, shared by the engineers)
 * measures the same with the services started as the README starts them.
 *
 * tools/list (full key, data key) and search_tools stay direct-vs-gateway ABBA rounds (load.ts
 * `abRounds`): a warm listing should beat the upstream's.
 *
 * Every side is warmed untimed first (until `warmupPassCalls` requests or `warmupPassSeconds`), and
 * every request is sent once and fully checked before and after it is timed (HTTP 200, the right tool
 * set or result, the same structuredContent on every side); during the rounds every answer passes a
 * cheap body check. Processes: the platform + reference upstream in one child, the gateway in another,
 * the relay in a third, the load generators (autocannon; an undici Pool for the paced runs) here.
 */
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { profileMarkdown, summariseProfile, type ProfileSummary } from './cpu-profile.ts';
import { DEMO_KEYS, EXPECTED, ALL_TOOL_NAMES } from './expected-catalogues.ts';
import {
  abRounds,
  FLOOR_SIDES,
  floorRounds,
  median,
  runLoad,
  withoutSamples,
  type AbResult,
  type FloorResult,
  type FloorSide,
  type LoadResult,
  type Side,
} from './load.ts';
import { fmt, mib, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { ERAS, rpcCall, sameNames, searchMatches, sendCall, toolNames, verifiedResult, type Era, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type MemorySample, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

type Result = Record<string, unknown>;

/** One side of a scenario: the request, its full check (run before and after timing) and the cheap per-answer check. */
interface SideSpec {
  call: RpcCall;
  verify: (result: Result) => string | undefined;
  check: (body: string) => boolean;
}

/** tools/list and search_tools: the gateway against the upstream directly (ABBA rounds). */
interface AbScenario {
  name: string;
  kind: 'list' | 'search';
  direct: SideSpec;
  gateway: SideSpec;
  note?: string;
}

/** tools/call and call_tool: direct, the bare relay and the gateway interleaved (the floor method). */
interface FloorScenario {
  name: string;
  kind: 'call' | 'call_tool';
  sides: Record<FloorSide, SideSpec>;
  note?: string;
}

type Scenario = AbScenario | FloorScenario;
const isFloor = (s: Scenario): s is FloorScenario => s.kind === 'call' || s.kind === 'call_tool';

const CALL_TARGET = { name: 'list_accounts', arguments: { limit: 1 } };
const CALL_TOOL_TARGET = { name: 'list_connections', arguments: { limit: 1 } };
const SEARCH_QUERY = 'list my broker accounts';

/** The issue-34 targets, gateway vs the bare relay measured in the same run. */
export const FLOOR_TARGETS = { fixedRateP50: 1.1, throughput: 0.9, cpu: 2 } as const;

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

function scenarios(era: Era, upstream: string, gateway: string, relay: string, compact: boolean): Scenario[] {
  const full = DEMO_KEYS.full;
  const data = DEMO_KEYS.data;
  const call = (url: string, params: Record<string, unknown>): SideSpec => ({
    call: rpcCall(era, url, full, 'tools/call', params),
    verify: oneRecord,
    check: noError,
  });
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
      name: `tools/call ${CALL_TARGET.name} {limit:1}`,
      kind: 'call',
      sides: { direct: call(upstream, CALL_TARGET), relay: call(relay, CALL_TARGET), gateway: call(`${gateway}/mcp`, CALL_TARGET) },
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
      note: `direct and relay sides: tools/call ${CALL_TOOL_TARGET.name} at the upstream`,
      sides: {
        direct: call(upstream, CALL_TOOL_TARGET),
        relay: call(relay, CALL_TOOL_TARGET),
        gateway: call(`${gateway}/mcp/compact`, { name: 'call_tool', arguments: CALL_TOOL_TARGET }),
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

/** Calls whose results must be identical on every side (the gateway relays them unchanged). */
function sameStructured(results: readonly Result[]): string | undefined {
  const first = JSON.stringify(results[0]?.structuredContent);
  return results.every((r) => JSON.stringify(r.structuredContent) === first) ? undefined : 'structuredContent differs between the sides';
}

interface AbScenarioResult {
  scenario: string;
  era: Era;
  kind: AbScenario['kind'];
  note?: string;
  result: AbResult;
  /** CPU the gateway process used per request of its loaded rounds, ms. */
  gatewayCpuMsPerRequest: number;
}

interface FloorScenarioResult {
  scenario: string;
  era: Era;
  kind: FloorScenario['kind'];
  note?: string;
  result: FloorResult;
}

/** Ratios of side `a` over side `b`: medians of the per-round ratios (and pooled), CPU per call. */
interface FloorRatios {
  fixedRateP50: number;
  fixedRateP50Pooled: number;
  throughput: number;
  throughputPooled: number;
  fixedRateP99: number;
  cpu?: number;
}

function floorRatios(r: FloorResult, a: FloorSide, b: FloorSide): FloorRatios {
  const A = r.sides[a];
  const B = r.sides[b];
  const perRound = (f: (x: { reqPerSec: number; fixedRateP50: number }, y: { reqPerSec: number; fixedRateP50: number }) => number) =>
    median(A.rounds.map((x, i) => f(x, B.rounds[i]!)));
  return {
    fixedRateP50: perRound((x, y) => x.fixedRateP50 / y.fixedRateP50),
    fixedRateP50Pooled: A.fixedRate.p50 / B.fixedRate.p50,
    throughput: perRound((x, y) => x.reqPerSec / y.reqPerSec),
    throughputPooled: A.saturation.reqPerSec / B.saturation.reqPerSec,
    fixedRateP99: A.fixedRate.p99 / B.fixedRate.p99,
    cpu: A.ownCpuMsPerRequest !== undefined && B.ownCpuMsPerRequest !== undefined ? A.ownCpuMsPerRequest / B.ownCpuMsPerRequest : undefined,
  };
}

const x = (value: number | undefined) => (value === undefined ? 'n/a' : `${fmt(value)}x`);
const failed = (r: LoadResult | undefined) => (r ? r.errors + r.non2xx + r.mismatches + r.timeouts : 0);

/** The issue-34 targets for every tools/call and call_tool scenario; tools/list: a warm listing beats the upstream. */
function targets(floors: readonly FloorScenarioResult[], abs: readonly AbScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const f of floors) {
    const what = `${f.kind === 'call' ? 'tools/call' : 'call_tool'} (${f.era})`;
    const r = floorRatios(f.result, 'gateway', 'relay');
    const g = f.result.sides.gateway;
    const relay = f.result.sides.relay;
    const check = (target: string, value: number | undefined, pass: (v: number) => boolean, measured: string) =>
      checks.push(value === undefined ? { target, measured: 'not measured', pass: false } : { target, measured, pass: pass(value) });
    check(
      `${what} fixed-rate p50 <= ${FLOOR_TARGETS.fixedRateP50}x the relay's`,
      r.fixedRateP50,
      (v) => v <= FLOOR_TARGETS.fixedRateP50,
      `${x(r.fixedRateP50)} (${fmt(g.fixedRate.p50)} vs ${fmt(relay.fixedRate.p50)} ms)`,
    );
    check(
      `${what} saturation throughput >= ${FLOOR_TARGETS.throughput}x the relay's`,
      r.throughput,
      (v) => v >= FLOOR_TARGETS.throughput,
      `${x(r.throughput)} (${fmt(g.saturation.reqPerSec)} vs ${fmt(relay.saturation.reqPerSec)} req/s)`,
    );
    check(
      `${what} CPU per call <= ${FLOOR_TARGETS.cpu}x the relay's`,
      r.cpu,
      (v) => v <= FLOOR_TARGETS.cpu,
      `${x(r.cpu)} (${fmt(g.ownCpuMsPerRequest, 3)} vs ${fmt(relay.ownCpuMsPerRequest, 3)} ms)`,
    );
  }
  for (const r of abs.filter((s) => s.kind === 'list')) {
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

const pair = (a: LoadResult | undefined) => (a ? `${fmt(a.p50)} / ${fmt(a.p99)}` : 'n/a');

/** One row per side of every floor scenario: the shared yardstick's table. */
function floorRows(floors: readonly FloorScenarioResult[]): (string | number)[][] {
  return floors.flatMap(({ scenario, era, result }) =>
    FLOOR_SIDES.map((side) => {
      const s = result.sides[side];
      return [
        scenario,
        era,
        side,
        fmt(s.saturation.reqPerSec),
        pair(s.saturation),
        pair(s.fixedRate),
        s.ownCpuMsPerRequest === undefined ? '-' : fmt(s.ownCpuMsPerRequest, 3),
        fmt(s.upstreamCpuMsPerRequest, 3),
        failed(s.saturation) + failed(s.fixedRate),
      ];
    }),
  );
}

/** Per floor scenario: gateway vs relay, relay vs direct (the floor itself), gateway vs direct. */
function ratioRows(floors: readonly FloorScenarioResult[]): (string | number)[][] {
  return floors.flatMap(({ scenario, era, result }) =>
    (
      [
        ['gateway', 'relay'],
        ['relay', 'direct'],
        ['gateway', 'direct'],
      ] as const
    ).map(([a, b]) => {
      const r = floorRatios(result, a, b);
      return [
        scenario,
        era,
        `${a} / ${b}`,
        `${x(r.fixedRateP50)} (${x(r.fixedRateP50Pooled)})`,
        x(r.fixedRateP99),
        `${x(r.throughput)} (${x(r.throughputPooled)})`,
        x(r.cpu),
      ];
    }),
  );
}

function abRows(results: readonly AbScenarioResult[]): (string | number)[][] {
  return results.map(({ scenario, era, result: r, gatewayCpuMsPerRequest }) => [
    scenario,
    era,
    fmt(r.direct.reqPerSec),
    fmt(r.gateway.reqPerSec),
    x(r.gateway.reqPerSec / r.direct.reqPerSec),
    r.rate !== undefined ? fmt(r.rate, 0) : 'n/a',
    pair(r.directFixedRate),
    pair(r.gatewayFixedRate),
    `${r.directSequential ? fmt(r.directSequential.p50) : 'n/a'} / ${r.gatewaySequential ? fmt(r.gatewaySequential.p50) : 'n/a'}`,
    fmt(gatewayCpuMsPerRequest, 3),
  ]);
}

/**
 * The untimed warm-up of one era: every side until it answered `warmupPassCalls` requests or ran
 * `warmupPassSeconds`, whichever comes first (in runs of at most 2 s, so both bounds hold closely).
 */
async function warmUp(era: Era, sides: readonly SideSpec[]): Promise<void> {
  if (settings.warmupPassSeconds <= 0 && settings.warmupPassCalls <= 0) return;
  process.stderr.write(`overhead: warm-up (${era}), each side until ${settings.warmupPassCalls} requests or ${settings.warmupPassSeconds} s ...\n`);
  for (const side of sides) {
    let answered = 0;
    const started = performance.now();
    while (answered < settings.warmupPassCalls && (performance.now() - started) / 1000 < settings.warmupPassSeconds) {
      const left = settings.warmupPassSeconds - (performance.now() - started) / 1000;
      answered += (await runLoad(side.call, { connections: settings.connections, seconds: Math.max(0.2, Math.min(2, left)), check: side.check })).requests;
    }
  }
}

const sidesOf = (s: Scenario): SideSpec[] => (isFloor(s) ? FLOOR_SIDES.map((k) => s.sides[k]) : [s.direct, s.gateway]);

/** Runs part 1 and writes bench/results/overhead.json. */
export async function runOverhead(): Promise<PartOutcome> {
  let backends: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  let relay: ServiceProcess | undefined;
  const floors: FloorScenarioResult[] = [];
  const abs: AbScenarioResult[] = [];
  /** Timed answers that were not a correct 200 (reported, and a missed target). */
  const problems: string[] = [];
  let profile: ProfileSummary | undefined;
  let gatewayMemory: MemorySample | undefined;
  let compact = false;
  const loadBefore = loadAverage();
  try {
    backends = await startServiceProcess({ reference: true }, { name: 'reference' });
    const { upstream, platform } = backends.urls;
    gateway = await startServiceProcess(
      { gateway: gatewaySpec(upstream!, `${platform}/v1/me`, settings.gatewayLogLevel) },
      { name: 'gateway-overhead', cpuProfile: settings.cpuProfile, exposeGc: true },
    );
    const gatewayUrl = gateway.urls.gateway!;
    await waitReady(gatewayUrl);
    relay = await startServiceProcess({ bareProxy: upstream! }, { name: 'bare-proxy' });
    compact = await hasCompact(gatewayUrl);
    if (!compact) console.log('note: /mcp/compact with search_tools is not served by this gateway yet: search_tools and call_tool scenarios skipped');
    const cpu = { relay: relay.cpuMs, gateway: gateway.cpuMs, upstream: backends.cpuMs };
    const report = (label: string, which: string, runs: (LoadResult | undefined)[]) => {
      for (const r of runs)
        if (r && failed(r))
          problems.push(
            `${label}, ${which}: ${r.errors} socket errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx, ${r.mismatches} wrong bodies of ${r.requests} (${JSON.stringify(r.statusCodes)})${r.firstMismatch ? `; first wrong body: ${r.firstMismatch.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`,
          );
    };
    for (const era of ERAS) {
      const list = scenarios(era, upstream!, gatewayUrl, relay.urls.bareProxy!, compact);
      await warmUp(era, list.flatMap(sidesOf));
      for (const scenario of list) {
        const label = `${scenario.name} (${era})`;
        const verifyAll = async (when: string) => {
          const answers: Result[] = [];
          if (isFloor(scenario))
            for (const side of FLOOR_SIDES)
              answers.push(await verifiedResult(`${label}, ${side}${when}`, scenario.sides[side].call, scenario.sides[side].verify));
          else
            for (const [side, spec] of [['direct', scenario.direct] as const, ['gateway', scenario.gateway] as const])
              answers.push(await verifiedResult(`${label}, ${side}${when}`, spec.call, spec.verify));
          return answers;
        };
        const answers = await verifyAll('');
        process.stderr.write(`overhead: ${label} ...\n`);
        if (isFloor(scenario)) {
          const problem = sameStructured(answers);
          if (problem) throw new Error(`${label}: ${problem}`);
          const sides = Object.fromEntries(
            FLOOR_SIDES.map((k) => [k, { label: `${label} ${k}`, call: scenario.sides[k].call, check: scenario.sides[k].check }]),
          ) as Record<FloorSide, Side>;
          const result = await floorRounds(
            sides,
            {
              rounds: settings.floorRounds,
              roundSeconds: settings.floorRoundSeconds,
              fixedRateSeconds: settings.floorRoundSeconds,
              fixedRateFraction: settings.fixedRateFraction,
              connections: settings.connections,
            },
            cpu,
          );
          for (const k of FLOOR_SIDES) report(label, k, [result.sides[k].saturation, result.sides[k].fixedRate]);
          floors.push({ scenario: scenario.name, era, kind: scenario.kind, note: scenario.note, result });
        } else {
          const side = (which: 'direct' | 'gateway'): Side => ({ label: `${label} ${which}`, call: scenario[which].call, check: scenario[which].check });
          // The gateway is idle during the direct rounds: its CPU over the scenario is its side's.
          const result = await abRounds(side('direct'), side('gateway'), settings, gateway.cpuMs);
          for (const which of ['direct', 'gateway'] as const)
            report(label, which, [result[which], result[`${which}Sequential` as const], result[`${which}FixedRate` as const]]);
          abs.push({
            scenario: scenario.name,
            era,
            kind: scenario.kind,
            note: scenario.note,
            result,
            gatewayCpuMsPerRequest: (result.gatewayLoadedCpuMs ?? NaN) / Math.max(1, result.gateway.requests),
          });
        }
        await verifyAll(' (after)');
      }
    }
    gatewayMemory = await gateway.memory(true);
  } finally {
    await stopAll([relay, gateway, backends]);
  }
  if (gateway?.profilePath) profile = summariseProfile(gateway.profilePath);
  const loadAfter = loadAverage();

  const checks = targets(floors, abs);
  const timed =
    floors.reduce((n, f) => n + FLOOR_SIDES.reduce((m, k) => m + f.result.sides[k].saturation.requests + f.result.sides[k].fixedRate.requests, 0), 0) +
    abs.reduce(
      (n, { result: r }) =>
        n +
        [r.direct, r.gateway, r.directSequential, r.gatewaySequential, r.directFixedRate, r.gatewayFixedRate].reduce((m, run) => m + (run?.requests ?? 0), 0),
      0,
    );
  checks.push({
    target: 'every timed answer a correct HTTP 200',
    measured: problems.length ? `${problems.length} run(s) with failures of ${timed.toLocaleString('en-US')} answers` : `all ${timed.toLocaleString('en-US')}`,
    pass: problems.length === 0,
    note: problems.length ? 'see the list under the table' : undefined,
  });
  const headline = floors.map((f) => {
    const r = floorRatios(f.result, 'gateway', 'relay');
    return `- ${f.kind === 'call' ? 'tools/call' : 'call_tool'} ${f.era}: gateway/relay fixed-rate p50 ${x(r.fixedRateP50)}, throughput ${x(r.throughput)}, CPU ${x(r.cpu)} (${fmt(f.result.sides.gateway.ownCpuMsPerRequest, 3)} vs ${fmt(f.result.sides.relay.ownCpuMsPerRequest, 3)} ms/call) at ${fmt(f.result.rate, 0)} req/s offered`;
  });
  const markdown = [
    `### Overhead: gateway vs a bare relay vs direct`,
    '',
    `Load average ${loadBefore} -> ${loadAfter} on ${cpuCount()} cores. Warm-up per era: every side until ${settings.warmupPassCalls.toLocaleString('en-US')} requests or ${settings.warmupPassSeconds} s. ` +
      `tools/call and call_tool: direct, relay and gateway interleaved, ${settings.floorRounds} rounds of ${settings.floorRoundSeconds} s at ${settings.connections} connections (saturation) ` +
      `then ${settings.floorRounds} rounds of ${settings.floorRoundSeconds} s at ${fmt(settings.fixedRateFraction * 100, 0)}% of the slowest side's saturation, paced evenly; ` +
      `ratios are medians of per-round ratios (pooled in brackets); CPU per call of each process over its side's saturation windows.`,
    '',
    ...headline,
    '',
    table(
      ['scenario', 'era', 'side', 'saturation req/s', 'sat. p50 / p99 ms', 'fixed-rate p50 / p99 ms', 'own CPU ms/call', 'upstream CPU ms/call', 'errors'],
      floorRows(floors),
    ),
    '',
    table(['scenario', 'era', 'ratio', 'fixed-rate p50', 'fixed-rate p99', 'throughput', 'CPU per call'], ratioRows(floors)),
    '',
    `tools/list and search_tools: direct vs gateway, ${settings.rounds} ABBA rounds x ${settings.roundSeconds} s; fixed rate ${fmt(settings.fixedRateFraction * 100, 0)}% of direct; 1-connection runs of ${settings.latencyRequests} requests.`,
    '',
    table(
      [
        'scenario',
        'era',
        'direct req/s',
        'gateway req/s',
        'throughput vs direct',
        'fixed rate req/s',
        'direct p50/p99 ms',
        'gateway p50/p99 ms',
        '1-conn p50 ms direct / gateway',
        'gateway CPU ms/req',
      ],
      abRows(abs),
    ),
    '',
    ...[...floors, ...abs].filter((r) => r.note && r.era === 'legacy').map((r) => `- ${r.scenario}: ${r.note}.`),
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
      floorRounds: settings.floorRounds,
      floorRoundSeconds: settings.floorRoundSeconds,
      warmupPassSeconds: settings.warmupPassSeconds,
      warmupPassCalls: settings.warmupPassCalls,
      fixedRateFraction: settings.fixedRateFraction,
      fixedRateSeconds: settings.fixedRateSeconds,
      latencyRequests: settings.latencyRequests,
      gatewayLogLevel: settings.gatewayLogLevel,
    },
    load: { before: loadBefore, after: loadAfter },
    processes: 'platform + reference upstream in one child process, gateway in another, the bare relay in a third, the load generators in the bench process',
    compact,
    floor: floors.map((f) => ({
      scenario: f.scenario,
      era: f.era,
      rate: f.result.rate,
      sides: Object.fromEntries(
        FLOOR_SIDES.map((k) => {
          const s = f.result.sides[k];
          return [k, { ...s, saturation: withoutSamples(s.saturation), fixedRate: withoutSamples(s.fixedRate) }];
        }),
      ),
      gatewayVsRelay: floorRatios(f.result, 'gateway', 'relay'),
      relayVsDirect: floorRatios(f.result, 'relay', 'direct'),
      gatewayVsDirect: floorRatios(f.result, 'gateway', 'direct'),
    })),
    scenarios: abs.map((r) => ({
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
      gatewayCpuMsPerRequest: r.gatewayCpuMsPerRequest,
    })),
    gatewayMemory,
    problems,
    targets: checks,
    profile,
  });
  return { part: 'overhead', markdown, targets: checks, path };
}

function loadAverage(): string {
  return loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
}

function cpuCount(): number {
  return availableParallelism();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runOverhead());
}
