/**
 * A 2025-era stdio server is started once per restart: the SDK's server/discover probe (a sibling process
 * of its own) runs at the first connection only, and a restart after the process exits runs the initialize
 * handshake at once on the one new process (upstream/client.ts `legacyStdio`). Before, every start spawned
 * the server twice, which a server doing work or taking locks at start does twice (try-out).
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayUpstream, type ReplayUpstream } from '../../upstream/replay/index.ts';
import { withClient } from '../helpers/era-client.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';
import { waitFor } from '../helpers/wait.ts';
import { rawStdioServerArgs } from '../fixtures/raw-stdio-server.ts';

const starts = join(tmpdir(), `stdio-starts-${randomUUID()}.log`);
const firstMethods = () => {
  try {
    return readFileSync(starts, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1]);
  } catch {
    return [];
  }
};

let replay: ReplayUpstream;
let gateway: InProcessGateway;
beforeAll(async () => {
  replay = await startReplayUpstream({ tools: [{ name: 'ping', inputSchema: { type: 'object' } }] });
  gateway = inProcessGateway({
    anonymous: true,
    // Overrides merge by index: the first upstream stays an HTTP one.
    upstreams: [
      { name: 'replay', url: replay.url, forwardCredentials: false },
      {
        name: 'raw',
        command: process.execPath,
        args: rawStdioServerArgs([{ name: 'crash', inputSchema: { type: 'object' } }], { startsLog: starts, exitOnCall: true }),
        forwardCredentials: false,
      },
    ],
  });
});
afterAll(async () => {
  await gateway?.close();
  await replay?.close();
  rmSync(starts, { force: true });
});

describe('a 2025-era stdio server restarted after it exits', () => {
  it('is probed once, at its first connection, and each restart spawns one process that initializes', async () => {
    await withClient('modern', gateway.mcpUrl, FULL_KEY, async (client) => {
      expect((await client.listTools()).map((t) => t.name)).toContain('raw__crash');
      expect(firstMethods()).toEqual(['server/discover', 'initialize']);
      for (let restart = 1; restart <= 2; restart++) {
        await client.callTool('raw__crash', {}).catch(() => undefined);
        await waitFor(`restart ${restart}`, () => firstMethods().length === 2 + restart, { timeoutMs: 20_000 });
      }
    });
    expect(firstMethods()).toEqual(['server/discover', 'initialize', 'initialize', 'initialize']);
  });
});
