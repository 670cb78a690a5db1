/**
 * `reload.watch` on a configuration mounted from a Kubernetes ConfigMap. The folder is laid out and
 * updated exactly as the kubelet's AtomicWriter does it (kubernetes pkg/volume/util/atomic_writer.go):
 * the data in a timestamped folder `..2026_12_04_16_00_00.<random>`, a symlink `..data` to it, and the
 * file itself a symlink `gateway.yaml -> ..data/gateway.yaml`; an update writes a new timestamped
 * folder, points `..data_tmp` at it, renames `..data_tmp` over `..data` and removes the old folder. No
 * event names `gateway.yaml`. On the real process (gateway/main.ts): a changed setting is applied
 * without a restart, a swap that leaves the file's bytes alone reloads nothing, and an invalid one is
 * refused with the key named (a JSON log line, a count in `mcp_config_reloads_total{outcome="refused"}`)
 * while the old configuration keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Tool } from '@modelcontextprotocol/server';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
const mount = mkdtempSync(join(tmpdir(), 'configmap-'));
let upstream: FakeUpstream;
let gateway: ChildProcess;
let url: string;
let stderr = '';
let stdout = '';
let current: string | undefined;
let swaps = 0;

const readOnly = (name: string): Tool => ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }) as Tool;

/** The part of the configuration this test writes (`scopes` is written wrong on purpose). */
interface ConfigShape {
  listen: { host: string; port: number };
  upstreams: { name: string; url: string; anchors: string[]; health: { intervalMs: number } }[];
  reload: { watch: boolean };
  log: { level: string };
  scopes?: { timeoutMs: unknown };
}

/** The gateway configuration as the ConfigMap's `gateway.yaml` key holds it. */
function config(port: number, edit: (c: ConfigShape) => void = () => undefined): string {
  const c: ConfigShape = {
    listen: { host: '127.0.0.1', port },
    upstreams: [{ name: 'fake', url: upstream.url, anchors: [], health: { intervalMs: 0 } }],
    reload: { watch: true },
    log: { level: 'warn' },
  };
  edit(c);
  return stringify(c);
}

/** One kubelet update of the volume: the files in a new timestamped folder, then the `..data` swap. */
function kubeletWrite(files: Record<string, string>): void {
  const stamp = new Date()
    .toISOString()
    .replace(/[-T:]/g, '_')
    .replace('Z', '')
    .replace(/_(\d\d\d)$/, '.$1');
  const folder = `..${stamp}${String(++swaps).padStart(6, '0')}`;
  mkdirSync(join(mount, folder));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(mount, folder, name), text);
  symlinkSync(folder, join(mount, '..data_tmp'));
  renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
  for (const name of Object.keys(files)) {
    try {
      symlinkSync(join('..data', name), join(mount, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  if (current) rmSync(join(mount, current), { recursive: true });
  current = folder;
}

/** `mcp_config_reloads_total` by outcome, from the gateway's own /metrics. */
async function reloads(): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^mcp_config_reloads_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** The gateway's JSON log lines (stdout) with this message. */
const logRecords = (msg: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.msg === msg);

async function compactNames(): Promise<string[]> {
  const response = await fetch(`${url}/mcp/compact`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': '2025-06-18',
      authorization: 'Bearer configmap',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const body = (await response.json()) as { result: { tools: { name: string }[] } };
  return body.result.tools.map((t) => t.name).sort();
}

let port: number;
beforeAll(async () => {
  upstream = await startFakeUpstream({ tools: [{ definition: readOnly('quote') }, { definition: readOnly('history') }] });
  port = await freePort();
  url = `http://127.0.0.1:${port}`;
  kubeletWrite({ 'gateway.yaml': config(port), 'other.txt': 'one' });
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && name !== 'REDIS_URL'));
  gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', join(mount, 'gateway.yaml')], {
    cwd: ROOT,
    env: { ...env, GATEWAY_ANONYMOUS: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout!.on('data', (chunk) => (stdout += chunk));
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor('the watch to be armed', () => stderr.includes('reloads the configuration'), { timeoutMs: PROCESS_BUDGET_MS });
}, PROCESS_BUDGET_MS + 30_000);
afterAll(async () => {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
  }
  await upstream?.close();
  rmSync(mount, { recursive: true, force: true });
});

describe('reload.watch on a ConfigMap volume (the kubelet ..data swap)', { timeout: 3 * PROCESS_BUDGET_MS }, () => {
  it('applies a changed setting without a restart, ignores a swap that leaves the file alone, refuses an invalid one', async () => {
    expect(await compactNames()).toEqual(['call_tool', 'search_tools']);
    expect(await reloads()).toEqual({});

    // A changed anchor list: /mcp/compact advertises the anchor, in the same process.
    kubeletWrite({ 'gateway.yaml': config(port, (c) => (c.upstreams[0].anchors = ['quote'])), 'other.txt': 'one' });
    await waitFor('the swap to be applied', () => stderr.includes('gateway.yaml changed: configuration reloaded'), { timeoutMs: PROCESS_BUDGET_MS });
    expect(await compactNames()).toEqual(['call_tool', 'quote', 'search_tools']);
    expect(await reloads()).toEqual({ applied: 1 });
    expect(gateway.exitCode).toBeNull();

    // Another key of the ConfigMap changed: a swap, but gateway.yaml's bytes are the same.
    const mark = stderr.length;
    kubeletWrite({ 'gateway.yaml': config(port, (c) => (c.upstreams[0].anchors = ['quote'])), 'other.txt': 'two' });
    // An absence no condition can show: well past the 200 ms settle time, nothing was reloaded.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(stderr.slice(mark)).toBe('');
    expect(await reloads()).toEqual({ applied: 1 });
    // An invalid configuration: refused, named, the running one kept.
    kubeletWrite({ 'gateway.yaml': config(port, (c) => (c.scopes = { timeoutMs: 'soon' })), 'other.txt': 'two' });
    await waitFor('the invalid swap to be refused', () => stderr.slice(mark).includes('gateway.yaml changed: invalid configuration'), {
      timeoutMs: PROCESS_BUDGET_MS,
    });
    expect(stderr.slice(mark)).toContain('scopes.timeoutMs: must be integer');
    expect(stderr.slice(mark)).toContain('the running configuration keeps serving');
    expect(await reloads()).toEqual({ applied: 1, refused: 1 });
    // The JSON line (stdout is written in batches: up to 250 ms after the stderr line).
    const refusals = () => logRecords('configuration not reloaded; the running configuration keeps serving');
    await waitFor('the refusal log line', () => refusals().length > 0, { timeoutMs: PROCESS_BUDGET_MS });
    expect(refusals().map((r) => [r.level, r.outcome, r.key])).toEqual([[40, 'refused', 'scopes.timeoutMs']]);
    expect(await compactNames()).toEqual(['call_tool', 'quote', 'search_tools']);
    expect(gateway.exitCode).toBeNull();
  });
});
