/**
 * config/cpzai.yaml as committed (only the addresses moved to free ports): the reference stack through
 * the gateway, names exactly as the upstream gives them, and an upstream restart the gateway rides out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { DATA_KEY_TOOLS, DEMO_KEYS, connectV1, connectV2, namesOf, withoutClientHints } from '../../helpers/clients.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { textOf } from '../../helpers/call-results.ts';
import { eventually } from '../../helpers/wait.ts';

let platform: Awaited<ReturnType<typeof startPlatform>>;
let upstream: Awaited<ReturnType<typeof startUpstreamServer>>;
let gw: ConfigGateway;
beforeAll(async () => {
  platform = await startPlatform({ port: 0 });
  upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  gw = await startConfigGateway('cpzai', { GATEWAY_UPSTREAMS_0_URL: upstream.url, GATEWAY_SCOPES_ENDPOINT: `${platform.url}/v1/me` });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await platform?.close();
});

describe('config/cpzai.yaml', () => {
  it("serves each demo key exactly its tools, under the upstream's own names, to v2 and v1 clients", async () => {
    const [full, data, identity] = await Promise.all([
      connectV2(gw.mcpUrl, DEMO_KEYS.full),
      connectV1(gw.mcpUrl, DEMO_KEYS.data),
      connectV2(gw.mcpUrl, DEMO_KEYS.identity),
    ]);
    const direct = await connectV2(upstream.url, DEMO_KEYS.full);
    try {
      const listed = await full.listTools();
      expect(withoutClientHints(listed.tools)).toEqual((await direct.listTools()).tools);
      expect(namesOf(await data.listTools())).toEqual(DATA_KEY_TOOLS);
      expect(namesOf(await identity.listTools())).toEqual(['get_profile']);
    } finally {
      await Promise.all([full.close(), data.close(), identity.close(), direct.close()]);
    }
  });

  it('answers a call as the upstream does, and lists search_tools and call_tool on /mcp/compact', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    const compact = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    const direct = await connectV2(upstream.url, DEMO_KEYS.full);
    try {
      const [viaGateway, straight] = await Promise.all([
        client.callTool({ name: 'get_profile', arguments: {} }),
        direct.callTool({ name: 'get_profile', arguments: {} }),
      ]);
      expect(viaGateway.structuredContent).toEqual(straight.structuredContent);
      expect(namesOf(await compact.listTools())).toEqual(expect.arrayContaining(['search_tools', 'call_tool', 'list_accounts', 'place_order']));
    } finally {
      await Promise.all([client.close(), compact.close(), direct.close()]);
    }
  });

  it('answers isError while the upstream is down and serves again once it is back on its address, without a gateway restart', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      const port = new URL(upstream.url).port;
      await upstream.close();
      const down = await client.callTool({ name: 'get_profile', arguments: {} });
      expect(down.isError).toBe(true);
      expect(textOf(down)).toMatch(/upstream cpzai is (unreachable|unavailable)/);
      upstream = await startUpstreamServer({ platformUrl: platform.url, port: Number(port) });
      const back = await eventually(
        () => client.callTool({ name: 'get_profile', arguments: {} }),
        (r) => !r.isError,
      );
      expect(back.structuredContent).toMatchObject({ data: expect.any(Object) });
      expect(namesOf(await client.listTools())).toHaveLength(34);
    } finally {
      await client.close();
    }
  });
});
