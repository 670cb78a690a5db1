/**
 * A live reload that changes only an upstream's policy or per-call settings (gateway/reload/plan.ts
 * UPSTREAM_KEYS) keeps its connection: a stdio server keeps its process (and so its state), its
 * access rules (`scopes.required`, `scopeRules`) and its `timeoutMs` apply to the next calls; a change
 * of a connection key (`args`) starts a new process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../../config/load.ts';
import type { GatewayConfig, UpstreamConfig } from '../../../config/types.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { connectV2, namesOf } from '../../helpers/clients.ts';
import { ANY_BEARER } from '../../helpers/stack.ts';

const SERVER = new URL('../../fixtures/stdio-pid-server.mjs', import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), 'reload-in-place-'));
const FILE = join(dir, 'gateway.yaml');
writeFileSync(FILE, stringify({ upstreams: [{ name: 'pid', command: process.execPath, args: [SERVER] }] }));

function config(upstream: Partial<UpstreamConfig>, graceMs?: number): GatewayConfig {
  const loaded = loadConfig({
    path: FILE,
    env: {},
    overrides: {
      ...(graceMs !== undefined ? { shutdown: { graceMs } } : {}),
      listen: { host: '127.0.0.1', port: 0 },
      anonymous: true,
      log: { level: 'silent' },
      upstreams: [upstream],
    },
  });
  delete loaded.scopes.endpoint;
  return loaded;
}

let gateway: RunningGateway;
beforeAll(async () => {
  gateway = await startGateway(config({ timeoutMs: 30_000 }));
});
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One call on a client of its own; `progress`: with a progress token, so the SDK's handler serves it rather than the fast path. */
async function call(name: string, args: Record<string, unknown> = {}, progress = false) {
  const client = await connectV2(`${gateway.url}/mcp`, ANY_BEARER);
  try {
    return (await client.callTool({ name, arguments: args }, progress ? { onprogress: () => {} } : undefined)) as {
      isError?: boolean;
      content: { text: string }[];
    };
  } finally {
    await client.close();
  }
}

describe('a reload of an upstream policy or per-call setting', () => {
  it('keeps the stdio process and applies scopes, scopeRules and timeoutMs to the next calls', async () => {
    const before = (await call('pid')).content[0]!.text;
    const plan = await gateway.reload(config({ timeoutMs: 2000, scopes: { required: ['files:read'] } as UpstreamConfig['scopes'], scopeRules: { pid: [] } }));
    expect(plan.upstreams).toEqual([{ name: 'pid', decision: 'repolicy' }]);
    expect((await call('pid')).content[0]!.text).toBe(before);
    // The new access rules: `wait` now needs files:read, which an anonymous caller lacks; `pid` is public.
    const client = await connectV2(`${gateway.url}/mcp`, ANY_BEARER);
    try {
      expect(namesOf(await client.listTools())).toEqual(['pid']);
    } finally {
      await client.close();
    }
    await gateway.reload(config({ timeoutMs: 2000 }));
    // The new deadline: 2 s, where the old one (30 s) would have let the 8 s wait answer.
    const slow = await call('wait', { ms: 8000 });
    expect(slow.isError).toBe(true);
    expect(slow.content[0]!.text).toMatch(/did not answer in time/);
    expect((await call('pid')).content[0]!.text).toBe(before);
  });

  it('starts a new process when a connection key changes', async () => {
    const before = (await call('pid')).content[0]!.text;
    const plan = await gateway.reload(config({ timeoutMs: 30_000, args: [SERVER, '--again'] }));
    expect(plan.upstreams).toEqual([{ name: 'pid', decision: 'replace' }]);
    expect((await call('pid')).content[0]!.text).not.toBe(before);
  });
});

describe('a call in flight during a reload', () => {
  it('finishes on the configuration it started on, however long past shutdown.graceMs, its upstream kept or replaced', async () => {
    // graceMs 100: the old runtime retired then and closed what it served: the SDK handler serving the first
    // call (an empty 499), the replaced upstream's process serving the second (stdin closed, SIGTERM 2 s later).
    await gateway.reload(config({ timeoutMs: 30_000 }, 100));
    const kept = call('wait', { ms: 1500 }, true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await gateway.reload(config({ timeoutMs: 30_000 }, 100));
    const replaced = call('wait', { ms: 3500 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await gateway.reload(config({ timeoutMs: 30_000, args: [SERVER, '--third'] }, 100))).upstreams).toEqual([{ name: 'pid', decision: 'replace' }]);
    for (const answer of await Promise.all([kept, replaced])) {
      expect(answer.isError, answer.content[0]?.text).toBeFalsy();
      expect(answer.content[0]!.text).toBe('done');
    }
  });
});
