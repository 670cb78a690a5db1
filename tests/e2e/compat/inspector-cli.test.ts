/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector` 2.x, needs Node >= 22.19) against the gateway
 * in front of the reference stack: tools/list and one tools/call per protocol era, on /mcp and
 * /mcp/compact, with the three demo keys.
 *
 * Runs only when NODE22_BIN (a Node 22 binary) and INSPECTOR_BIN (the `mcp-inspector` entry) are set:
 * .ci/conformance.sh installs both into a scratch folder and sets them; `npm test` on the project's
 * Node 20 reports these tests as skipped.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../../helpers/raw-mcp.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const run = promisify(execFile);
const { NODE22_BIN, INSPECTOR_BIN } = process.env;

/** Per key: a tool it may call, and whether /mcp/compact advertises it (else it goes through call_tool). */
const CALLS = {
  full: { tool: 'get_profile', args: {}, compactDirect: false },
  data: { tool: 'list_accounts', args: { limit: 1 }, compactDirect: true },
  identity: { tool: 'get_profile', args: {}, compactDirect: false },
} as const;

describe.skipIf(!NODE22_BIN || !INSPECTOR_BIN)('MCP Inspector CLI', () => {
  let stack: Stack;
  // The Inspector keeps a catalogue under $HOME; point it at a throwaway folder.
  const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    try {
      await stack?.close();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  async function inspector(url: string, era: string, key: keyof typeof DEMO_KEYS, method: string[]): Promise<Record<string, unknown>> {
    const headers = Object.entries(DEMO_KEYS[key]).map(([name, value]) => `${name}: ${value}`);
    const args = [INSPECTOR_BIN!, '--cli', url, '--transport', 'http', '--protocol-era', era, ...method, '--format', 'json', '-q', '--header', ...headers];
    const { stdout } = await run(NODE22_BIN!, args, {
      env: { ...process.env, HOME: home, PATH: `${dirname(NODE22_BIN!)}:${process.env.PATH}` },
      timeout: 60_000,
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  describe.each(['/mcp', '/mcp/compact'])('%s', (path) => {
    describe.each(['modern', 'legacy'])('era %s', (era) => {
      it.each(Object.keys(DEMO_KEYS) as (keyof typeof DEMO_KEYS)[])('tools/list and tools/call with the %s key', async (key) => {
        const url = `${stack.gateway.url}${path}`;
        const listed = (await inspector(url, era, key, ['--method', 'tools/list'])) as { result: { tools: { name: string }[] } };
        const names = listed.result.tools.map((tool) => tool.name);
        const { tool, args, compactDirect } = CALLS[key];
        const direct = path === '/mcp' || compactDirect;
        expect(names).toContain(direct ? tool : 'call_tool');
        const call = direct
          ? ['--method', 'tools/call', '--tool-name', tool, '--tool-args-json', JSON.stringify(args)]
          : ['--method', 'tools/call', '--tool-name', 'call_tool', '--tool-args-json', JSON.stringify({ name: tool, arguments: args })];
        const called = (await inspector(url, era, key, call)) as { result: { isError?: boolean; content: unknown[] } };
        expect(called.result.isError, JSON.stringify(called).slice(0, 300)).toBeFalsy();
        expect(called.result.content.length).toBeGreaterThan(0);
      });
    });
  });
});
