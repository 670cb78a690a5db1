/**
 * Compressed listings on a constrained link (`npm run bench:link`): the same 2026-07-28 tools/list
 * through the gateway, plain and with `Accept-Encoding: gzip`, timed to the last byte, first on the
 * loopback as it is and then with its egress shaped by a token bucket (`tc qdisc ... tbf`, rate
 * BENCH_LINK_RATE, MTU 1500) inside a network namespace this bench creates and deletes, so nothing
 * outside it is touched. Every process of the measurement (reference or replay upstream, gateway,
 * client) runs inside the namespace.
 *
 * Needs root, `ip netns` and `tc`. Delay is not emulated: `netem` needs the kernel's sch_netem, which
 * this machine's kernel does not have ("Specified qdisc kind is unknown"); a rate limit is what
 * decides a large answer's transfer time. When the namespace cannot be made, the part says why and
 * measures nothing.
 *
 * Sizes (BENCH_LINK_SIZES): 34 is the reference upstream (platform stand-in + CPZAI server); any
 * other size is the replay upstream's synthetic catalogue (data/catalogs).
 */
import { execFileSync, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { DEMO_KEYS } from './expected-catalogues.ts';
import { percentile } from './load.ts';
import { fmt, printOutcome, table, writeResult, type PartOutcome } from './results.ts';
import { rpcCall, sendCall, toolNames, type RpcCall } from './rpc-requests.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type ServiceProcess } from './services.ts';

const env = process.env;
const RATE = env.BENCH_LINK_RATE ?? '20mbit';
const SIZES = (env.BENCH_LINK_SIZES ?? '34,2000').split(',').map((s) => Number(s.trim()));
const REQUESTS = Number(env.BENCH_LINK_REQUESTS ?? 8);
const here = fileURLToPath(import.meta.url);

interface Timing {
  wireBytes: number;
  medianMs: number;
  p90Ms: number;
}

interface LinkRow {
  size: number;
  link: 'loopback' | string;
  plain: Timing;
  gzip: Timing;
}

/** Sequential requests, each timed from send to last body byte; the body is counted, not kept. */
async function timed(call: RpcCall, headers: Record<string, string>, count: number): Promise<Timing> {
  const times: number[] = [];
  let wireBytes = 0;
  for (let i = 0; i <= count; i++) {
    const started = performance.now();
    const response = await request(call.url, { method: 'POST', headers: { ...call.headers, ...headers }, body: call.body });
    let bytes = 0;
    for await (const chunk of response.body) bytes += (chunk as Buffer).length;
    if (response.statusCode !== 200) throw new Error(`tools/list answered HTTP ${response.statusCode}`);
    // The first answer builds (and for gzip compresses) the listing: not timed.
    if (i > 0) times.push(performance.now() - started);
    wireBytes = bytes;
  }
  const sorted = times.sort((a, b) => a - b);
  return { wireBytes, medianMs: percentile(sorted, 50), p90Ms: percentile(sorted, 90) };
}

/** Inside the namespace: per size, start the services, time plain and gzip on loopback, shape the link, time again. */
async function inside(): Promise<{ rows: LinkRow[]; skipped: string[] }> {
  execFileSync('ip', ['link', 'set', 'lo', 'mtu', '1500', 'up']);
  const rows: LinkRow[] = [];
  const skipped: string[] = [];
  for (const size of SIZES) {
    let backend: ServiceProcess | undefined;
    let gateway: ServiceProcess | undefined;
    try {
      const reference = size === 34;
      backend = await startServiceProcess(reference ? { reference: true } : { replay: { size } }, { name: `link-${size}` });
      const upstream = reference ? backend.urls.upstream! : backend.urls.replay!;
      const spec = reference
        ? gatewaySpec(upstream, `${backend.urls.platform}/v1/me`, 'info')
        : gatewaySpec(upstream, undefined, 'info', { limits: { maxListPages: 1000 }, upstreams: [{ name: 'replay' }] });
      gateway = await startServiceProcess({ gateway: spec }, { name: `link-gateway-${size}` });
      await waitReady(gateway.urls.gateway!, 120_000);
      const credential = reference ? DEMO_KEYS.full : { 'x-cpz-key': 'bench-link', 'x-cpz-secret': 'bench-link' };
      const call = rpcCall('modern', `${gateway.urls.gateway}/mcp`, credential, 'tools/list');
      const first = await sendCall(call);
      const expected = reference ? undefined : size;
      if (expected !== undefined && toolNames(first.answer?.result ?? {}).length !== expected) throw new Error(`expected ${expected} tools`);
      const measure = async (link: string) => {
        const plain = await timed(call, { 'accept-encoding': 'identity' }, REQUESTS);
        const gzip = await timed(call, { 'accept-encoding': 'gzip' }, REQUESTS);
        rows.push({ size, link, plain, gzip });
      };
      await measure('loopback');
      execFileSync('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'tbf', 'rate', RATE, 'burst', '32kb', 'latency', '200ms']);
      await measure(RATE);
    } catch (error) {
      skipped.push(`${size} tools: ${(error as Error).message.split('\n')[0]}`);
    } finally {
      try {
        execFileSync('tc', ['qdisc', 'del', 'dev', 'lo', 'root'], { stdio: 'ignore' });
      } catch {
        // No qdisc was added.
      }
      await stopAll([gateway, backend]);
    }
  }
  return { rows, skipped };
}

/** Makes the namespace, runs {@link inside} in it, deletes it. Returns why not when it cannot. */
async function inNamespace(): Promise<{ rows: LinkRow[]; skipped: string[] } | { why: string }> {
  if (process.getuid?.() !== 0) return { why: 'not root: ip netns and tc need root' };
  const ns = `mcpbench${process.pid}`;
  try {
    execFileSync('ip', ['netns', 'add', ns], { stdio: 'pipe' });
  } catch (error) {
    return { why: `ip netns add failed: ${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}` };
  }
  try {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', here, '--inside'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: process.env,
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    const line = out.split('\n').find((l) => l.startsWith('LINK-RESULT '));
    if (code !== 0 || !line) return { why: `the measurement inside the namespace failed (exit ${code})` };
    return JSON.parse(line.slice('LINK-RESULT '.length)) as { rows: LinkRow[]; skipped: string[] };
  } finally {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  }
}

/** Runs the part and writes bench/results/link.json. */
export async function runLink(): Promise<PartOutcome> {
  const outcome = await inNamespace();
  if ('why' in outcome) {
    const markdown = `### Compressed listings on a constrained link\n\nNot measured: ${outcome.why}.`;
    return { part: 'link', markdown, targets: [], path: writeResult('link', { measured: false, why: outcome.why }) };
  }
  const rows = outcome.rows.map((r) => [
    r.size.toLocaleString('en-US'),
    r.link,
    fmt(r.plain.wireBytes / 1024, 1),
    fmt(r.gzip.wireBytes / 1024, 1),
    `${fmt(r.plain.medianMs)} / ${fmt(r.plain.p90Ms)}`,
    `${fmt(r.gzip.medianMs)} / ${fmt(r.gzip.p90Ms)}`,
    `${fmt(r.plain.medianMs / r.gzip.medianMs)}x`,
  ]);
  const markdown = [
    `### Compressed listings on a constrained link (network namespace, tbf ${RATE}, MTU 1500; ${REQUESTS} sequential requests per cell after one untimed)`,
    '',
    table(['tools', 'link', 'plain KiB', 'gzip KiB', 'plain ms median / p90', 'gzip ms median / p90', 'gzip speed-up'], rows),
    '',
    '- 2026-07-28 tools/list (JSON), timed to the last body byte; the gzip body is deflated once per listing and reused (gateway/http/fast-path.ts).',
    '- No added delay: netem is not in this kernel; the rate limit alone.',
    ...outcome.skipped.map((s) => `- Skipped ${s}.`),
  ].join('\n');
  const path = writeResult('link', { measured: true, rate: RATE, requests: REQUESTS, rows: outcome.rows, skipped: outcome.skipped });
  return { part: 'link', markdown, targets: [], path };
}

if (process.argv[1] && resolve(process.argv[1]) === here) {
  if (process.argv.includes('--inside')) {
    const result = await inside();
    process.stdout.write(`LINK-RESULT ${JSON.stringify(result)}\n`);
  } else printOutcome(await runLink());
}
