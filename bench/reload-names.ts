/**
 * Serving across a live reload that adds a second upstream, then removes it (issue 30, stable names):
 * a gateway process (gateway/main.ts, SIGHUP) in front of the reference CPZAI upstream, a second
 * reference upstream added and removed by rewriting its configuration; a steady 10 calls/s of
 * `list_accounts` by the names callers were given (directly on /mcp and through call_tool on
 * /mcp/compact, the data key) for the whole run.
 *
 * Reports, per phase (before, across each reload, after): calls, errors by name, and latency (p50,
 * p99, max) of the calls started within 1 s before to 3 s after the signal, next to those started
 * before any reload (the machine's own noise, in the same run). The pause itself: the gateway's
 * event-loop stalls over 10 ms (bench/stall-probe.ts, loaded into its process), their longest wall time
 * and longest CPU time, over each reload (signal to 2 s after its log line) and over a window of the
 * same length with no reload right after. On a shared machine the wall time is mostly waiting for a
 * core; the CPU time is what the stall costs on an idle one.
 *
 *   npx tsx bench/reload-names.ts                       this tree
 *   BENCH_GATEWAY_ROOT=/path/to/other/tree npx tsx bench/reload-names.ts   another tree's gateway (e.g. the commit before)
 *   BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npx tsx bench/reload-names.ts   Node options for the gateway (a CPU profile of what runs in the stalls)
 *
 * Writes bench/results/reload-names.json (this tree only).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { DEFAULT_CONFIG_PATH } from '../config/load.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';
import { freePort } from '../tests/helpers/free-port.ts';
import { pacedCalls, type PacedCall } from '../tests/helpers/paced-calls.ts';
import { percentile } from './load.ts';

const here = resolve(new URL('..', import.meta.url).pathname);
const root = resolve(process.env.BENCH_GATEWAY_ROOT ?? here);
const DATA_KEY = { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' };
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 5000);
/** Stalls shorter than this are not recorded (the probe's timer runs every 5 ms). */
const STALL_MIN_MS = 10;

async function main(): Promise<void> {
  const platform = await startPlatform({ port: 0 });
  const first = await startUpstreamServer({ port: 0, platformUrl: platform.url });
  const second = await startUpstreamServer({ port: 0, platformUrl: platform.url });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'reload-names-'));
  const configPath = join(dir, 'gateway.yaml');
  const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as {
    listen: { port: number };
    upstreams: Record<string, unknown>[];
    scopes: { endpoint?: string };
    log?: { level: string };
  };
  base.listen.port = port;
  base.upstreams[0]!.url = first.url;
  base.scopes.endpoint = `${platform.url}/v1/me`;
  base.log = { level: 'warn' };
  const write = (both: boolean) => {
    const config = structuredClone(base);
    if (both) config.upstreams.push({ ...structuredClone(base.upstreams[0]!), name: 'mirror', url: second.url });
    writeFileSync(configPath, stringify(config));
  };
  write(false);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_')));
  const probeFile = join(dir, 'stalls.jsonl');
  writeFileSync(probeFile, '');
  const probe = ['--import', join(here, 'bench/stall-probe.ts')];
  const gateway = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      join(root, 'scripts/register-ts.mjs'),
      ...probe,
      join(root, 'gateway/main.ts'),
      '--config',
      configPath,
    ],
    {
      cwd: root,
      env: { ...env, STALL_PROBE_FILE: probeFile, STALL_PROBE_MIN_MS: String(STALL_MIN_MS) },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  try {
    for (let i = 0; ; i++) {
      if (
        (await fetch(`${url}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        break;
      if (i > 400) throw new Error(`gateway not ready: ${stderr.slice(-500)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const call = async (path: string, name: string): Promise<string | undefined> => {
      const args = name.endsWith('get_bars') ? { symbols: ['AAPL'], limit: 1 } : {};
      const params = path === '/mcp' ? { name, arguments: args } : { name: 'call_tool', arguments: { name, arguments: args } };
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...DATA_KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
      });
      const text = await response.text();
      if (response.status !== 200) return `HTTP ${response.status}`;
      const error = /"error":\{"code":(-?\d+),"message":"([^"]{0,80})/.exec(text);
      if (error) return `${error[1]} ${error[2]}`;
      if (text.includes('"isError":true')) return `isError ${/"text":"([^"]{0,80})/.exec(text)?.[1] ?? ''}`;
      return undefined;
    };
    // The names the one-upstream configuration serves, and (from the first reload on) the two-upstream ones.
    const oneUpstream = [
      { label: 'list_accounts (/mcp)', call: () => call('/mcp', 'list_accounts') },
      { label: 'get_bars via call_tool', call: () => call('/mcp/compact', 'get_bars') },
    ];
    // get_bars is not an anchor: call_tool runs it. list_accounts is, so it is called directly.
    const twoUpstreams = [
      { label: 'cpzai__list_accounts (/mcp)', call: () => call('/mcp', 'cpzai__list_accounts') },
      { label: 'cpzai__get_bars via call_tool', call: () => call('/mcp/compact', 'cpzai__get_bars') },
    ];
    // One clock for the marks, the calls and the stall windows: ms since the first stream started.
    const origin = performance.now();
    const now = () => performance.now() - origin;
    /** The monotonic clock in µs (the stall probe's clock), at `at` on this clock. */
    const hrtimeAt = (at: number) => Number(process.hrtime.bigint() / 1000n) - (now() - at) * 1000;
    const windows: { window: string; from: number; to: number }[] = [];
    const marks: { event: string; at: number }[] = [];
    const reload = async (both: boolean, event: string) => {
      const before = stderr.length;
      write(both);
      const signalled = now();
      marks.push({ event, at: signalled });
      gateway.kill('SIGHUP');
      for (let i = 0; !stderr.slice(before).includes('SIGHUP: '); i++) {
        if (i > 3000) throw new Error('no reload line');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const line = stderr
        .slice(before)
        .split('\n')
        .find((l) => l.startsWith('SIGHUP'));
      marks.push({ event: `${event} done: ${line?.slice(0, 120)}`, at: now() });
      // The reload's window runs to 2 s after its log line (the old configuration closes meanwhile);
      // then a window of the same length with no reload: the machine's own stalls in this run.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const quietFrom = now();
      windows.push({ window: event, from: signalled, to: quietFrom });
      await new Promise((resolve) => setTimeout(resolve, quietFrom - signalled));
      windows.push({ window: `no reload, after ${event}`, from: quietFrom, to: now() });
    };
    const stream = pacedCalls(100, [...oneUpstream, ...oneUpstream]);
    const firstBase = now() - stream.now();
    await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
    windows.push({ window: 'no reload, before any', from: 1000, to: now() });
    await reload(true, 'reload: add mirror');
    const firstCalls = (await stream.stop()).map((c) => ({ ...c, startedAt: c.startedAt + firstBase }));
    const stream2 = pacedCalls(100, [...oneUpstream, ...twoUpstreams]);
    const secondBase = now() - stream2.now();
    await new Promise((resolve) => setTimeout(resolve, PHASE_MS / 2));
    await reload(false, 'reload: remove mirror');
    const secondCalls = (await stream2.stop()).map((c) => ({ ...c, startedAt: c.startedAt + secondBase }));
    const calls = [...firstCalls, ...secondCalls];
    const signals = marks.filter((m) => !m.event.includes(' done: ')).map((m) => m.at);
    const stalls = readFileSync(probeFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { from: number; to: number; wallMs: number; cpuMs: number });
    const stallsIn = ({ window, from, to }: (typeof windows)[number]) => {
      const inside = stalls.filter((s) => s.to > hrtimeAt(from) && s.from < hrtimeAt(to));
      return {
        window,
        lengthMs: round(to - from),
        [`over${STALL_MIN_MS}ms`]: inside.length,
        longestWallMs: Math.max(0, ...inside.map((s) => s.wallMs)),
        longestCpuMs: Math.max(0, ...inside.map((s) => s.cpuMs)),
      };
    };
    const summary = (selected: PacedCall[]) => {
      const sorted = selected.map((c) => c.latencyMs).sort((a, b) => a - b);
      const errors: Record<string, number> = {};
      for (const c of selected) if (c.error) errors[`${c.label}: ${c.error}`] = (errors[`${c.label}: ${c.error}`] ?? 0) + 1;
      return {
        calls: selected.length,
        errors: selected.filter((c) => c.error).length,
        p50: round(percentile(sorted, 50)),
        p99: round(percentile(sorted, 99)),
        max: round(sorted.at(-1) ?? NaN),
        byError: errors,
      };
    };
    const near = (at: number) => calls.filter((c) => c.startedAt >= at - 1000 && c.startedAt <= at + 3000);
    const result = {
      tree: root === here ? 'this tree' : root,
      loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
      marks: marks.map((m) => ({ ...m, at: round(m.at) })),
      eventLoopStalls: windows.map(stallsIn),
      beforeAnyReload: summary(calls.filter((c) => c.startedAt < signals[0]! - 1000)),
      acrossAdd: summary(near(signals[0]!)),
      acrossRemove: summary(near(signals[1]!)),
      all: summary(calls),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (root === here) writeFileSync(new URL('results/reload-names.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
    await first.close();
    await second.close();
    await platform.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
