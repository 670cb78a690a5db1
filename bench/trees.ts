/**
 * Two versions of the gateway, A/B in one run (`npm run bench:trees -- <before-rev> [<after-rev>]`):
 * the gateway of an older commit (checked out once into a detached worktree under the OS temp folder,
 * sharing this checkout's node_modules) and this checkout's (or `<after-rev>`'s), both in front of the
 * same reference upstream, each warmed with the same calls (so its scope cache is warm), then measured in
 * alternating ABBA rounds (bench/load.ts abRounds): throughput at `BENCH_CONNECTIONS`, p50/p99 at a
 * fixed offered rate, 1-connection p50, and each gateway process's CPU per call in its loaded rounds.
 *
 * Scenarios: tools/call list_accounts {limit: 1} on /mcp in both eras, and call_tool list_connections on
 * /mcp/compact (2026-07-28). Every answer is checked; both versions must return the same structuredContent.
 * Writes bench/results/trees.json. Ratios are after / before: throughput above 1 and latency or CPU below 1
 * are improvements. `BENCH_TREES_AFTER_FLAGS="--flag ..."` starts the after side under extra Node/V8 flags
 * (`npm run bench:trees -- HEAD` with it: one tree against itself under other flags).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_KEYS } from './expected-catalogues.ts';
import { abRounds, runLoad, withoutSamples, type AbResult, type Side } from './load.ts';
import { fmt, table, writeResult } from './results.ts';
import { rpcCall, verifiedResult, type Era, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** A checkout of `rev` (a detached worktree, made once per commit), with this checkout's node_modules. */
function checkout(rev: string): { dir: string; sha: string } {
  const sha = git('rev-parse', '--verify', `${rev}^{commit}`);
  const dir = resolve(tmpdir(), 'mcp-gateway-trees', sha.slice(0, 12));
  if (!existsSync(resolve(dir, 'bench/service-process.ts'))) {
    mkdirSync(dirname(dir), { recursive: true });
    git('worktree', 'add', '--force', '--detach', dir, sha);
  }
  if (!existsSync(resolve(dir, 'node_modules'))) symlinkSync(resolve(root, 'node_modules'), resolve(dir, 'node_modules'));
  return { dir, sha };
}

interface Scenario {
  name: string;
  call: (gateway: string) => RpcCall;
}

const noError = (body: string) => body.includes('"result"') && !body.includes('"isError":true');

function scenarios(): Scenario[] {
  const full = DEMO_KEYS.full;
  const call = (era: Era): Scenario => ({
    name: `tools/call list_accounts {limit:1} /mcp (${era})`,
    call: (g) => rpcCall(era, `${g}/mcp`, full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } }),
  });
  return [
    call('legacy'),
    call('modern'),
    {
      name: 'call_tool list_connections {limit:1} /mcp/compact (modern)',
      call: (g) =>
        rpcCall('modern', `${g}/mcp/compact`, full, 'tools/call', { name: 'call_tool', arguments: { name: 'list_connections', arguments: { limit: 1 } } }),
    },
  ];
}

function oneRecord(result: Record<string, unknown>): string | undefined {
  if (result.isError) return `isError: ${JSON.stringify(result.content).slice(0, 200)}`;
  const data = (result.structuredContent as { data?: unknown[] } | undefined)?.data;
  return Array.isArray(data) && data.length === 1 ? undefined : 'expected structuredContent.data with one record';
}

/** Untimed: each side until `warmupPassCalls` answers or `warmupPassSeconds`, whichever comes first. */
async function warm(call: RpcCall): Promise<void> {
  let answered = 0;
  const started = performance.now();
  while (answered < settings.warmupPassCalls && (performance.now() - started) / 1000 < settings.warmupPassSeconds)
    answered += (await runLoad(call, { connections: settings.connections, seconds: 2, check: noError })).requests;
}

async function main(): Promise<void> {
  const [beforeRev, afterRev] = process.argv.slice(2);
  if (!beforeRev) throw new Error('usage: npm run bench:trees -- <before-rev> [<after-rev>]');
  const before = checkout(beforeRev);
  const after = afterRev ? checkout(afterRev) : { dir: root, sha: git('rev-parse', 'HEAD') };
  // BENCH_TREES_AFTER_FLAGS: Node/V8 flags for the after side only (one tree against itself under other flags).
  const afterFlags = (process.env.BENCH_TREES_AFTER_FLAGS ?? '').split(' ').filter(Boolean);
  const afterLabel = `${after.sha.slice(0, 12)}${!afterRev && git('status', '--porcelain', '--untracked-files=no') ? ' + working tree' : ''}${afterFlags.length ? ` (${afterFlags.join(' ')})` : ''}`;
  const processes: (ServiceProcess | undefined)[] = [];
  const results: { scenario: string; result: AbResult; cpuMsPerCall: { before: number; after: number } }[] = [];
  try {
    const backends = await startServiceProcess({ reference: true }, { name: 'reference' });
    processes.push(backends);
    const { upstream, platform } = backends.urls;
    const spec = { gateway: gatewaySpec(upstream!, `${platform}/v1/me`, settings.gatewayLogLevel) };
    const a = await startServiceProcess(spec, { name: 'gateway-before', root: before.dir });
    processes.push(a);
    const b = await startServiceProcess(spec, { name: 'gateway-after', root: after.dir, nodeFlags: afterFlags });
    processes.push(b);
    await waitReady(a.urls.gateway!);
    await waitReady(b.urls.gateway!);
    for (const scenario of scenarios()) {
      const sides = { before: scenario.call(a.urls.gateway!), after: scenario.call(b.urls.gateway!) };
      const first = await verifiedResult(`${scenario.name}, before`, sides.before, oneRecord);
      const second = await verifiedResult(`${scenario.name}, after`, sides.after, oneRecord);
      if (JSON.stringify(first.structuredContent) !== JSON.stringify(second.structuredContent))
        throw new Error(`${scenario.name}: the two versions answer differently`);
      process.stderr.write(`trees: ${scenario.name}: warm-up ...\n`);
      await warm(sides.before);
      await warm(sides.after);
      const side = (label: string, call: RpcCall): Side => ({ label, call, check: noError });
      process.stderr.write(`trees: ${scenario.name}: ${settings.rounds} ABBA rounds of ${settings.roundSeconds} s ...\n`);
      const result = await abRounds(
        side('before', sides.before),
        side('after', sides.after),
        {
          rounds: settings.rounds,
          roundSeconds: settings.roundSeconds,
          warmupSeconds: settings.warmupSeconds,
          connections: settings.connections,
          latencyRequests: settings.latencyRequests,
          fixedRateFraction: settings.fixedRateFraction,
          fixedRateSeconds: settings.fixedRateSeconds,
        },
        () => b.cpuMs(),
        () => a.cpuMs(),
      );
      results.push({
        scenario: scenario.name,
        result,
        cpuMsPerCall: {
          before: (result.directLoadedCpuMs ?? NaN) / result.direct.requests,
          after: (result.gatewayLoadedCpuMs ?? NaN) / result.gateway.requests,
        },
      });
    }
  } finally {
    await stopAll(processes.reverse());
  }
  const ratio = (x: number | undefined, y: number | undefined) => (x !== undefined && y !== undefined ? `${fmt(x / y)}x` : 'n/a');
  console.log(
    `\nbefore ${before.sha.slice(0, 12)}, after ${afterLabel}; ${settings.connections} connections, ${settings.rounds} rounds x ${settings.roundSeconds} s\n`,
  );
  console.log(
    table(
      [
        'scenario',
        'req/s before',
        'req/s after',
        'throughput',
        'fixed-rate p50 before / after, ms',
        'p50',
        '1-conn p50 before / after, ms',
        '1-conn p50',
        'CPU ms/call before / after',
      ],
      results.map(({ scenario, result: r, cpuMsPerCall }) => [
        scenario,
        fmt(r.direct.reqPerSec),
        fmt(r.gateway.reqPerSec),
        ratio(r.gateway.reqPerSec, r.direct.reqPerSec),
        `${fmt(r.directFixedRate?.p50)} / ${fmt(r.gatewayFixedRate?.p50)}`,
        ratio(r.gatewayFixedRate?.p50, r.directFixedRate?.p50),
        `${fmt(r.directSequential?.p50)} / ${fmt(r.gatewaySequential?.p50)}`,
        ratio(r.gatewaySequential?.p50, r.directSequential?.p50),
        `${fmt(cpuMsPerCall.before, 3)} / ${fmt(cpuMsPerCall.after, 3)}`,
      ]),
    ),
  );
  const path = writeResult('trees', {
    before: before.sha,
    after: afterLabel,
    settings,
    scenarios: results.map(({ scenario, result: r, cpuMsPerCall }) => ({
      scenario,
      cpuMsPerCall,
      before: { loaded: withoutSamples(r.direct), fixedRate: withoutSamples(r.directFixedRate), sequential: withoutSamples(r.directSequential) },
      after: { loaded: withoutSamples(r.gateway), fixedRate: withoutSamples(r.gatewayFixedRate), sequential: withoutSamples(r.gatewaySequential) },
      rate: r.rate,
    })),
  });
  console.log(`\nwritten: ${path}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exitCode = 1;
});
