/**
 * config/everything.yaml as committed (its URL moved to a free port) in front of the real
 * @modelcontextprotocol/server-everything, started from its CLI over Streamable HTTP: a 2025-era,
 * sessionful server. Tools, resources and prompts pass through both eras; the compact surface and
 * output checks work on it; a restart of the server costs the calls in flight and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { DEMO_KEYS, connectV1, connectV2, namesOf } from '../../helpers/clients.ts';
import { textOf } from '../../helpers/call-results.ts';
import { eventually } from '../../helpers/wait.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { startEverythingServer, type EverythingServer } from '../../fixtures/everything-server.ts';

let everything: EverythingServer;
let gw: ConfigGateway;
beforeAll(async () => {
  everything = await startEverythingServer();
  gw = await startConfigGateway('everything', { GATEWAY_UPSTREAMS_0_URL: everything.url, GATEWAY_UPSTREAMS_0_RESTART_MAX_DELAY_MS: '1000' });
});
afterAll(async () => {
  await gw?.close();
  await everything?.close();
});

async function direct(): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
  return client;
}

describe('config/everything.yaml', () => {
  it("lists the server's own tools, unchanged, to a 2026-07-28 client and a v1 client (the full key: all but get-env)", async () => {
    const [modern, legacy, straight] = await Promise.all([connectV2(gw.mcpUrl, DEMO_KEYS.full), connectV1(gw.mcpUrl, DEMO_KEYS.full), direct()]);
    try {
      // Compared on what both eras carry (a 2026-07-28 answer has no 2025 `execution` field).
      const shape = ({ tools }: { tools: Record<string, unknown>[] }) =>
        tools.map(({ name, description, inputSchema, outputSchema, annotations }) => ({ name, description, inputSchema, outputSchema, annotations }));
      // Every tool but get-env, which needs everything:admin: no key of the config holds it.
      const expected = shape(await straight.listTools()).filter((t) => t.name !== 'get-env');
      expect(expected.length).toBeGreaterThanOrEqual(10);
      // server-everything lists four more tools to a client declaring sampling, elicitation and roots, as
      // the gateway's upstream client does (it relays them to 2026-07-28 callers: input-bridge.ts).
      const askingTools = ['get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request', 'trigger-url-elicitation'];
      for (const listed of [shape(await modern.listTools()), shape(await legacy.listTools())]) {
        expect(listed.filter((t) => !askingTools.includes(t.name as string))).toEqual(expected);
        expect(
          listed
            .map((t) => t.name)
            .filter((n) => askingTools.includes(n as string))
            .sort(),
        ).toEqual(askingTools);
      }
    } finally {
      await Promise.all([modern.close(), legacy.close(), straight.close()]);
    }
  });

  it('calls echo and get-sum, and checks get-structured-content against its outputSchema', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'through the gateway' } }))).toBe('Echo: through the gateway');
      expect(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }))).toContain('42');
      const structured = await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
      expect(structured.isError).toBeFalsy();
      expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
    } finally {
      await client.close();
    }
  });

  it('passes resources, resource templates and prompts through', async () => {
    const [client, straight] = await Promise.all([connectV2(gw.mcpUrl, DEMO_KEYS.full), direct()]);
    try {
      const resources = (await client.listResources()).resources;
      expect(resources.map((r) => r.uri)).toEqual((await straight.listResources()).resources.map((r) => r.uri));
      const read = await client.readResource({ uri: resources[0]!.uri });
      expect(read.contents[0]!.uri).toBe(resources[0]!.uri);
      expect((await client.listResourceTemplates()).resourceTemplates.length).toBeGreaterThan(0);
      const prompts = namesOf({ tools: (await client.listPrompts()).prompts });
      expect(prompts).toContain('simple-prompt');
      const prompt = await client.getPrompt({ name: 'simple-prompt' });
      expect(prompt.messages.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([client.close(), straight.close()]);
    }
  });

  it('serves /mcp/compact: state-changing tools and the anchors up front, the rest through search_tools and call_tool', async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      const listed = namesOf(await client.listTools());
      expect(listed).toEqual(expect.arrayContaining(['search_tools', 'call_tool', 'echo', 'get-sum', 'toggle-simulated-logging']));
      expect(listed).not.toContain('get-tiny-image');
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'tiny image' } });
      expect((found.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('get-tiny-image');
      const image = await client.callTool({ name: 'call_tool', arguments: { name: 'get-tiny-image', arguments: {} } });
      expect(image.isError).toBeFalsy();
      expect((image.content as { type: string }[]).some((c) => c.type === 'image')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('keeps one upstream session for all callers (credentials are not forwarded)', async () => {
    const sessions = () => gw.logs.records('connected to upstream').filter((r) => r.upstream === 'everything').length;
    const [a, b] = await Promise.all([connectV2(gw.mcpUrl, DEMO_KEYS.full), connectV2(gw.mcpUrl, DEMO_KEYS.data)]);
    try {
      // Counted from this test's start: the restart test (in any order) opens a second session of its own.
      await a.callTool({ name: 'echo', arguments: { message: 'first' } });
      const before = sessions();
      expect(before).toBeGreaterThanOrEqual(1);
      await Promise.all([a.callTool({ name: 'echo', arguments: { message: 'a' } }), b.callTool({ name: 'echo', arguments: { message: 'b' } })]);
      expect(sessions()).toBe(before);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('fails only the call in flight when the server is killed, then recovers with a new session once it restarts', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      // In flight means the server has reported a step of it (one every 100 ms of its 10 s).
      let progressed!: () => void;
      const firstStep = new Promise<void>((resolve) => (progressed = resolve));
      const inflight = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 100 } }, { onprogress: () => progressed() });
      await Promise.race([firstStep, inflight]);
      await everything.kill();
      const failed = await inflight;
      expect(failed.isError).toBe(true);
      expect(failed._meta?.['ai.cpz.gateway/error']).toBe('upstream_unavailable');
      // The call's stream broke: the gateway checks the upstream in the background (client.ts checkAlive),
      // so readiness turns within a moment of the failed call, not necessarily before it is answered.
      const ready = await eventually(
        async () => {
          const r = await fetch(`${gw.gateway.url}/readyz`);
          return { status: r.status, body: await r.text() };
        },
        (r) => r.status === 503,
        5000,
      );
      expect(ready.body).toContain('upstream everything: down');

      await everything.restart();
      const back = await eventually(
        () => client.callTool({ name: 'echo', arguments: { message: 'again' } }),
        (r) => !r.isError,
      );
      expect(textOf(back)).toBe('Echo: again');
      expect(gw.logs.records('upstream reconnected').map((r) => r.upstream)).toContain('everything');
      expect((await fetch(`${gw.gateway.url}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${gw.gateway.url}/metrics`)).text();
      expect(metrics).toMatch(/mcp_upstream_reconnects_total\{upstream="everything"\} [1-9]/);
      expect(metrics).toContain('mcp_upstream_up{upstream="everything"} 1');
    } finally {
      await client.close();
    }
  });
});
