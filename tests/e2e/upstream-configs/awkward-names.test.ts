/**
 * Colliding and awkward tool names from two replay upstreams (`search` in both, `get-catalog-entity`,
 * `a.b/c` next to `a_b_c`, a 70-character name, a CJK name): every exposed name is valid, unique and
 * stable (across gateway restarts and while the other upstream is down), and each one is callable and
 * reaches its own tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORIGIN_META_KEY } from '../../../gateway/catalog/catalog-merge.ts';
import { EXPOSED_NAME } from '../../../gateway/catalog/naming.ts';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { connectV1, connectV2 } from '../../helpers/clients.ts';
import { eventually } from '../../helpers/wait.ts';
import { ANY_BEARER, startGatewayWith } from '../../helpers/stack.ts';

const SEVENTY = `fetch_${'very_'.repeat(11)}long_name`; // 70 characters
const ONE = ['search', 'get-catalog-entity', 'a.b/c', 'a_b_c', SEVENTY, '目录搜索'];
const TWO = ['search'];
const tool = (name: string) => ({
  name,
  description: `The tool called ${name}`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  annotations: { readOnlyHint: true },
});

let one: ReplayUpstream;
let two: ReplayUpstream;
const gateways: RunningGateway[] = [];
async function gateway(): Promise<RunningGateway> {
  // No scope endpoint: nothing is filtered.
  const started = await startGatewayWith({
    noScopeEndpoint: true,
    overrides: {
      // No scope source and upstreams that never see a credential: unauthenticated by choice.
      anonymous: true,
      upstreams: [
        { name: 'one', url: one.url, forwardCredentials: false },
        { name: 'two', url: two.url, forwardCredentials: false, restart: { maxDelayMs: 500 } },
      ],
    },
  });
  gateways.push(started);
  return started;
}

type Listed = { name: string; _meta?: Record<string, unknown> };
const originOf = (t: Listed) => t._meta?.[ORIGIN_META_KEY] as { upstream: string; name: string };
const mapping = (tools: Listed[]) => Object.fromEntries(tools.map((t) => [`${originOf(t).upstream}/${originOf(t).name}`, t.name]));

let first: Record<string, string>;
beforeAll(async () => {
  one = await startReplayUpstream({ tools: ONE.map(tool), name: 'one' });
  two = await startReplayUpstream({ tools: TWO.map(tool), name: 'two' });
  const gw = await gateway();
  const client = await connectV2(`${gw.url}/mcp`, ANY_BEARER);
  first = mapping((await client.listTools()).tools);
  await client.close();
});
afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await one?.close();
  await two?.close();
});

describe('awkward and colliding names from two upstreams', () => {
  it('gives all 7 tools valid, unique names; `search` of each upstream stays apart', () => {
    expect(SEVENTY).toHaveLength(70);
    const names = Object.values(first);
    expect(names).toHaveLength(7);
    expect(new Set(names).size).toBe(7);
    for (const name of names) expect(name).toMatch(EXPOSED_NAME);
    expect(first['one/search']).toBe('one__search');
    expect(first['two/search']).toBe('two__search');
    expect(first['one/get-catalog-entity']).toBe('one__get-catalog-entity');
    expect(first['one/a_b_c']).toBe('one__a_b_c');
    expect(first['one/a.b/c']).toMatch(/^one__a_b_c_[0-9a-f]{8}$/);
    expect(first[`one/${SEVENTY}`]).toHaveLength(64);
    expect(first['one/目录搜索']).toMatch(/^one__tool_[0-9a-f]{8}$/);
  });

  it('makes each exposed name callable: the call reaches its own upstream under its own name', async () => {
    const [modern, legacy] = await Promise.all([connectV2(`${gateways[0]!.url}/mcp`, ANY_BEARER), connectV1(`${gateways[0]!.url}/mcp`, ANY_BEARER)]);
    try {
      for (const [origin, exposed] of Object.entries(first)) {
        const [upstream, ...rest] = origin.split('/');
        const upstreamName = rest.join('/');
        for (const client of [modern, legacy]) {
          const result = await client.callTool({ name: exposed, arguments: { q: upstream } });
          expect(result.isError).toBeFalsy();
          expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({ tool: upstreamName, arguments: { q: upstream } });
        }
      }
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });

  it('gives the same names after a gateway restart', async () => {
    const again = await gateway();
    const client = await connectV2(`${again.url}/mcp`, ANY_BEARER);
    try {
      expect(mapping((await client.listTools()).tools)).toEqual(first);
    } finally {
      await client.close();
    }
  });

  it("keeps the names of one upstream while the other is down, and the other's when it is back", async () => {
    const client = await connectV2(`${gateways[0]!.url}/mcp`, ANY_BEARER);
    try {
      const port = Number(new URL(two.url).port);
      await two.close();
      const down = await client.callTool({ name: 'two__search', arguments: {} });
      expect(down.isError).toBe(true);
      const withoutTwo = await eventually(
        () => client.listTools(),
        (l) => !l.tools.some((t) => t.name === 'two__search'),
      );
      const expectedOne = Object.fromEntries(Object.entries(first).filter(([origin]) => origin.startsWith('one/')));
      expect(mapping(withoutTwo.tools)).toEqual(expectedOne);

      two = await startReplayUpstream({ tools: TWO.map(tool), name: 'two', port });
      const back = await eventually(
        () => client.listTools(),
        (l) => l.tools.some((t) => t.name === 'two__search'),
      );
      expect(mapping(back.tools)).toEqual(first);
    } finally {
      await client.close();
    }
  });
});
