/**
 * Issue 13 on config/everything.yaml as committed: server-everything checks nothing, so the gateway
 * does it all, from the API keys defined in the config itself (demo keys, secrets from the
 * environment, stored as keyed digests). A recording proxy in front of the server shows what reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, connectV1, connectV2 } from '../../helpers/clients.ts';
import { startHoldingProxy, type HoldingProxy } from '../../helpers/holding-proxy.ts';
import {
  ACTING_METHODS,
  ERAS,
  UNKNOWN_BEARER,
  UNKNOWN_KEY,
  expectChallenge,
  forwardedCalls,
  nearestOf,
  rawRequest,
  refusalShape,
  rpcMessage,
  sixMethods,
} from '../../helpers/enforcement.ts';
import { textOf } from '../../helpers/call-results.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { startEverythingServer, type EverythingServer } from '../../fixtures/everything-server.ts';

let everything: EverythingServer;
let proxy: HoldingProxy;
let gw: ConfigGateway;
beforeAll(async () => {
  everything = await startEverythingServer();
  proxy = await startHoldingProxy(new URL(everything.url).origin);
  gw = await startConfigGateway('everything', { GATEWAY_UPSTREAMS_0_URL: `${proxy.url}/mcp` });
});
afterAll(async () => {
  await gw?.close();
  await proxy?.close();
  await everything?.close();
});

const acting = () => forwardedCalls(proxy.received).filter((c) => ACTING_METHODS.has(c.method));
const TEXT_RESOURCE = 'demo://resource/dynamic/text/1';

describe('config/everything.yaml: an unknown credential', () => {
  it('gets 401 with the RFC 9728 challenge on all six methods in both eras; the server receives nothing', async () => {
    const before = acting().length;
    for (const credential of [UNKNOWN_KEY, UNKNOWN_BEARER, { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'wrong-secret' }]) {
      for (const era of ERAS) {
        for (const m of sixMethods({ tool: 'echo', args: { message: 'x' }, uri: TEXT_RESOURCE, prompt: 'simple-prompt' })) {
          await expectChallenge(await rawRequest(gw.gateway.url, m.path, era, m.method, m.params, credential), gw.gateway.url, m.path, credential);
        }
      }
    }
    await expect(connectV2(gw.mcpUrl, UNKNOWN_KEY)).rejects.toThrow(/401|unauthori[sz]ed/i);
    await expect(connectV1(gw.mcpUrl, UNKNOWN_BEARER)).rejects.toThrow(/401|unauthori[sz]ed/i);
    expect(acting().length).toBe(before);
  });

  it('gets 401 without any credential as well', async () => {
    const response = await rawRequest(gw.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'echo', arguments: { message: 'x' } }, {});
    await expectChallenge(response, gw.gateway.url, '/mcp');
  });
});

describe('config/everything.yaml: out-of-scope requests', () => {
  it("a tool outside the key's scopes answers exactly as an unknown tool, directly and through call_tool, and never reaches the server", async () => {
    const before = acting().length;
    for (const era of ERAS) {
      // get-env needs everything:admin; the data key holds everything:read only.
      const hidden = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'tools/call', { name: 'get-env', arguments: {} }, DEMO_KEYS.data));
      const missing = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'tools/call', { name: 'get-enz', arguments: {} }, DEMO_KEYS.data));
      expect(hidden.error?.code).toBe(-32602);
      expect(refusalShape(hidden, 'get-env')).toEqual(refusalShape(missing, 'get-enz'));
      expect(nearestOf(hidden)).not.toContain('get-env');
      expect(nearestOf(missing)).not.toContain('get-env');
      const write = await rpcMessage(
        await rawRequest(gw.gateway.url, '/mcp/compact', era, 'tools/call', { name: 'toggle-simulated-logging', arguments: {} }, DEMO_KEYS.data),
      );
      expect(write.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: toggle-simulated-logging') });
    }
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.identity);
    try {
      const viaDispatcher = await client.callTool({ name: 'call_tool', arguments: { name: 'get-tiny-image', arguments: { nope: true } } });
      expect(viaDispatcher.isError).toBe(true);
      expect(textOf(viaDispatcher)).toContain('Unknown tool: get-tiny-image');
      expect(JSON.stringify(viaDispatcher)).not.toContain('input_schema');
    } finally {
      await client.close();
    }
    expect(acting().length).toBe(before);
  });

  it("resources/read and prompts/get outside the key's scopes answer as a missing resource or prompt, and never reach the server", async () => {
    const before = acting().length;
    for (const era of ERAS) {
      const hidden = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'resources/read', { uri: TEXT_RESOURCE }, DEMO_KEYS.identity));
      const missing = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'resources/read', { uri: 'demo://nowhere/1' }, DEMO_KEYS.identity));
      expect(hidden.error?.code).toBe(era === 'legacy' ? -32002 : -32602);
      expect(refusalShape(hidden, TEXT_RESOURCE)).toEqual(refusalShape(missing, 'demo://nowhere/1'));
      const prompt = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'prompts/get', { name: 'simple-prompt' }, DEMO_KEYS.identity));
      const noPrompt = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', era, 'prompts/get', { name: 'simple-prompz' }, DEMO_KEYS.identity));
      expect(prompt.error?.code).toBe(-32602);
      expect(refusalShape(prompt, 'simple-prompt')).toEqual(refusalShape(noPrompt, 'simple-prompz'));
    }
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.identity);
    try {
      expect((await client.listTools()).tools).toEqual([]);
    } finally {
      await client.close();
    }
    expect(acting().length).toBe(before);
  });
});

describe('config/everything.yaml: in-scope requests', () => {
  it('still work: tools, resources and prompts for the data key, state-changing tools for the full key', async () => {
    const [data, full] = await Promise.all([connectV2(gw.mcpUrl, DEMO_KEYS.data), connectV1(gw.mcpUrl, DEMO_KEYS.full)]);
    try {
      expect(textOf(await data.callTool({ name: 'echo', arguments: { message: 'allowed' } }))).toBe('Echo: allowed');
      expect((await data.readResource({ uri: TEXT_RESOURCE })).contents[0]!.uri).toBe(TEXT_RESOURCE);
      expect((await data.getPrompt({ name: 'simple-prompt' })).messages.length).toBeGreaterThan(0);
      const toggled = await full.callTool({ name: 'toggle-simulated-logging', arguments: {} });
      expect(toggled.isError).toBeFalsy();
    } finally {
      await Promise.all([data.close(), full.close()]);
    }
    expect(forwardedCalls(proxy.received).some((c) => c.method === 'tools/call' && c.name === 'toggle-simulated-logging')).toBe(true);
  });

  it("keep get-env (the server's environment) from every key: everything:admin is held by none", async () => {
    const before = forwardedCalls(proxy.received).length;
    for (const key of [DEMO_KEYS.full, DEMO_KEYS.data]) {
      const hidden = await rpcMessage(await rawRequest(gw.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'get-env', arguments: {} }, key));
      expect(hidden.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: get-env') });
    }
    expect(forwardedCalls(proxy.received).length).toBe(before);
  });
});
