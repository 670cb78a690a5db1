/**
 * Issue 13 on config/three-upstreams.yaml, the configuration the issue was found with: a made-up key,
 * `Bearer nobody` and the identity key (no files:read) can neither read nor write a file through the
 * filesystem upstream on either surface; nothing they send reaches any of the three upstreams.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { DEMO_KEYS, connectV1, connectV2 } from '../../helpers/clients.ts';
import { startHoldingProxy, type HoldingProxy } from '../../helpers/holding-proxy.ts';
import {
  ACTING_METHODS,
  ERAS,
  UNKNOWN_BEARER,
  REFUSALS_UNBOUNDED,
  UNKNOWN_KEY,
  expectChallenge,
  expectHiddenReadWriteRefused,
  forwardedCalls,
  rawRequest,
  rpcMessage,
  sixMethods,
  upstreamRequests,
  withCredential,
} from '../../helpers/enforcement.ts';
import { textOf } from '../../helpers/call-results.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { startEverythingServer, type EverythingServer } from '../../fixtures/everything-server.ts';

const REPORT = 'quarterly numbers\n';
let platform: Awaited<ReturnType<typeof startPlatform>>;
let cpzai: Awaited<ReturnType<typeof startUpstreamServer>>;
let everything: EverythingServer;
let cpzaiProxy: HoldingProxy;
let everythingProxy: HoldingProxy;
let root: string;
let gw: ConfigGateway;
beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gateway-three-enforce-')));
  writeFileSync(join(root, 'report.txt'), REPORT);
  platform = await startPlatform({ port: 0 });
  cpzai = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  everything = await startEverythingServer();
  cpzaiProxy = await startHoldingProxy(new URL(cpzai.url).origin);
  everythingProxy = await startHoldingProxy(new URL(everything.url).origin);
  gw = await startConfigGateway('three-upstreams', {
    ...REFUSALS_UNBOUNDED,
    GATEWAY_UPSTREAMS_0_URL: `${cpzaiProxy.url}/mcp`,
    GATEWAY_UPSTREAMS_1_URL: `${everythingProxy.url}/mcp`,
    GATEWAY_SCOPES_ENDPOINT: `${platform.url}/v1/me`,
    FILESYSTEM_ROOT: root,
  });
  const probe = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
  await probe.listTools();
  await probe.close();
});
afterAll(async () => {
  await gw?.close();
  await everythingProxy?.close();
  await cpzaiProxy?.close();
  await everything?.close();
  await cpzai?.close();
  await platform?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const acting = () => [...forwardedCalls(cpzaiProxy.received), ...forwardedCalls(everythingProxy.received)].filter((c) => ACTING_METHODS.has(c.method)).length;
const fileCalls = () => upstreamRequests(gw.gateway.url, 'filesystem', 'tools/call');

describe('config/three-upstreams.yaml: unknown credentials', () => {
  it('get 401 with the RFC 9728 challenge on all six methods in both eras; no upstream receives anything', async () => {
    const [actingBefore, filesBefore] = [acting(), await fileCalls()];
    const path = join(root, 'nobody.txt');
    for (const credential of [UNKNOWN_KEY, UNKNOWN_BEARER]) {
      for (const era of ERAS) {
        for (const m of [
          ...sixMethods({
            tool: 'filesystem__read_text_file',
            args: { path: join(root, 'report.txt') },
            uri: 'cpzai://guides/permissions',
            prompt: 'everything__simple-prompt',
          }),
          ...sixMethods({
            tool: 'filesystem__write_file',
            args: { path, content: 'x' },
            uri: 'demo://resource/dynamic/text/1',
            prompt: 'cpzai__review_portfolio',
          }),
        ]) {
          await expectChallenge(await rawRequest(gw.gateway.url, m.path, era, m.method, m.params, credential), gw.gateway.url, m.path, credential);
        }
      }
      expect(withCredential(cpzaiProxy.received, credential)).toEqual([]);
    }
    await expect(connectV2(gw.compactUrl, UNKNOWN_KEY)).rejects.toThrow(/401|unauthori[sz]ed/i);
    expect(existsSync(path)).toBe(false);
    expect(acting()).toBe(actingBefore);
    expect(await fileCalls()).toBe(filesBefore);
  });
});

describe('config/three-upstreams.yaml: the identity key (lacks files:read)', () => {
  it('cannot read or write a file on either surface; each refusal looks like an unknown tool; nothing reaches the upstreams', async () => {
    const [actingBefore, filesBefore] = [acting(), await fileCalls()];
    const path = join(root, 'identity.txt');
    await expectHiddenReadWriteRefused({
      baseUrl: gw.gateway.url,
      credential: DEMO_KEYS.identity,
      read: { name: 'filesystem__read_text_file', arguments: { path: join(root, 'report.txt') } },
      write: { name: 'filesystem__write_file', arguments: { path, content: 'x' } },
      secret: REPORT.trim(),
      also: ({ read, missing, write }) => {
        // No other filesystem tool is named in a refusal.
        for (const answer of [read, missing, write]) expect(JSON.stringify(answer)).not.toMatch(/filesystem__(?!read_text_filez?\b|write_file\b)/);
      },
    });
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.identity);
    try {
      const viaDispatcher = await client.callTool({ name: 'call_tool', arguments: { name: 'filesystem__directory_tree', arguments: { path: root } } });
      expect(textOf(viaDispatcher)).toContain('Unknown tool');
      // A cpzai tool outside the key's scopes: refused by the gateway, not by the platform.
      const accounts = await client.callTool({ name: 'call_tool', arguments: { name: 'cpzai__get_bars', arguments: { symbols: ['AAPL'] } } });
      expect(textOf(accounts)).toContain('Unknown tool: cpzai__get_bars');
    } finally {
      await client.close();
    }
    expect(existsSync(path)).toBe(false);
    expect(acting()).toBe(actingBefore);
    expect(await fileCalls()).toBe(filesBefore);
  });
});

describe('config/three-upstreams.yaml: in-scope calls', () => {
  it('still work on all three upstreams', async () => {
    const [data, full] = await Promise.all([connectV1(gw.mcpUrl, DEMO_KEYS.data), connectV2(gw.compactUrl, DEMO_KEYS.full)]);
    try {
      expect((await data.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(root, 'report.txt') } })).structuredContent).toEqual({
        content: REPORT,
      });
      expect(textOf(await data.callTool({ name: 'everything__echo', arguments: { message: 'in scope' } }))).toBe('Echo: in scope');
      expect((await data.callTool({ name: 'cpzai__list_accounts', arguments: {} })).isError).toBeFalsy();
      const tree = await full.callTool({ name: 'call_tool', arguments: { name: 'filesystem__directory_tree', arguments: { path: root } } });
      expect(textOf(tree)).toContain('report.txt');
    } finally {
      await Promise.all([data.close(), full.close()]);
    }
  });
});

describe('config/three-upstreams.yaml: writing files needs files:write, which no platform key holds', () => {
  it('refuses a write from the full and the data key as an unknown tool; no file appears, nothing reaches the server', async () => {
    const filesBefore = await fileCalls();
    for (const key of [DEMO_KEYS.full, DEMO_KEYS.data]) {
      const path = join(root, `${key['x-cpz-key']}.txt`);
      const answer = await rpcMessage(
        await rawRequest(gw.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'filesystem__write_file', arguments: { path, content: 'x' } }, key),
      );
      expect(answer.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: filesystem__write_file') });
      expect(existsSync(path)).toBe(false);
    }
    expect(await fileCalls()).toBe(filesBefore);
  });
});
