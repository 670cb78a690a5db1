/**
 * A stdio server busy with a call (computing without yielding, or writing a large result) reads no other
 * message meanwhile, the health probe's ping included: its silent probes do not count while a request is in
 * flight, so the call completes on the same process (it was killed after two probes: the call failed with
 * CONNECTION_CLOSED and the server's state was lost; try-out). The call's own timeoutMs still bounds a hang.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { ANY_BEARER } from '../../helpers/stack.ts';

const SERVER = new URL('../../fixtures/stdio-pid-server.mjs', import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), 'stdio-busy-'));
const FILE = join(dir, 'gateway.yaml');
// Probes every 100 ms that wait 50 ms: a one-second computation misses about ten of them.
writeFileSync(
  FILE,
  stringify({ upstreams: [{ name: 'pid', command: process.execPath, args: [SERVER], timeoutMs: 30_000, health: { intervalMs: 100, timeoutMs: 50 } }] }),
);

let gateway: RunningGateway;
beforeAll(async () => {
  const config = loadConfig({ path: FILE, env: {}, overrides: { listen: { host: '127.0.0.1', port: 0 }, anonymous: true, log: { level: 'silent' } } });
  delete config.scopes.endpoint;
  gateway = await startGateway(config);
});
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a stdio server busy with a call', () => {
  it('is not taken for a hung one: the call completes on the same process', async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ANY_BEARER);
    try {
      const call = async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
      const before = (await call('pid')).content[0]!.text;
      const busy = await call('busy', { ms: 1000 });
      expect(busy.isError, busy.content[0]?.text).toBeFalsy();
      expect(busy.content[0]!.text).toBe('done');
      expect((await call('pid')).content[0]!.text).toBe(before);
    } finally {
      await client.close();
    }
  });
});
