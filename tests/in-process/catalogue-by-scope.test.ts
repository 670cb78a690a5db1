/**
 * /mcp against the reference stack (platform + CPZAI upstream + gateway) through real MCP clients
 * (the gateway and the upstream in process, the platform over HTTP): each demo key sees exactly the tools its scopes allow, in both protocol eras, and
 * everything else passes through unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_KEY_TOOLS, DEMO_KEYS, DEMO_SECRETS, connectV1, connectV2, namesOf, withoutClientHints, type DemoKey } from '../helpers/clients.ts';
import { inProcessReferenceStack, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await inProcessReferenceStack({ platformProxy: true });
});
afterAll(async () => {
  await stack?.close();
});

const expected: Record<DemoKey, (names: string[]) => void> = {
  full: (names) => expect(names).toHaveLength(34),
  data: (names) => expect(names).toEqual(DATA_KEY_TOOLS),
  identity: (names) => expect(names).toEqual(['get_profile']),
};

describe.each(Object.keys(DEMO_KEYS) as DemoKey[])('tools/list with the %s key', (key) => {
  it('lists exactly the tools its scopes allow through the v2 client pinned to 2026-07-28', async () => {
    const client = await connectV2(stack.mcpUrl, DEMO_KEYS[key]);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expected[key](namesOf(await client.listTools()));
    } finally {
      await client.close();
    }
  });

  it('lists exactly the tools its scopes allow through the v1 SDK client (legacy initialize)', async () => {
    const client = await connectV1(stack.mcpUrl, DEMO_KEYS[key]);
    try {
      expect(client.getServerVersion()?.name).toBe('mcp-catalog-gateway');
      expected[key](namesOf(await client.listTools()));
    } finally {
      await client.close();
    }
  });
});

describe('the full surface', () => {
  it('advertises the full key 34 tools, the same definitions the upstream serves', async () => {
    const [viaGateway, direct] = await Promise.all([connectV2(stack.mcpUrl, DEMO_KEYS.full), connectV2(stack.upstreamUrl, DEMO_KEYS.full)]);
    try {
      const [a, b] = await Promise.all([viaGateway.listTools(), direct.listTools()]);
      expect(withoutClientHints(a.tools)).toEqual(b.tools);
    } finally {
      await Promise.all([viaGateway.close(), direct.close()]);
    }
  });

  it('passes resources (3) and prompts (2) through, with the same content as the upstream', async () => {
    const [viaGateway, direct] = await Promise.all([connectV2(stack.mcpUrl, DEMO_KEYS.full), connectV2(stack.upstreamUrl, DEMO_KEYS.full)]);
    try {
      const resources = await viaGateway.listResources();
      expect(resources.resources).toHaveLength(3);
      expect((await viaGateway.listPrompts()).prompts).toHaveLength(2);
      const uri = resources.resources[0]!.uri;
      // Each server stamps its own serverInfo in _meta; everything else passes through unchanged.
      const withoutMeta = <T extends { _meta?: unknown }>(r: T) => ({ ...r, _meta: undefined });
      expect(withoutMeta(await viaGateway.readResource({ uri }))).toEqual(withoutMeta(await direct.readResource({ uri })));
      const prompt = { name: 'analyze_strategy', arguments: { strategy_id: '00000000-0000-4000-8000-000000000000' } };
      expect(withoutMeta(await viaGateway.getPrompt(prompt))).toEqual(withoutMeta(await direct.getPrompt(prompt)));
      // A protocol error the upstream answers keeps its code through the gateway.
      const bad = { name: 'analyze_strategy', arguments: { strategy_id: 'x' } };
      const directError = await direct.getPrompt(bad).catch((e: { code: number }) => e.code);
      expect(directError).toBe(-32602);
      await expect(viaGateway.getPrompt(bad)).rejects.toMatchObject({ code: directError });
    } finally {
      await Promise.all([viaGateway.close(), direct.close()]);
    }
  });

  it('returns the same tools/call result as the same call made directly upstream (v2 and v1)', async () => {
    const call = { name: 'list_accounts', arguments: { limit: 2 } };
    const [viaGateway, direct, legacy, legacyDirect] = await Promise.all([
      connectV2(stack.mcpUrl, DEMO_KEYS.full),
      connectV2(stack.upstreamUrl, DEMO_KEYS.full),
      connectV1(stack.mcpUrl, DEMO_KEYS.full),
      connectV1(stack.upstreamUrl, DEMO_KEYS.full),
    ]);
    try {
      const a = await viaGateway.callTool(call);
      const b = await direct.callTool(call);
      expect(a.isError).toBeFalsy();
      expect({ ...a, _meta: undefined }).toEqual({ ...b, _meta: undefined });
      expect(await legacy.callTool(call)).toEqual(await legacyDirect.callTool(call));
    } finally {
      await Promise.all([viaGateway, direct, legacy, legacyDirect].map((c) => c.close()));
    }
  });

  it("refuses a tool outside the caller's scopes itself, as an unknown tool: the data key's place_order never reaches the platform", async () => {
    const client = await connectV2(stack.mcpUrl, DEMO_KEYS.data);
    try {
      await expect(
        client.callTool({
          name: 'place_order',
          arguments: { account_id: '00000000-0000-4000-8000-000000000000', symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 },
        }),
      ).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool: place_order'),
      });
      // The upstream server reaches the platform through the proxy: no order was even attempted.
      expect(stack.platformProxy!.received.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/orders'))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('serves server/discover with the upstream instructions and the tools, resources and prompts capabilities', async () => {
    const [viaGateway, direct] = await Promise.all([
      connectV2(stack.mcpUrl, DEMO_KEYS.identity, 'auto'),
      connectV2(stack.upstreamUrl, DEMO_KEYS.identity, 'auto'),
    ]);
    try {
      expect(viaGateway.getInstructions()).toBe(direct.getInstructions());
      expect(Object.keys(viaGateway.getServerCapabilities() ?? {})).toEqual(expect.arrayContaining(['tools', 'resources', 'prompts']));
    } finally {
      await Promise.all([viaGateway.close(), direct.close()]);
    }
  });

  it('answers an unknown tool with JSON-RPC -32602', async () => {
    const client = await connectV2(stack.mcpUrl, DEMO_KEYS.full);
    try {
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });

  it('never writes a demo secret to its log', () => {
    expect(stack.logs.lines.length).toBeGreaterThan(0);
    for (const secret of DEMO_SECRETS) expect(stack.logs.text).not.toContain(secret);
  });
});
