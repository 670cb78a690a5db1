/**
 * Live reload on a real gateway process (gateway/main.ts) in front of the reference stack: a client
 * keeps calling while the config file changes a scope rule and a read anchor and the process gets
 * SIGHUP; the new surfaces appear without a single failed request, the upstream connection is kept, and
 * a broken configuration is refused with the key-naming message while the old one keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { DEFAULT_CONFIG_PATH } from '../../../config/load.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { DATA_KEY_TOOLS, DEMO_KEYS } from '../../helpers/clients.ts';
import { freePort } from '../../helpers/free-port.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
type Service = { url: string; close(): Promise<void> };

let platform: Service;
let upstream: Service;
let gateway: ChildProcess;
let gatewayUrl: string;
let stderr = '';
let stdout = '';
const dir = mkdtempSync(join(tmpdir(), 'reload-'));
const configPath = join(dir, 'gateway.yaml');
// The reference configuration, pointed at this test's stack.
const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as Record<string, any>;

function writeConfig(edit: (config: Record<string, any>) => void): void {
  const config = structuredClone(base);
  edit(config);
  writeFileSync(configPath, stringify(config));
}

beforeAll(async () => {
  platform = await startPlatform({ port: 0 });
  upstream = await startUpstreamServer({ port: 0, platformUrl: platform.url });
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  base.listen.port = port;
  base.upstreams[0].url = upstream.url;
  base.scopes.endpoint = `${platform.url}/v1/me`;
  writeConfig(() => undefined);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_')));
  gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', configPath], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout!.on('data', (chunk) => (stdout += chunk));
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor('the gateway to be ready', () => fetch(`${gatewayUrl}/readyz`).then((r) => r.status === 200), { timeoutMs: PROCESS_BUDGET_MS });
}, PROCESS_BUDGET_MS + 30_000);
afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  }
  await upstream?.close();
  await platform?.close();
});

/** tools/list of one endpoint for the data key (2025-06-18, JSON answer), names sorted. */
async function names(path: string): Promise<string[]> {
  const response = await fetch(`${gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...DEMO_KEYS.data },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
  const body = JSON.parse(
    text.startsWith('{')
      ? text
      : text
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
  ) as { result?: { tools: { name: string }[] }; error?: unknown };
  if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
  return body.result.tools.map((t) => t.name).sort();
}

async function callListAccounts(): Promise<void> {
  const response = await fetch(`${gatewayUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...DEMO_KEYS.data },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } }),
  });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"isError":true') || text.includes('"error"'))
    throw new Error(`tools/call: HTTP ${response.status} ${text.slice(0, 200)}`);
}

/**
 * Calls in a loop (tools/list on both endpoints, a tools/call) until stopped; every failure is kept, and
 * the number of tools /mcp listed in each round (to see the loop ran across the reload).
 */
function loopClient() {
  const failures: string[] = [];
  const seen: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      await Promise.all([names('/mcp'), names('/mcp/compact'), callListAccounts()]).then(
        ([full]) => void seen.push(full.length),
        (error: Error) => failures.push(error.message),
      );
    }
  })();
  return { failures, seen, stop: async () => ((running = false), await done) };
}

// config/cpzai.yaml serves code mode: run_code is listed beside search_tools and call_tool.
const COMPACT_BEFORE = ['call_tool', 'get_market_data', 'list_accounts', 'list_orders', 'list_positions', 'run_code', 'search_tools'];

// Generous timeouts: each step spawns or waits for a separate process on a shared machine.
describe('live reload on SIGHUP', { timeout: 2 * PROCESS_BUDGET_MS }, () => {
  it('a changed scope rule and read anchor show on the surfaces without a failed request; the upstream connection is kept', async () => {
    expect(await names('/mcp')).toEqual(DATA_KEY_TOOLS);
    expect(await names('/mcp/compact')).toEqual(COMPACT_BEFORE);
    const client = loopClient();
    await waitFor('two rounds of the caller', () => client.seen.length >= 2);
    writeConfig((config) => {
      config.upstreams[0].scopeRules = { get_bars: ['trade'] };
      config.upstreams[0].anchors = [...config.upstreams[0].anchors, 'get_order'];
    });
    gateway.kill('SIGHUP');
    // The looping client itself sees the new surface, and keeps going a little after it.
    await waitFor('two rounds seeing 9 tools', () => client.seen.filter((n) => n === 9).length >= 2);
    await client.stop();
    expect(client.failures).toEqual([]);
    expect(client.seen.slice(0, 2)).toEqual([10, 10]);
    expect(new Set(client.seen)).toEqual(new Set([10, 9]));
    expect(await names('/mcp')).toEqual(DATA_KEY_TOOLS.filter((n) => n !== 'get_bars'));
    expect(await names('/mcp/compact')).toEqual([...COMPACT_BEFORE, 'get_order'].sort());
    expect(stderr).toMatch(/SIGHUP: configuration reloaded \(changed: upstreams; upstream cpzai: connection kept, settings applied\)/);
    expect(stdout.split('\n').filter((line) => line.includes('"connected to upstream"'))).toHaveLength(1);
  });

  it('a broken configuration is refused with the key named and the old one keeps serving', async () => {
    const before = await names('/mcp');
    writeConfig((config) => {
      config.scopes.timeoutMs = 'soon';
    });
    const client = loopClient();
    await waitFor('a round of the caller', () => client.seen.length >= 1);
    const mark = stderr.length;
    gateway.kill('SIGHUP');
    await waitFor('a log line about the reload', () => stderr.length > mark, { timeoutMs: PROCESS_BUDGET_MS });
    expect(stderr.slice(mark)).toContain(
      `SIGHUP: invalid configuration: scopes.timeoutMs: must be integer (in ${configPath}); the running configuration keeps serving`,
    );
    const rounds = client.seen.length;
    await waitFor('two more rounds of the caller', () => client.seen.length >= rounds + 2);
    await client.stop();
    expect(client.failures).toEqual([]);
    expect(new Set(client.seen)).toEqual(new Set([before.length]));
    expect(await names('/mcp')).toEqual(before);
    // A socket-bound key is refused too.
    writeConfig((config) => {
      config.listen.port = base.listen.port + 1;
    });
    const mark2 = stderr.length;
    gateway.kill('SIGHUP');
    await waitFor('a log line about the refused reload', () => stderr.length > mark2, { timeoutMs: PROCESS_BUDGET_MS });
    expect(stderr.slice(mark2)).toMatch(/SIGHUP: configuration not reloaded: listen\.port: changed from \d+ to \d+, which needs a restart/);
    expect(gateway.exitCode).toBeNull();
  });
});

describe('live reload on a change of the file (reload.watch)', { timeout: 2 * PROCESS_BUDGET_MS }, () => {
  let watched: ChildProcess | undefined;
  afterAll(async () => {
    if (watched && watched.exitCode === null) {
      watched.kill('SIGTERM');
      await once(watched, 'exit');
    }
  });

  it('reloads when the file is rewritten, without a signal', async () => {
    const watchDir = mkdtempSync(join(tmpdir(), 'reload-watch-'));
    const path = join(watchDir, 'watched.yaml');
    const port = await freePort();
    const config = structuredClone(base);
    config.listen.port = port;
    config.reload = { watch: true };
    writeFileSync(path, stringify(config));
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_')));
    watched = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', path], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    watched.stderr!.on('data', (chunk) => (err += chunk));
    // main.ts prints this line after the watch is armed (pino's own 'gateway listening' comes earlier).
    await waitFor('the reload announcement', () => err.includes('reloads the configuration'), { timeoutMs: PROCESS_BUDGET_MS });
    config.upstreams[0].scopeRules = { get_bars: ['trade'] };
    writeFileSync(path, stringify(config));
    await waitFor('the watched file reloaded', () => err.includes('watched.yaml changed: configuration reloaded'), { timeoutMs: PROCESS_BUDGET_MS });
    const previous = gatewayUrl;
    gatewayUrl = `http://127.0.0.1:${port}`;
    try {
      expect(await names('/mcp')).toEqual(DATA_KEY_TOOLS.filter((n) => n !== 'get_bars'));
    } finally {
      gatewayUrl = previous;
    }
  });
});
