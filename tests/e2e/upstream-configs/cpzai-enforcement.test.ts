/**
 * Issue 13 on config/cpzai.yaml as committed (addresses moved to free ports): the gateway itself
 * authenticates every MCP request on both surfaces and authorises every call before the CPZAI upstream
 * is contacted, although the platform behind it would check the call too. A recording proxy between
 * the gateway and the upstream shows what reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
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
  withCredential,
} from '../../helpers/enforcement.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { textOf } from '../../helpers/call-results.ts';

let platform: Awaited<ReturnType<typeof startPlatform>>;
let upstream: Awaited<ReturnType<typeof startUpstreamServer>>;
let proxy: HoldingProxy;
let gw: ConfigGateway;
beforeAll(async () => {
  platform = await startPlatform({ port: 0 });
  upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  proxy = await startHoldingProxy(new URL(upstream.url).origin);
  gw = await startConfigGateway('cpzai', { GATEWAY_UPSTREAMS_0_URL: `${proxy.url}/mcp`, GATEWAY_SCOPES_ENDPOINT: `${platform.url}/v1/me` });
});
afterAll(async () => {
  await gw?.close();
  await proxy?.close();
  await upstream?.close();
  await platform?.close();
});

const callsFor = (name: string) => forwardedCalls(proxy.received).filter((c) => c.method === 'tools/call' && c.name === name);
const SIX = sixMethods({ tool: 'get_profile', uri: 'cpzai://guides/permissions', prompt: 'review_portfolio' });

describe('config/cpzai.yaml: an unknown credential', () => {
  for (const [label, credential] of [
    ['key', UNKNOWN_KEY],
    ['bearer', UNKNOWN_BEARER],
  ] as const) {
    it(`(${label}) gets 401 with the RFC 9728 challenge on all six methods in both eras, and the upstream receives nothing`, async () => {
      const actingBefore = forwardedCalls(proxy.received).filter((c) => ACTING_METHODS.has(c.method)).length;
      for (const era of ERAS) {
        for (const m of SIX) {
          const response = await rawRequest(gw.gateway.url, m.path, era, m.method, m.params, credential);
          await expectChallenge(response, gw.gateway.url, m.path, credential);
        }
      }
      await expect(connectV2(gw.mcpUrl, credential)).rejects.toThrow(/401|unauthori[sz]ed/i);
      await expect(connectV1(gw.compactUrl, credential)).rejects.toThrow(/401|unauthori[sz]ed/i);
      expect(withCredential(proxy.received, credential)).toEqual([]);
      expect(forwardedCalls(proxy.received).filter((c) => ACTING_METHODS.has(c.method)).length).toBe(actingBefore);
    });
  }

  it('(scheme case, extra spaces) is the same unknown credential: 401 on tools/call, never forwarded', async () => {
    for (const authorization of ['bearer nobody', 'BEARER    nobody', ' Bearer nobody ']) {
      const response = await rawRequest(gw.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'get_profile', arguments: {} }, { authorization });
      await expectChallenge(response, gw.gateway.url, '/mcp', { authorization });
    }
    expect(withCredential(proxy.received, UNKNOWN_BEARER)).toEqual([]);
  });
});

describe('config/cpzai.yaml: out-of-scope calls', () => {
  it('a direct call of a tool the identity key cannot see answers exactly as an unknown tool, on both surfaces, and never reaches the upstream', async () => {
    for (const path of ['/mcp', '/mcp/compact'] as const) {
      for (const era of ERAS) {
        const hidden = await rpcMessage(
          await rawRequest(gw.gateway.url, path, era, 'tools/call', { name: 'list_accounts', arguments: {} }, DEMO_KEYS.identity),
        );
        const missing = await rpcMessage(
          await rawRequest(gw.gateway.url, path, era, 'tools/call', { name: 'list_accountz', arguments: {} }, DEMO_KEYS.identity),
        );
        expect(hidden.error?.code).toBe(-32602);
        expect(refusalShape(hidden, 'list_accounts')).toEqual(refusalShape(missing, 'list_accountz'));
        for (const name of [...nearestOf(hidden), ...nearestOf(missing)]) expect(name).toBe('get_profile');
      }
    }
    const data = await rpcMessage(
      await rawRequest(
        gw.gateway.url,
        '/mcp',
        'modern',
        'tools/call',
        { name: 'place_order', arguments: { account_id: 'x', symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 } },
        DEMO_KEYS.data,
      ),
    );
    expect(data.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: place_order') });
    expect(callsFor('list_accounts')).toEqual([]);
    expect(callsFor('place_order')).toEqual([]);
  });

  it('call_tool refuses a hidden tool as unknown, bad arguments included, without its schema', async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.identity);
    try {
      const hidden = await client.callTool({ name: 'call_tool', arguments: { name: 'get_bars', arguments: { symbols: 42 } } });
      const missing = await client.callTool({ name: 'call_tool', arguments: { name: 'get_barz', arguments: { symbols: 42 } } });
      expect(hidden.isError).toBe(true);
      expect(refusalShape({ result: hidden as Record<string, unknown> }, 'get_bars')).toEqual(
        refusalShape({ result: missing as Record<string, unknown> }, 'get_barz'),
      );
      expect(JSON.stringify(hidden)).not.toMatch(/input_schema|symbols/);
    } finally {
      await client.close();
    }
    expect(callsFor('get_bars')).toEqual([]);
  });
});

describe('config/cpzai.yaml: in-scope calls', () => {
  it('still work directly and through call_tool, in both eras', async () => {
    const [identity, data, compact] = await Promise.all([
      connectV2(gw.mcpUrl, DEMO_KEYS.identity),
      connectV1(gw.mcpUrl, DEMO_KEYS.data),
      connectV2(gw.compactUrl, DEMO_KEYS.data),
    ]);
    try {
      const profile = await identity.callTool({ name: 'get_profile', arguments: {} });
      expect(profile.isError).toBeFalsy();
      expect(profile.structuredContent).toMatchObject({ data: expect.any(Object) });
      const accounts = await data.callTool({ name: 'list_accounts', arguments: {} });
      expect(accounts.isError).toBeFalsy();
      const files = await compact.callTool({ name: 'call_tool', arguments: { name: 'list_data_files', arguments: {} } });
      expect(files.isError, textOf(files)).toBeFalsy();
    } finally {
      await Promise.all([identity.close(), data.close(), compact.close()]);
    }
    expect(callsFor('get_profile').length).toBeGreaterThan(0);
    expect(callsFor('list_data_files').length).toBeGreaterThan(0);
  });
});
