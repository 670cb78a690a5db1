/**
 * config/replay.yaml as committed (its URL moved to a free port) in front of the replay upstream serving
 * the GitHub MCP server's catalogue (117 tools, paged 50 at a time): the whole catalogue on /mcp, search
 * over it on /mcp/compact, and calls answered by the replay server.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_DIR } from '../../fixtures/search-data.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { connectV1, connectV2, namesOf } from '../../helpers/clients.ts';
import { ANY_BEARER, startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';

const GITHUB = resolve(DATA_DIR, 'catalogs/github-mcp-server-tools.json');

let replay: ReplayUpstream;
let gw: ConfigGateway;
beforeAll(async () => {
  replay = await startReplayUpstream({ catalogPath: GITHUB, pageSize: 50 });
  gw = await startConfigGateway('replay', { GATEWAY_UPSTREAMS_0_URL: replay.url });
});
afterAll(async () => {
  await gw?.close();
  await replay?.close();
});

describe('config/replay.yaml', () => {
  it('lists all 117 tools (three upstream pages) to v2 and v1 clients', async () => {
    const [modern, legacy] = await Promise.all([connectV2(gw.mcpUrl, ANY_BEARER), connectV1(gw.mcpUrl, ANY_BEARER)]);
    try {
      const expected = replay.tools.map((t) => t.name).sort();
      expect(expected).toHaveLength(117);
      expect(namesOf(await modern.listTools())).toEqual(expected);
      expect(namesOf(await legacy.listTools())).toEqual(expected);
    } finally {
      await Promise.all([modern.close(), legacy.close()]);
    }
  });

  it('advertises the writes and the three anchors on /mcp/compact, and finds the rest with search_tools', async () => {
    const client = await connectV2(gw.compactUrl, ANY_BEARER);
    try {
      const listed = namesOf(await client.listTools());
      const writes = replay.tools.filter((t) => (t.annotations as { readOnlyHint?: boolean } | undefined)?.readOnlyHint !== true).map((t) => t.name);
      // github-mcp-server's ui_get is an MCP Apps app-only tool: listed for the host, never found by search_tools.
      expect(listed.sort()).toEqual(['call_tool', 'search_tools', ...writes, 'get_me', 'search_repositories', 'get_file_contents', 'ui_get'].sort());
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'list the commits of a branch', limit: 5 } });
      const names = (found.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(names).toContain('list_commits');
      const ui = await client.callTool({ name: 'search_tools', arguments: { query: 'get UI data', limit: 20 } });
      expect((ui.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).not.toContain('ui_get');
      const commits = await client.callTool({ name: 'call_tool', arguments: { name: 'list_commits', arguments: { owner: 'o', repo: 'r' } } });
      expect(commits.isError).toBeFalsy();
      expect(JSON.parse((commits.content as { text: string }[])[0]!.text)).toEqual({ tool: 'list_commits', arguments: { owner: 'o', repo: 'r' } });
    } finally {
      await client.close();
    }
  });
});
