/**
 * One gateway under `node --cpu-prof` serving one tools/call scenario at 8 connections after 10,000
 * warm-up calls: prints the process's CPU ms per call over the loaded run (process.cpuUsage), then the
 * profile's self time per call (µs) by area (package, our folder, Node subsystem) and by frame, counting
 * only the samples of the loaded run. The sampler counts wall time on the thread: a syscall that is
 * descheduled on a busy machine (`writev`) is inflated. `npx tsx bench/profile-call.ts [legacy|modern|compact|compact-legacy|floor|parsing-floor] [seconds]`
 * (TOP=<n> frames). `BENCH_PERF=1`: CPU time instead of wall time, from Linux `perf record -e cpu-clock`
 * over the loaded run (JS frames named by `--perf-basic-prof-only-functions`), each sample counted to the
 * nearest frame of our gateway/ code on its stack (so a function's figure holds the library and kernel
 * work it calls synchronously), else to its leaf: µs of CPU per call and share, comparable between two
 * runs as shares even on a loaded machine. `BENCH_PERF_SCRIPT=<file>` also writes the `perf script` stacks
 * (leaf first, one sample a block) for other cuts of the same samples (inclusive shares, kernel, GC threads).
 * `BENCH_HEAP=1`: instead of a CPU profile, the bytes the gateway's V8 heap allocates per call over the loaded run, in total
 * and by allocating frame (the inspector's sampling heap profiler, objects the GC collected included): a figure the
 * machine's load does not move, so two trees compare run against run. With `BENCH_HEAP_SURVIVORS=1`, only what
 * the young generation's collections did not collect: promoted objects (what the old generation fills with), by
 * allocating frame; `BENCH_HEAP_INTERVAL=<bytes>` (default 512) samples more sparsely (less overhead),
 * `BENCH_HEAP_STACKS=<n>` names the n innermost frames. `BENCH_NODE_FLAGS="--trace-gc-nvp"` with
 * `BENCH_CHILD_STDOUT=<file>`: V8's line per collection (allocated, promoted and survived bytes, pause) in that file.
 * `BENCH_MAPS=1`: instead of a profile, the hidden classes (V8 maps) the gateway makes per call over the loaded run, by
 * the function that made them and why (`--log-maps`): a warmed gateway should make none. On Node 20 (V8 11.3) an
 * object spread followed by a key the source lacks (`{ ...a, b }`, or `o = { ...a }; o.b = x`) in optimised code
 * makes a new map for every object it builds, and every reader of those objects then misses its inline caches.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { DEMO_KEYS } from './expected-catalogues.ts';
import { runLoad } from './load.ts';
import { rpcCall, type Era } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type ServiceProcess } from './services.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Where a frame's self time is counted: a package, one of our folders, a Node subsystem, a native function. */
function areaOf(url: string, functionName: string): string {
  if (!url) return `native ${functionName}`;
  if (url.startsWith('node:'))
    return url
      .replace(/^node:(internal\/)?(deps\/)?/, 'node:')
      .split('/')[0]!
      .replace(/_http_.*/, 'http');
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return url.replace(/^.*\/(gateway\/[^/]+)\/.*$/, '$1');
}

/** Self time per call (µs) by frame and by area, over the samples inside `window` only. */
function loadedProfile(file: string, window: { fromEndUs: number; toEndUs: number }, calls: number, top: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
    startTime: number;
    endTime: number;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const from = profile.endTime - window.fromEndUs;
  const to = profile.endTime - window.toEndUs;
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let t = profile.startTime;
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from || t > to) return;
    const n = byId.get(id)!;
    if (n.callFrame.functionName === '(idle)') return;
    busy += dt;
    const url = n.callFrame.url;
    const frame = `${n.callFrame.functionName || '(anon)'} ${url.replace(/^.*\/(node_modules|gateway|bench)\//, '$1/')}`;
    frames.set(frame, (frames.get(frame) ?? 0) + dt);
    const area = areaOf(url, n.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + dt);
  });
  const rank = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${(v / calls).toFixed(1).padStart(6)} µs  ${k}`)
      .join('\n');
  return `loaded window: ${(busy / calls).toFixed(1)} µs busy per call over ${calls} calls\n\nby area:\n${rank(areas, 40)}\n\nby frame:\n${rank(frames, top)}`;
}

async function main(): Promise<void> {
  const scenario = (process.argv[2] ?? 'modern') as Era | 'compact' | 'compact-legacy' | 'floor' | 'parsing-floor';
  const seconds = Number(process.argv[3] ?? 10);
  const processes: ServiceProcess[] = [];
  const perf = process.env.BENCH_PERF === '1';
  const heap = process.env.BENCH_HEAP === '1';
  const maps = process.env.BENCH_MAPS === '1';
  const mapLog = resolve(tmpdir(), `profile-call-${process.pid}.v8.log`);
  const perfData = resolve(tmpdir(), `profile-call-${process.pid}.perf.data`);
  try {
    const backends = await startServiceProcess({ reference: true }, { name: 'reference' });
    processes.push(backends);
    const { upstream, platform } = backends.urls;
    // `floor`: the bare byte relay (bare-proxy.ts) profiled the same way, the reference for what node:http costs;
    // `parsing-floor`: the relay that parses and re-serialises both messages (startParsingRelay), what any parsing hop costs.
    const floor = scenario === 'floor' || scenario === 'parsing-floor';
    const spec =
      scenario === 'floor'
        ? { bareProxy: upstream! }
        : scenario === 'parsing-floor'
          ? { parsingRelay: upstream! }
          : { gateway: gatewaySpec(upstream!, `${platform}/v1/me`, 'info') };
    const gw = await startServiceProcess(spec, {
      name: floor ? `${scenario}-profile` : 'gateway-profile',
      cpuProfile: process.env.BENCH_STRACE !== '1' && !perf && !heap && !maps && process.env.BENCH_PROFILE !== '0',
      // BENCH_NODE_FLAGS: Node/V8 flags for the profiled process only.
      nodeFlags: [
        ...(perf ? ['--perf-basic-prof-only-functions'] : []),
        ...(maps ? ['--log-maps', '--no-log-maps-details', `--logfile=${mapLog}`, '--no-logfile-per-isolate'] : []),
        ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      ],
    });
    processes.push(gw);
    if (!floor) await waitReady(gw.urls.gateway!);
    const g = gw.urls.gateway!;
    const call = floor
      ? rpcCall('modern', (gw.urls.bareProxy ?? gw.urls.parsingRelay)!, DEMO_KEYS.full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } })
      : scenario === 'compact' || scenario === 'compact-legacy'
        ? rpcCall(scenario === 'compact' ? 'modern' : 'legacy', `${g}/mcp/compact`, DEMO_KEYS.full, 'tools/call', {
            name: 'call_tool',
            arguments: { name: 'list_connections', arguments: { limit: 1 } },
          })
        : rpcCall(scenario, `${g}/mcp`, DEMO_KEYS.full, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } });
    const check = (body: string) => body.includes('"result"') && !body.includes('"isError":true');
    await runLoad(call, { connections: 8, amount: 10_000, check });
    // BENCH_STRACE=1: the gateway's system calls over the loaded run, counted (strace -c), instead of a profile.
    const strace = process.env.BENCH_STRACE === '1' ? spawn('strace', ['-c', '-f', '-p', String(gw.pid)], { stdio: ['ignore', 'ignore', 'pipe'] }) : undefined;
    const straced =
      strace &&
      new Promise<string>((resolve) => {
        let out = '';
        strace.stderr!.on('data', (chunk: Buffer) => (out += chunk));
        strace.once('close', () => resolve(out));
      });
    const recorder = perf
      ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '1999', '-g', '-p', String(gw.pid), '-o', perfData], { stdio: 'ignore' })
      : undefined;
    const recorded = recorder && new Promise((resolve) => recorder.once('close', resolve));
    if (strace || recorder) await new Promise((resolve) => setTimeout(resolve, 500));
    // User and system time apart (Linux /proc/<pid>/stat, clock ticks): system time is the kernel's socket work.
    const ticks = () => {
      const fields = readFileSync(`/proc/${gw.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return { user: Number(fields[11]), system: Number(fields[12]) };
    };
    if (heap) await gw.heapStart();
    const mapLogFrom = maps ? statSync(mapLog).size : 0;
    const ticksBefore = ticks();
    const before = await gw.cpuMs();
    const loadStart = performance.now();
    const loaded = await runLoad(call, { connections: 8, seconds, check });
    const loadEnd = performance.now();
    const after = await gw.cpuMs();
    const ticksAfter = ticks();
    const allocated = heap ? await gw.heapStop() : undefined;
    const mapLogTo = maps ? statSync(mapLog).size : 0;
    if (strace) {
      strace.kill('SIGINT');
      console.log(`${loaded.requests} calls; strace -c:\n${await straced}`);
    }
    if (recorder) {
      recorder.kill('SIGINT');
      await recorded;
    }
    console.log(
      `${scenario}: ${loaded.reqPerSec.toFixed(0)} req/s, mismatches ${loaded.mismatches}, CPU ${((after - before) / loaded.requests).toFixed(3)} ms/call ` +
        `(user ${(((ticksAfter.user - ticksBefore.user) * 10) / loaded.requests).toFixed(3)}, system ${(((ticksAfter.system - ticksBefore.system) * 10) / loaded.requests).toFixed(3)}, at 100 ticks/s)`,
    );
    await gw.stop();
    const exited = performance.now();
    if (allocated) {
      const perCall = (bytes: number) => (bytes / loaded.requests).toFixed(0).padStart(7);
      const rows = allocated.byFrame.slice(0, Number(process.env.TOP ?? 60)).map(([frame, bytes]) => `${perCall(bytes)} B  ${frame}`);
      console.log(`V8 heap allocated: ${perCall(allocated.totalBytes).trim()} B per call over ${loaded.requests} calls\n${rows.join('\n')}`);
      return;
    }
    if (maps) {
      console.log(mapsMade(readFileSync(mapLog, 'utf8'), mapLogFrom, mapLogTo, loaded.requests, Number(process.env.TOP ?? 30)));
      return;
    }
    if (perf) {
      const cpuMsPerCall = (after - before) / loaded.requests;
      const script = execFileSync('perf', ['script', '-i', perfData, '-F', 'ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
      if (process.env.BENCH_PERF_SCRIPT) writeFileSync(process.env.BENCH_PERF_SCRIPT, script);
      console.log(nearestOurs(script, cpuMsPerCall, Number(process.env.TOP ?? 60)));
      rmSync(`/tmp/perf-${gw.pid}.map`, { force: true });
      return;
    }
    const file = gw.profilePath;
    if (!file) return;
    // The loaded run's window, counted back from the profile's end (written at exit).
    const window = { fromEndUs: (exited - loadStart) * 1000, toEndUs: (exited - loadEnd) * 1000 };
    console.log(`profile ${file}, loaded window ${window.fromEndUs.toFixed(0)}..${window.toEndUs.toFixed(0)} µs before its end`);
    console.log(loadedProfile(file, window, loaded.requests, Number(process.env.TOP ?? 60)));
  } finally {
    await stopAll(processes.reverse());
    rmSync(perfData, { force: true });
    rmSync(mapLog, { force: true });
  }
}

/**
 * The maps V8 made between two offsets of its `--log-maps` log (the loaded run), per call, by the function whose code
 * made them (from the log's `code-creation` lines) and the event's kind, reason and property name.
 */
function mapsMade(log: string, from: number, to: number, calls: number, top: number): string {
  const code: { start: number; end: number; name: string }[] = [];
  const sites = new Map<string, number>();
  let made = 0;
  let offset = 0;
  for (const line of log.split('\n')) {
    const at = offset;
    offset += Buffer.byteLength(line) + 1;
    const fields = line.split(',');
    if (fields[0] === 'code-creation' && at < to) {
      const start = Number.parseInt(fields[4]!, 16);
      code.push({
        start,
        end: start + Number(fields[5]),
        name: fields
          .slice(6)
          .join(',')
          .replace(/file:\/\/\S*?\/(gateway|node_modules)\//, '$1/'),
      });
    }
    if (at < from || at >= to) continue;
    if (fields[0] === 'map-create') made++;
    else if (fields[0] === 'map') {
      // map,<kind>,<time>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>
      const pc = Number.parseInt(fields[5]!, 16);
      const site = code.findLast((c) => pc >= c.start && pc < c.end)?.name ?? 'unknown code';
      const key = `${fields[1]} ${fields[8] || '-'} ${fields[9] || '-'}  ${site.replace(/,0x[0-9a-f]+,/, ' ')}`;
      sites.set(key, (sites.get(key) ?? 0) + 1);
    }
  }
  const rows = [...sites.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, n]) => `${(n / calls).toFixed(3).padStart(7)}  ${key}`);
  return `V8 maps made: ${(made / calls).toFixed(3)} per call over ${calls} calls; by event (kind, reason, property, site):\n${rows.join('\n')}`;
}

/**
 * `perf script` samples (one stack per block, leaf first) counted to the nearest frame of our gateway/
 * code, else `outside: <leaf>`: each as µs of CPU per call (its share of the samples times the measured
 * CPU per call) and as a share.
 */
function nearestOurs(script: string, cpuMsPerCall: number, top: number): string {
  const counts = new Map<string, number>();
  let samples = 0;
  for (const block of script.split('\n\n')) {
    const frames = block
      .split('\n')
      .map((line) =>
        line
          .trim()
          .replace(/^[0-9a-f]+\s+/, '')
          .replace(/\+0x[0-9a-f]+$/, ''),
      )
      .filter(Boolean);
    if (frames.length === 0) continue;
    samples++;
    const ours = frames.find((frame) => frame.startsWith('JS:') && frame.includes('/gateway/'));
    const key = ours ? ours.replace(/^JS:[*^~]?/, '').replace(/file:\/\/\S*?\/gateway\//, 'gateway/') : `outside: ${frames[0]!.slice(0, 90)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const rows = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, n]) => `${((cpuMsPerCall * 1000 * n) / samples).toFixed(1).padStart(7)} µs ${((100 * n) / samples).toFixed(2).padStart(6)}%  ${key}`);
  const oursShare = [...counts.entries()].filter(([key]) => !key.startsWith('outside:')).reduce((n, [, c]) => n + c, 0) / samples;
  return `perf cpu-clock: ${samples} samples, ${(cpuMsPerCall * 1000).toFixed(0)} µs of CPU per call, ${(100 * oursShare).toFixed(1)}% under our gateway/ frames\n${rows.join('\n')}`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
