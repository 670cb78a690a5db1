/**
 * Issue 13 on config/filesystem.yaml as committed: server-filesystem (stdio) checks nothing, so the
 * gateway authenticates callers against the API keys of the config and authorises every call itself.
 * What reached the server is read from the gateway's upstream request counter and from the disk.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, connectV1, connectV2 } from '../../helpers/clients.ts';
import {
  ERAS,
  UNKNOWN_BEARER,
  REFUSALS_UNBOUNDED,
  UNKNOWN_KEY,
  expectChallenge,
  expectHiddenReadWriteRefused,
  rawRequest,
  rpcMessage,
  sixMethods,
  upstreamRequests,
} from '../../helpers/enforcement.ts';
import { textOf } from '../../helpers/call-results.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';

const SECRET_TEXT = 'the quarterly numbers nobody may read';
let root: string;
let gw: ConfigGateway;
beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gateway-fs-enforce-')));
  writeFileSync(join(root, 'secret.txt'), SECRET_TEXT);
  gw = await startConfigGateway('filesystem', { FILESYSTEM_ROOT: root, ...REFUSALS_UNBOUNDED });
});
afterAll(async () => {
  await gw?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const calls = () => upstreamRequests(gw.gateway.url, 'filesystem', 'tools/call');

describe('config/filesystem.yaml: an unknown credential', () => {
  it('gets 401 with the RFC 9728 challenge on all six methods in both eras; the server gets no call', async () => {
    // The catalogue must be loaded for a call to be forwardable at all: a valid key lists first.
    const probe = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    await probe.listTools();
    await probe.close();
    const before = await calls();
    const path = join(root, 'unknown.txt');
    for (const credential of [UNKNOWN_KEY, UNKNOWN_BEARER]) {
      for (const era of ERAS) {
        for (const m of [
          ...sixMethods({ tool: 'read_text_file', args: { path: join(root, 'secret.txt') }, uri: `file://${root}/secret.txt`, prompt: 'any' }),
          ...sixMethods({ tool: 'write_file', args: { path, content: 'x' }, uri: `file://${root}/secret.txt`, prompt: 'any' }),
        ]) {
          await expectChallenge(await rawRequest(gw.gateway.url, m.path, era, m.method, m.params, credential), gw.gateway.url, m.path, credential);
        }
      }
    }
    await expect(connectV2(gw.mcpUrl, UNKNOWN_BEARER)).rejects.toThrow(/401|unauthori[sz]ed/i);
    expect(existsSync(path)).toBe(false);
    expect(await calls()).toBe(before);
  });
});

describe('config/filesystem.yaml: the identity key (no files scopes)', () => {
  it('cannot read or write a file on either surface, directly or through call_tool; refusals look like unknown tools', async () => {
    const before = await calls();
    const path = join(root, 'identity.txt');
    await expectHiddenReadWriteRefused({
      baseUrl: gw.gateway.url,
      credential: DEMO_KEYS.identity,
      read: { name: 'read_text_file', arguments: { path: join(root, 'secret.txt') } },
      write: { name: 'write_file', arguments: { path, content: 'x' } },
      secret: SECRET_TEXT,
      also: async ({ era, surface }) => {
        // Bad arguments to a hidden tool: still "unknown", never its schema.
        const bad = await rpcMessage(
          await rawRequest(gw.gateway.url, surface, era, 'tools/call', { name: 'write_file', arguments: { path: 42 } }, DEMO_KEYS.identity),
        );
        expect(JSON.stringify(bad)).not.toMatch(/content|inputSchema|input_schema/);
        expect(JSON.stringify(bad)).not.toContain(SECRET_TEXT);
      },
    });
    const client = await connectV1(gw.compactUrl, DEMO_KEYS.identity);
    try {
      const viaDispatcher = await client.callTool({ name: 'call_tool', arguments: { name: 'directory_tree', arguments: { path: root } } });
      expect(viaDispatcher.isError).toBe(true);
      expect(textOf(viaDispatcher)).toContain('Unknown tool: directory_tree');
      expect(textOf(viaDispatcher)).not.toContain('secret.txt');
    } finally {
      await client.close();
    }
    expect(existsSync(path)).toBe(false);
    expect(await calls()).toBe(before);
  });
});

describe('config/filesystem.yaml: in-scope calls', () => {
  it('the data key reads but cannot write; the full key writes', async () => {
    const [data, full] = await Promise.all([connectV2(gw.mcpUrl, DEMO_KEYS.data), connectV2(gw.mcpUrl, DEMO_KEYS.full)]);
    const path = join(root, 'written.txt');
    try {
      expect((await data.callTool({ name: 'read_text_file', arguments: { path: join(root, 'secret.txt') } })).structuredContent).toEqual({
        content: SECRET_TEXT,
      });
      await expect(data.callTool({ name: 'write_file', arguments: { path, content: 'data key' } })).rejects.toMatchObject({ code: -32602 });
      expect(existsSync(path)).toBe(false);
      const written = await full.callTool({ name: 'write_file', arguments: { path, content: 'full key' } });
      expect(written.isError).toBeFalsy();
      expect(existsSync(path)).toBe(true);
    } finally {
      await Promise.all([data.close(), full.close()]);
    }
  });
});
