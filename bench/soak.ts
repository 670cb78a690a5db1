/**
 * Part 4, soak (`npm run bench:soak`): BENCH_SOAK_SECONDS (300) of mixed traffic at BENCH_SOAK_RATE
 * requests per second through the gateway in front of the reference upstream: tools/list, tools/call,
 * and on /mcp/compact tools/list, search_tools and call_tool, each kind equally often, for the three
 * demo keys and both eras picked at random per request. Every answer is checked against the caller's expected set
 * (bench/expected-catalogues.ts): a tools/list must be exactly that key's tools, a search may only name
 * tools the key may use, a call must be a result without isError. Reported: status codes (zero 5xx),
 * wrong answers (zero), latency, and the gateway's RSS at start, middle and end. Bounds: RSS grows at
 * most BENCH_SOAK_RSS_BOUND_MIB over the second half (V8 sizes its heap to the load in the first
 * minutes, so start-to-end growth is reported but not judged), and the heap after a full GC grows at
 * most BENCH_SOAK_HEAP_BOUND_MIB from start to end (what a leak would break).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { DEMO_KEY_NAMES, DEMO_KEYS, EXPECTED, type DemoKey } from './expected-catalogues.ts';
import { percentile, SAMPLE_MS } from './load.ts';
import { fmt, mib, MiB, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { ERAS, parseAnswer, rpcCall, sameNames, searchMatches, sendCall, toolNames, type Era, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type MemorySample, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

type Result = Record<string, unknown>;

/** One kind of request of the mix, with the check its answer must pass (a reason when it fails). */
interface Template {
  kind: string;
  call: RpcCall;
  check: (result: Result) => string | undefined;
}

/** A read tool each key may call directly on /mcp, and one it reaches only through call_tool on /mcp/compact. */
const CALLS: Record<
  DemoKey,
  { direct: { name: string; arguments: Record<string, unknown> }; viaCallTool: { name: string; arguments: Record<string, unknown> } }
> = {
  full: { direct: { name: 'list_accounts', arguments: { limit: 1 } }, viaCallTool: { name: 'list_connections', arguments: { limit: 1 } } },
  data: { direct: { name: 'list_positions', arguments: { limit: 1 } }, viaCallTool: { name: 'list_data_files', arguments: { limit: 1 } } },
  identity: { direct: { name: 'get_profile', arguments: {} }, viaCallTool: { name: 'get_profile', arguments: {} } },
};
const QUERIES = ['list my broker accounts', 'which cash flows have not settled yet', 'place a limit order', 'entity_id', 'my profile'];

const okResult = (result: Result) => (result.isError ? `isError: ${JSON.stringify(result.content).slice(0, 160)}` : undefined);
const exactly = (expected: string[]) => (result: Result) =>
  sameNames(toolNames(result), expected) ? undefined : `tools/list gave ${toolNames(result).length} tools, expected ${expected.length}`;

function templates(gateway: string, compact: boolean): Template[] {
  const list: Template[] = [];
  for (const key of DEMO_KEY_NAMES) {
    const credential = DEMO_KEYS[key];
    const visible = new Set(EXPECTED[key].full);
    for (const era of ERAS as Era[]) {
      const full = `${gateway}/mcp`;
      list.push({ kind: 'tools/list full', call: rpcCall(era, full, credential, 'tools/list'), check: exactly(EXPECTED[key].full) });
      list.push({ kind: 'tools/call full', call: rpcCall(era, full, credential, 'tools/call', CALLS[key].direct), check: okResult });
      if (!compact) continue;
      const small = `${gateway}/mcp/compact`;
      list.push({ kind: 'tools/list compact', call: rpcCall(era, small, credential, 'tools/list'), check: exactly(EXPECTED[key].compact) });
      for (const query of QUERIES) {
        list.push({
          kind: 'search_tools',
          call: rpcCall(era, small, credential, 'tools/call', { name: 'search_tools', arguments: { query } }),
          check: (result) =>
            okResult(result) ??
            (searchMatches(result).every((n) => visible.has(n))
              ? undefined
              : `search named a tool outside the key's catalogue: ${searchMatches(result).join(',')}`),
        });
      }
      // The identity key's only read tool is not an anchor either way: call_tool reaches it.
      list.push({
        kind: 'call_tool',
        call: rpcCall(era, small, credential, 'tools/call', { name: 'call_tool', arguments: CALLS[key].viaCallTool }),
        check: okResult,
      });
    }
  }
  return list;
}

/** Runs part 4 and writes bench/results/soak.json. */
export async function runSoak(): Promise<PartOutcome> {
  let backends: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  const rss: { t: number; rss: number; heapUsed: number }[] = [];
  let start: MemorySample | undefined;
  let end: MemorySample | undefined;
  let compact = false;
  const wrong = new Map<string, { count: number; example: string }>();
  const byKind = new Map<string, number>();
  const samples: number[] = [];
  let result: autocannon.Result | undefined;
  let mix: Template[] = [];
  try {
    backends = await startServiceProcess({ reference: true }, { name: 'reference' });
    gateway = await startServiceProcess(
      { gateway: gatewaySpec(backends.urls.upstream!, `${backends.urls.platform}/v1/me`, settings.gatewayLogLevel) },
      { name: 'gateway-soak', exposeGc: true, cpuProfile: settings.cpuProfile },
    );
    const gatewayUrl = gateway.urls.gateway!;
    await waitReady(gatewayUrl);
    const probe = await sendCall(rpcCall('modern', `${gatewayUrl}/mcp/compact`, DEMO_KEYS.full, 'tools/list'));
    compact = probe.status === 200 && toolNames(probe.answer?.result ?? {}).includes('search_tools');
    mix = templates(gatewayUrl, compact);
    // Every template once, fully checked, before the clock starts.
    for (const t of mix) {
      const { status, answer, body } = await sendCall(t.call);
      const problem = status !== 200 ? `HTTP ${status}` : !answer?.result ? `no result: ${body.slice(0, 200)}` : t.check(answer.result);
      if (problem) throw new Error(`soak template ${t.kind} (${t.call.headers['x-cpz-key']}, ${t.call.headers['mcp-protocol-version']}): ${problem}`);
    }

    // Each kind of request equally often (then a key, era and query at random within the kind).
    const groups = [...new Set(mix.map((t) => t.kind))].map((kind) => mix.filter((t) => t.kind === kind));
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
    const load = (seconds: number, record: boolean) => {
      const instance = autocannon({
        url: mix[0]!.call.url,
        method: 'POST',
        connections: settings.connections,
        duration: seconds,
        overallRate: settings.soakRate,
        timeout: 30,
        sampleInt: SAMPLE_MS,
        requests: [
          {
            setupRequest: (request, context) => {
              const group = groups[Math.floor(random() * groups.length)]!;
              const t = group[Math.floor(random() * group.length)]!;
              context.t = t;
              return { ...request, path: new URL(t.call.url).pathname, headers: t.call.headers, body: t.call.body };
            },
            onResponse: (status, body, context) => {
              if (!record) return;
              const t = context.t as Template;
              byKind.set(t.kind, (byKind.get(t.kind) ?? 0) + 1);
              let problem: string | undefined;
              if (status === 200) {
                try {
                  const answer = parseAnswer(body);
                  problem = answer.result ? t.check(answer.result) : `JSON-RPC error ${answer.error?.code} ${answer.error?.message}`;
                } catch (error) {
                  problem = `unparsable answer: ${(error as Error).message}`;
                }
              }
              if (problem) {
                const entry = wrong.get(t.kind) ?? { count: 0, example: problem };
                entry.count++;
                wrong.set(t.kind, entry);
              }
            },
          },
        ],
      });
      if (record) instance.on('response', (_c, status, _b, ms) => status === 200 && samples.push(ms));
      return instance;
    };
    const warmSeconds = Math.min(5, Math.max(2, Math.round(settings.soakSeconds * 0.05)));
    await load(warmSeconds, false);
    start = await gateway.memory(true);
    const began = Date.now();
    rss.push({ t: 0, rss: start.rss, heapUsed: start.heapUsed });
    const every = Math.max(1, Math.min(5, settings.soakSeconds / 20)) * 1000;
    const sampler = setInterval(() => {
      void gateway!.memory(false).then(
        (m) => rss.push({ t: (Date.now() - began) / 1000, rss: m.rss, heapUsed: m.heapUsed }),
        () => undefined,
      );
    }, every);
    try {
      process.stderr.write(`soak: ${settings.soakSeconds} s at ${settings.soakRate} req/s over ${mix.length} request kinds\n`);
      result = await load(settings.soakSeconds, true);
    } finally {
      clearInterval(sampler);
    }
    const last = await gateway.memory(false);
    rss.push({ t: (Date.now() - began) / 1000, rss: last.rss, heapUsed: last.heapUsed });
    end = await gateway.memory(true);
  } finally {
    await stopAll([gateway, backends]);
  }

  samples.sort((a, b) => a - b);
  const middle = rss.reduce((best, s) => (Math.abs(s.t - settings.soakSeconds / 2) < Math.abs(best.t - settings.soakSeconds / 2) ? s : best), rss[0]!);
  const last = rss.at(-1)!;
  const growthMiB = (last.rss - rss[0]!.rss) / MiB;
  const secondHalfMiB = (last.rss - middle.rss) / MiB;
  const heapGrowthMiB = (end!.heapUsed - start!.heapUsed) / MiB;
  const maxRss = Math.max(...rss.map((s) => s.rss));
  const status = result!.statusCodeStats;
  const fivexx = Object.entries(status)
    .filter(([code]) => code.startsWith('5'))
    .reduce((s, [, { count }]) => s + count, 0);
  const wrongTotal = [...wrong.values()].reduce((s, w) => s + w.count, 0);
  const total = result!.requests.total;
  const checks: TargetCheck[] = [
    {
      target: 'zero 5xx',
      measured: `${fivexx} of ${total.toLocaleString('en-US')}`,
      pass: fivexx === 0 && result!.errors === 0 && result!.timeouts === 0,
      note: `status codes ${JSON.stringify(Object.fromEntries(Object.entries(status).map(([c, { count }]) => [c, count])))}; ${result!.errors} socket errors, ${result!.timeouts} timeouts`,
    },
    {
      target: 'zero wrong catalogues or answers',
      measured: `${wrongTotal}`,
      pass: wrongTotal === 0 && result!.non2xx === 0,
      note: wrongTotal ? JSON.stringify(Object.fromEntries(wrong)) : undefined,
    },
    {
      target: `RSS settles: growth middle to end <= ${settings.soakRssBoundMiB} MiB`,
      measured: `${fmt(secondHalfMiB, 1)} MiB (${mib(rss[0]!.rss)} -> ${mib(middle.rss)} -> ${mib(last.rss)} MiB, max ${mib(maxRss)})`,
      pass: secondHalfMiB <= settings.soakRssBoundMiB,
      note: `start to end ${fmt(growthMiB, 1)} MiB: V8 grows its heap to the allocation rate in the first minutes`,
    },
    {
      target: `no leak: heap after full GC, end - start <= ${settings.soakHeapBoundMiB} MiB`,
      measured: `${fmt(heapGrowthMiB, 1)} MiB (${mib(start!.heapUsed)} -> ${mib(end!.heapUsed)} MiB)`,
      pass: heapGrowthMiB <= settings.soakHeapBoundMiB,
    },
  ];
  const markdown = [
    `### Soak (${settings.soakSeconds} s at ${settings.soakRate} req/s offered, ${settings.connections} connections, ${mix.length} request kinds: 3 keys x 2 eras x {${[...new Set(mix.map((t) => t.kind))].join(', ')}})`,
    '',
    table(
      ['', 'start', 'middle', 'end', 'max'],
      [
        ['gateway RSS MiB', mib(rss[0]!.rss), mib(middle.rss), mib(last.rss), mib(maxRss)],
        ['gateway heap MiB', mib(rss[0]!.heapUsed), mib(middle.heapUsed), mib(last.heapUsed), mib(Math.max(...rss.map((s) => s.heapUsed)))],
        ['heap after GC MiB', mib(start!.heapUsed), '-', mib(end!.heapUsed), '-'],
      ],
    ),
    '',
    `- ${total.toLocaleString('en-US')} requests (${fmt(total / result!.duration)} req/s achieved), p50 ${fmt(percentile(samples, 50))} ms, p99 ${fmt(percentile(samples, 99))} ms; by kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}.`,
    compact ? '' : '- /mcp/compact is not served by this gateway yet: the mix has tools/list and tools/call on /mcp only.',
    '',
    targetTable(checks),
  ].join('\n');
  const path = writeResult('soak', {
    settings: {
      seconds: settings.soakSeconds,
      rate: settings.soakRate,
      connections: settings.connections,
      rssBoundMiB: settings.soakRssBoundMiB,
      heapBoundMiB: settings.soakHeapBoundMiB,
      gatewayLogLevel: settings.gatewayLogLevel,
    },
    processes: 'platform + reference upstream in one child process, gateway in another, autocannon in the bench process',
    compact,
    requestKinds: mix.length,
    requests: total,
    byKind: Object.fromEntries(byKind),
    statusCodes: Object.fromEntries(Object.entries(status).map(([c, { count }]) => [c, count])),
    errors: result!.errors,
    timeouts: result!.timeouts,
    wrong: Object.fromEntries(wrong),
    latency: { p50: percentile(samples, 50), p99: percentile(samples, 99) },
    memory: { start, end, samples: rss },
    targets: checks,
  });
  return { part: 'soak', markdown, targets: checks, path };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runSoak());
}
