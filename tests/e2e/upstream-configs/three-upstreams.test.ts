/**
 * config/three-upstreams.yaml: the CPZAI reference stack (HTTP, 2026-07-28), server-everything (HTTP,
 * 2025-era, sessionful) and server-filesystem (stdio) behind one gateway. Merged full and compact
 * surfaces under <upstream>__<tool>, per-upstream scope policy, one search across all three, every call
 * routed to its owner, and one upstream killed mid-run while the other two keep serving.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORIGIN_META_KEY } from '../../../gateway/catalog/catalog-merge.ts';
import { EXPOSED_NAME } from '../../../gateway/catalog/naming.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { DATA_KEY_TOOLS, DEMO_KEYS, connectV1, connectV2, namesOf } from '../../helpers/clients.ts';
import { textOf } from '../../helpers/call-results.ts';
import { followSse, openStream, rpc } from '../../helpers/raw-mcp.ts';
import { eventually } from '../../helpers/wait.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';
import { startEverythingServer, type EverythingServer } from '../../fixtures/everything-server.ts';

/** The filesystem server's reading tools (files:read); its four writing tools need files:write, which no platform key holds. */
const FILESYSTEM_TOOLS = 10;

let platform: Awaited<ReturnType<typeof startPlatform>>;
let cpzai: Awaited<ReturnType<typeof startUpstreamServer>>;
let everything: EverythingServer;
let everythingTools: string[];
let root: string;
let gw: ConfigGateway;
beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gateway-three-')));
  writeFileSync(join(root, 'report.txt'), 'quarterly numbers\n');
  platform = await startPlatform({ port: 0 });
  cpzai = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  everything = await startEverythingServer();
  gw = await startConfigGateway('three-upstreams', {
    GATEWAY_UPSTREAMS_0_URL: cpzai.url,
    GATEWAY_UPSTREAMS_1_URL: everything.url,
    GATEWAY_UPSTREAMS_1_RESTART_MAX_DELAY_MS: '1000',
    GATEWAY_SCOPES_ENDPOINT: `${platform.url}/v1/me`,
    FILESYSTEM_ROOT: root,
  });
  const probe = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
  everythingTools = namesOf(await probe.listTools()).filter((n) => n.startsWith('everything__'));
  await probe.close();
});
afterAll(async () => {
  await gw?.close();
  await everything?.close();
  await cpzai?.close();
  await platform?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const byUpstream = (names: string[]) =>
  Object.fromEntries(['cpzai', 'everything', 'filesystem'].map((u) => [u, names.filter((n) => n.startsWith(`${u}__`)).length]));

describe('the merged full surface (/mcp)', () => {
  it("lists every upstream's tools under <upstream>__<tool>: valid names, origin in _meta", async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      const { tools } = await client.listTools();
      expect(byUpstream(tools.map((t) => t.name))).toEqual({ cpzai: 34, everything: everythingTools.length, filesystem: FILESYSTEM_TOOLS });
      expect(everythingTools.length).toBeGreaterThanOrEqual(8); // its read tools: what changes its state needs everything:write
      expect(tools).toHaveLength(34 + everythingTools.length + FILESYSTEM_TOOLS);
      for (const tool of tools) {
        expect(tool.name).toMatch(EXPOSED_NAME);
        const origin = tool._meta?.[ORIGIN_META_KEY] as { upstream: string; name: string };
        expect(tool.name).toBe(`${origin.upstream}__${origin.name}`);
      }
      expect(tools.find((t) => t.name === 'everything__get-sum')?._meta?.[ORIGIN_META_KEY]).toEqual({ upstream: 'everything', name: 'get-sum' });
    } finally {
      await client.close();
    }
  });

  it("applies each upstream's scope policy: CPZAI by _meta, filesystem by rules (files:read), everything to all", async () => {
    const [data, identity] = await Promise.all([connectV1(gw.mcpUrl, DEMO_KEYS.data), connectV2(gw.mcpUrl, DEMO_KEYS.identity)]);
    try {
      const dataNames = namesOf(await data.listTools());
      expect(dataNames.filter((n) => n.startsWith('cpzai__'))).toEqual(DATA_KEY_TOOLS.map((n) => `cpzai__${n}`).sort());
      expect(byUpstream(dataNames)).toEqual({ cpzai: 10, everything: everythingTools.length, filesystem: FILESYSTEM_TOOLS });
      expect(byUpstream(namesOf(await identity.listTools()))).toEqual({ cpzai: 1, everything: everythingTools.length, filesystem: 0 });
    } finally {
      await Promise.all([data.close(), identity.close()]);
    }
  });

  it('routes each call to the upstream that owns the tool, in both eras', async () => {
    const [modern, legacy, direct] = await Promise.all([
      connectV2(gw.mcpUrl, DEMO_KEYS.full),
      connectV1(gw.mcpUrl, DEMO_KEYS.data),
      connectV2(cpzai.url, DEMO_KEYS.full),
    ]);
    try {
      const profile = await modern.callTool({ name: 'cpzai__get_profile', arguments: {} });
      expect(profile.structuredContent).toEqual((await direct.callTool({ name: 'get_profile', arguments: {} })).structuredContent);
      expect(textOf(await modern.callTool({ name: 'everything__echo', arguments: { message: 'routed' } }))).toBe('Echo: routed');
      expect(textOf(await legacy.callTool({ name: 'everything__get-sum', arguments: { a: 1, b: 2 } }))).toContain('3');
      const file = await legacy.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(root, 'report.txt') } });
      expect(file.structuredContent).toEqual({ content: 'quarterly numbers\n' });
      await expect(modern.callTool({ name: 'get_profile', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await Promise.all([modern.close(), legacy.close(), direct.close()]);
    }
  });

  it('merges resources and prompts: URIs as they are, prompt names prefixed, each read, get and completion routed', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      const uris = (await client.listResources()).resources.map((r) => r.uri);
      expect(uris).toEqual(expect.arrayContaining(['cpzai://guides/permissions', expect.stringMatching(/^demo:\/\//)]));
      expect((await client.readResource({ uri: 'cpzai://guides/permissions' })).contents[0]!.uri).toBe('cpzai://guides/permissions');
      const demo = uris.find((u) => u.startsWith('demo://'))!;
      expect((await client.readResource({ uri: demo })).contents[0]!.uri).toBe(demo);
      await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toMatchObject({ code: -32602 });

      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toEqual(expect.arrayContaining(['cpzai__review_portfolio', 'cpzai__analyze_strategy', 'everything__simple-prompt']));
      expect((await client.getPrompt({ name: 'everything__simple-prompt' })).messages.length).toBeGreaterThan(0);
      expect((await client.getPrompt({ name: 'cpzai__review_portfolio' })).messages.length).toBeGreaterThan(0);
      await expect(client.getPrompt({ name: 'simple-prompt' })).rejects.toMatchObject({ code: -32602 });
      const completion = await client.complete({
        ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
        argument: { name: 'department', value: 'Eng' },
      });
      expect(completion.completion.values).toContain('Engineering');
    } finally {
      await client.close();
    }
  });

  it("describes itself with the three servers' instructions and capabilities", async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
      expect(client.getInstructions()).toMatch(/3 MCP servers, named <server>__<name>/);
      expect(client.getInstructions()).toContain('## everything');
    } finally {
      await client.close();
    }
  });
});

describe('the merged compact surface (/mcp/compact)', () => {
  type Match = { name: string; upstream: string; advertised: boolean };
  const search = async (client: Awaited<ReturnType<typeof connectV2>>, args: Record<string, unknown>): Promise<Match[]> => {
    const result = await client.callTool({ name: 'search_tools', arguments: args });
    expect(result.isError).toBeFalsy();
    return (result.structuredContent as { tools: Match[] }).tools;
  };

  it("advertises search_tools, call_tool, the writes the key may run and every upstream's anchors", async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(['search_tools', 'call_tool', 'cpzai__place_order', 'cpzai__list_accounts', 'everything__echo', 'filesystem__list_directory']),
      );
      // Nobody here holds everything:write or files:write (config/three-upstreams.yaml).
      expect(names).not.toContain('everything__toggle-simulated-logging');
      expect(names).not.toContain('filesystem__write_file');
      expect(names).not.toContain('filesystem__directory_tree');
      expect(names).not.toContain('everything__get-tiny-image');
      const upstreamParam = (tools.find((t) => t.name === 'search_tools')!.inputSchema.properties as Record<string, { enum?: string[] }>).upstream;
      expect(upstreamParam?.enum).toEqual(['cpzai', 'everything', 'filesystem']);
    } finally {
      await client.close();
    }
  });

  it('searches all three upstreams at once and names the upstream of each match', async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      const found = [
        ...(await search(client, { query: 'echo a message back', limit: 3 })),
        ...(await search(client, { query: 'directory tree of files', limit: 3 })),
        ...(await search(client, { query: 'list orders', limit: 3 })),
      ];
      expect(found.find((m) => m.name === 'everything__echo')?.upstream).toBe('everything');
      expect(found.find((m) => m.name === 'filesystem__directory_tree')?.upstream).toBe('filesystem');
      expect(found.some((m) => m.upstream === 'cpzai' && m.name === 'cpzai__list_orders')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('filters the search by upstream and by category', async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      const onlyFiles = await search(client, { query: 'list', upstream: 'filesystem', limit: 20 });
      expect(onlyFiles.length).toBeGreaterThan(0);
      expect(new Set(onlyFiles.map((m) => m.upstream))).toEqual(new Set(['filesystem']));
      const math = await search(client, { query: 'add numbers', category: 'math' });
      expect(math.map((m) => m.name)).toEqual(['everything__get-sum']);
      const refused = await client.callTool({ name: 'search_tools', arguments: { query: 'x', upstream: 'nope' } });
      expect(refused.isError).toBe(true);
      // No match within both filters: the hint names both, and that upstream's categories only (try-out: every upstream's).
      const none = (await client.callTool({ name: 'search_tools', arguments: { query: 'add numbers', category: 'math', upstream: 'cpzai' } }))
        .structuredContent as { tools: unknown[]; hint: string };
      expect(none.tools).toEqual([]);
      expect(none.hint).toMatch(/^No tool matched in category math of upstream cpzai\. Try other words, or another category of upstream cpzai: .*orders/);
      expect(none.hint).not.toMatch(/: .*\bmath\b/);
    } finally {
      await client.close();
    }
  });

  it('routes call_tool to the owning upstream, and hides filesystem tools from a key without files:read', async () => {
    const [full, identity] = await Promise.all([connectV2(gw.compactUrl, DEMO_KEYS.full), connectV2(gw.compactUrl, DEMO_KEYS.identity)]);
    try {
      const tree = await full.callTool({ name: 'call_tool', arguments: { name: 'filesystem__directory_tree', arguments: { path: root } } });
      expect(textOf(tree)).toContain('report.txt');
      const image = await full.callTool({ name: 'call_tool', arguments: { name: 'everything__get-tiny-image', arguments: {} } });
      expect((image.content as { type: string }[]).some((c) => c.type === 'image')).toBe(true);
      expect(await search(identity, { query: 'read a text file', upstream: 'filesystem' }).catch(() => [])).toEqual([]);
      const hidden = await identity.callTool({ name: 'call_tool', arguments: { name: 'filesystem__directory_tree', arguments: { path: root } } });
      expect(hidden.isError).toBe(true);
      expect(textOf(hidden)).toContain('Unknown tool');
    } finally {
      await Promise.all([full.close(), identity.close()]);
    }
  });
});

describe('one upstream killed mid-run', () => {
  it('drops only its tools: the other two keep listing, searching and answering; /readyz names it', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    const compact = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      expect(textOf(await client.callTool({ name: 'everything__echo', arguments: { message: 'before' } }))).toBe('Echo: before');
      // A 2026-07-28 caller listening for list changes hears of the merged list losing and regaining its tools.
      const listen = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
      const stream = await openStream(String(gw.mcpUrl), listen.body, { ...listen.headers, ...DEMO_KEYS.full });
      const messages = followSse(stream);
      await messages.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
      const changes = async () => messages.seen.filter((m) => m.method === 'notifications/tools/list_changed').length;
      await everything.kill();

      const down = await client.callTool({ name: 'everything__echo', arguments: { message: 'while down' } });
      expect(down.isError).toBe(true);
      expect(down._meta?.['ai.cpz.gateway/error']).toBe('upstream_unavailable');
      const listed = await eventually(
        () => client.listTools(),
        (l) => !l.tools.some((t) => t.name.startsWith('everything__')),
      );
      expect(byUpstream(namesOf(listed))).toEqual({ cpzai: 34, everything: 0, filesystem: FILESYSTEM_TOOLS });

      const profile = await client.callTool({ name: 'cpzai__get_profile', arguments: {} });
      expect(profile.isError).toBeFalsy();
      const file = await client.callTool({ name: 'filesystem__read_text_file', arguments: { path: join(root, 'report.txt') } });
      expect(file.structuredContent).toEqual({ content: 'quarterly numbers\n' });
      const matches = (await compact.callTool({ name: 'search_tools', arguments: { query: 'echo a message back', limit: 20 } })).structuredContent as {
        tools: { upstream: string }[];
      };
      expect(matches.tools.some((m) => m.upstream === 'everything')).toBe(false);
      const again = await client.callTool({ name: 'everything__echo', arguments: { message: 'still down' } });
      expect(again._meta?.['ai.cpz.gateway/error']).toBe('upstream_unavailable');

      const ready = await fetch(`${gw.gateway.url}/readyz`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as { status: string; reasons: string[] };
      expect(body.status).toBe('degraded');
      expect(body.reasons).toHaveLength(1);
      expect(body.reasons[0]).toMatch(/^upstream everything: down/);
      expect(gw.logs.records('upstream left out of the merged catalogue').map((r) => r.upstream)).toContain('everything');

      await eventually(changes, (n) => n >= 1);
      const whileDown = await changes();
      await everything.restart();
      const back = await eventually(
        () => client.callTool({ name: 'everything__echo', arguments: { message: 'back' } }),
        (r) => !r.isError,
      );
      expect(textOf(back)).toBe('Echo: back');
      const relisted = await eventually(
        () => client.listTools(),
        (l) => l.tools.some((t) => t.name === 'everything__echo'),
      );
      expect(byUpstream(namesOf(relisted))).toEqual({ cpzai: 34, everything: everythingTools.length, filesystem: FILESYSTEM_TOOLS });
      expect((await fetch(`${gw.gateway.url}/readyz`)).status).toBe(200);
      await eventually(changes, (n) => n > whileDown);
      stream.destroy();
    } finally {
      await Promise.all([client.close(), compact.close()]);
    }
  });
});
