/**
 * Real Prometheus (issue 7): Debian's `prometheus` scrapes a gateway of the reference stack every
 * second while real MCP clients call tools through every surface the gateway mounts; the series then
 * read back through Prometheus's HTTP API. `promtool check metrics` lints the gateway's /metrics text.
 * The binaries come from the Debian `prometheus` package (.ci/run installs it); outside CI the suite is
 * skipped when they are missing, in CI their absence fails it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { surfaces } from '../../../gateway/surfaces/surfaces.ts';
import { DEMO_KEYS, connectV2 } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { freePort } from '../../helpers/free-port.ts';
import { waitFor } from '../../helpers/wait.ts';

const haveBinaries = ['prometheus', 'promtool'].every((bin) => spawnSync(bin, ['--version']).status === 0);

interface RunningPrometheus {
  url: string;
  process: ChildProcess;
  output: () => string;
}

/** Starts Prometheus on a free loopback port with `config`; retries once if the port was taken meanwhile. */
async function startPrometheus(dir: string, config: string): Promise<RunningPrometheus> {
  writeFileSync(join(dir, 'prometheus.yml'), config);
  for (let attempt = 1; ; attempt++) {
    const url = `http://127.0.0.1:${await freePort()}`;
    const child = spawn(
      'prometheus',
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${url.slice('http://'.length)}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = waitFor(
      'Prometheus /-/ready',
      async () => {
        if (child.exitCode !== null) throw new Error('exited');
        return (await fetch(`${url}/-/ready`)).ok ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const outcome = await Promise.race([ready.then(() => 'ready' as const), exited.then(() => 'exited' as const)]).catch(() => 'timeout' as const);
    if (outcome === 'ready') return { url, process: child, output: () => output };
    child.kill('SIGKILL');
    if (attempt >= 2 || !output.includes('address already in use')) throw new Error(`prometheus did not start (${outcome}):\n${output}`);
  }
}

/** Instant query; each series as `{ labels, value }`. */
async function query(prometheusUrl: string, promql: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: promql })}`);
  const body = (await response.json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
  return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
}

/** The summed value of `promql` once Prometheus has scraped a positive one. */
const scrapedPositive = (prometheusUrl: string, promql: string) =>
  waitFor(
    `${promql} > 0 in Prometheus`,
    async () => {
      const sum = (await query(prometheusUrl, promql)).reduce((total, series) => total + series.value, 0);
      return sum > 0 ? sum : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 250 },
  );

describe.skipIf(!haveBinaries && !process.env.CI)('the gateway under a real Prometheus', () => {
  let stack: Stack;
  let prometheus: RunningPrometheus;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-prometheus-'));
    stack = await startStack();
    const target = new URL(stack.gatewayUrl).host;
    prometheus = await startPrometheus(
      dir,
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: mcp-gateway',
        `    static_configs: [{ targets: ["${target}"] }]`,
        '',
      ].join('\n'),
    );

    // Traffic through every mounted surface: a listing and one tool call each (the outcome does not
    // matter here: every outcome is counted).
    for (const surface of surfaces) {
      const client = await connectV2(`${stack.gatewayUrl}${surface.path}`, DEMO_KEYS.data);
      try {
        await client.listTools();
        if (surface.name === 'full') await client.callTool({ name: 'list_accounts', arguments: {} });
        else await client.callTool({ name: 'call_tool', arguments: { name: 'get_bars', arguments: {} } });
      } finally {
        await client.close();
      }
    }
  });

  afterAll(async () => {
    if (prometheus?.process.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.process.once('exit', resolve));
      prometheus.process.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      prometheus.process.kill('SIGKILL');
    }
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the gateway target as up', async () => {
    const up = await waitFor(
      'the gateway target to be up',
      async () => {
        const series = await query(prometheus.url, 'up{job="mcp-gateway"}');
        return series.length === 1 && series[0]!.value === 1 ? series : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(up[0]!.labels.instance).toBe(new URL(stack.gatewayUrl).host);
  });

  it.each(surfaces.map((s) => s.name))('counts tool calls through the %s surface in mcp_tool_calls_total', async (endpoint) => {
    expect(await scrapedPositive(prometheus.url, `mcp_tool_calls_total{job="mcp-gateway",endpoint="${endpoint}"}`)).toBeGreaterThanOrEqual(1);
  });

  it('counts the MCP POSTs in http_request_duration_seconds_count', async () => {
    const posts = await scrapedPositive(prometheus.url, 'http_request_duration_seconds_count{job="mcp-gateway",method="POST"}');
    // At least a tools/list and a tools/call per surface.
    expect(posts).toBeGreaterThanOrEqual(2 * surfaces.length);
  });

  it('serves /metrics that promtool check metrics accepts', async () => {
    const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 20_000 });
    expect(`${lint.stdout}${lint.stderr}`.trim()).toBe('');
    expect(lint.status).toBe(0);
  });
});
