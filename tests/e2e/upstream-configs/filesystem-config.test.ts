/**
 * config/filesystem.yaml as committed, rooted in a temp folder: @modelcontextprotocol/server-filesystem
 * spawned over stdio by the gateway, one process shared by every caller, its stderr logged, and a new
 * process when it dies (calls in flight fail, the next ones are served).
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, connectV1, connectV2, namesOf } from '../../helpers/clients.ts';
import { textOf } from '../../helpers/call-results.ts';
import { eventually } from '../../helpers/wait.ts';
import { startConfigGateway, type ConfigGateway } from '../../helpers/stack.ts';

let root: string;
let gw: ConfigGateway;
beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gateway-fs-')));
  writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n');
  gw = await startConfigGateway('filesystem', { FILESYSTEM_ROOT: root });
});
afterAll(async () => {
  await gw?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The server-filesystem processes this test process spawned (the gateway runs in-process), from /proc. */
function serverProcesses(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
        const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').at(-1)!.trim().split(' ')[1]);
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return ppid === process.pid && args.some((a) => a.endsWith('server-filesystem/dist/index.js')) && args.includes(root);
      } catch {
        return false; // exited while we looked
      }
    })
    .map(Number);
}

/** mcp_catalog_refreshes_total{upstream="filesystem",outcome="ok"} from /metrics. */
async function catalogRefreshes(): Promise<number> {
  const text = await (await fetch(`${gw.gateway.url}/metrics`)).text();
  return Number(/mcp_catalog_refreshes_total\{upstream="filesystem",outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe('config/filesystem.yaml', () => {
  it("lists the server's 14 tools and reads and writes files inside the root only", async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      const names = namesOf(await client.listTools());
      expect(names).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory', 'list_allowed_directories']));
      expect(names).toHaveLength(14);
      const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'notes.txt'), head: 1 } });
      expect(read.structuredContent).toEqual({ content: 'first line' });
      const written = await client.callTool({ name: 'write_file', arguments: { path: join(root, 'new.txt'), content: 'from the gateway' } });
      expect(written.isError).toBeFalsy();
      expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('from the gateway');
      const outside = await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } });
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toMatch(/outside allowed directories|Access denied/i);
    } finally {
      await client.close();
    }
  });

  it('serves v1 and v2 callers concurrently from one process, and logs its stderr under its name', async () => {
    const [v1, v2] = await Promise.all([connectV1(gw.mcpUrl, DEMO_KEYS.full), connectV2(gw.mcpUrl, DEMO_KEYS.data)]);
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? v1 : v2).callTool({ name: 'list_directory', arguments: { path: root } })),
      );
      for (const answer of answers) expect(textOf(answer)).toContain('[FILE] notes.txt');
      expect(serverProcesses()).toHaveLength(1);
      expect(gw.logs.records('upstream stderr').some((r) => r.upstream === 'filesystem' && String(r.stderr).includes('Secure MCP Filesystem Server'))).toBe(
        true,
      );
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });

  it('advertises the writes and anchors on /mcp/compact and runs other reads through call_tool', async () => {
    const client = await connectV2(gw.compactUrl, DEMO_KEYS.full);
    try {
      const listed = namesOf(await client.listTools());
      expect(listed).toEqual(expect.arrayContaining(['search_tools', 'call_tool', 'write_file', 'move_file', 'list_directory', 'read_text_file']));
      expect(listed).not.toContain('directory_tree');
      const tree = await client.callTool({ name: 'call_tool', arguments: { name: 'directory_tree', arguments: { path: root } } });
      expect(textOf(tree)).toContain('notes.txt');
    } finally {
      await client.close();
    }
  });

  it('starts a new process when it is killed, serves the next calls from it and refetches the catalogue', async () => {
    const client = await connectV2(gw.mcpUrl, DEMO_KEYS.full);
    try {
      const [first] = serverProcesses();
      expect(first).toBeDefined();
      const connectsBefore = gw.logs.records('connected to upstream').length;
      const refreshesBefore = await catalogRefreshes();
      process.kill(first!, 'SIGKILL');
      const back = await eventually(
        () => client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'notes.txt') } }),
        (r) => !r.isError,
      );
      expect(textOf(back)).toContain('second line');
      const now = serverProcesses();
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(first);
      expect(
        gw.logs.records('upstream connection lost').some((r) => r.upstream === 'filesystem' && String(r.reason).includes('process was killed by SIGKILL')),
      ).toBe(true);
      expect(gw.logs.records('connected to upstream').length).toBe(connectsBefore + 1);
      await eventually(catalogRefreshes, (n) => n > refreshesBefore);
      expect(namesOf(await client.listTools())).toHaveLength(14);
    } finally {
      await client.close();
    }
  });

  it('ends the process when the gateway closes', async () => {
    const other = await startConfigGateway('filesystem', { FILESYSTEM_ROOT: root });
    const client = await connectV2(other.mcpUrl, DEMO_KEYS.full);
    await client.listTools();
    await client.close();
    expect(serverProcesses()).toHaveLength(2);
    await other.close();
    expect(serverProcesses()).toHaveLength(1);
  });
});
