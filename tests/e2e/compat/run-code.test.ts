/**
 * run_code end to end (issue 35, Done when): the gateway over real sockets in front of the reference
 * stack (platform + CPZAI upstream, config/cpzai.yaml with code mode on), and real SDK clients on
 * /mcp/compact with the data key: the v1 SDK client at 2025-11-25 (what it asks for) and at 2025-03-26
 * (the server answers the revision the initialize asked for; a transport fetch asks for it), and the v2
 * client pinned to 2026-07-28 (the credential forwarded by a transport `fetch`, since per-request
 * `headers` drop `authorization`-like headers). Each runs the 4-step read of bench/code-mode.ts (an
 * account, five positions, their quotes and last daily bars) as one run_code and gets the answer the
 * same client computes from the four calls made one by one, with one progress notification per inner
 * call on the client's own `onprogress`.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { FOUR_STEP_SCRIPT, fourStepsOneByOne } from '../../fixtures/code-mode-task.ts';

type Result = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };
type Progress = { progress: number; total?: number; message?: string };

/** What the test drives, the same for every client. */
interface RunCodeClient {
  toolNames(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<Result>;
  close(): Promise<void>;
}

/**
 * A fetch that adds the data key to every request, records the MCP-Protocol-Version each request went
 * out with, and (`initializeAs`) rewrites the initialize request's protocolVersion: the v1 client always
 * asks for its latest revision, and a server answers the one asked for when it serves it.
 */
function recordingFetch(versions: string[], initializeAs?: string): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(DEMO_KEYS.data)) headers.set(name, value);
    let body = init?.body;
    if (initializeAs && typeof body === 'string' && body.includes('"initialize"')) {
      const message = JSON.parse(body) as { method?: string; params?: { protocolVersion?: string } };
      if (message.method === 'initialize' && message.params) message.params.protocolVersion = initializeAs;
      body = JSON.stringify(message);
    }
    const version = headers.get('mcp-protocol-version');
    if (version) versions.push(version);
    return fetch(input, { ...init, headers, body });
  };
}

function v1(initializeAs?: string) {
  return async (url: URL, versions: string[]): Promise<RunCodeClient> => {
    const client = new V1Client({ name: 'run-code-v1', version: '1.0.0' });
    await client.connect(new V1Transport(url, { fetch: recordingFetch(versions, initializeAs) }));
    return {
      toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name, args, onprogress) => (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : {})) as Result,
      close: () => client.close(),
    };
  };
}

async function v2(url: URL, versions: string[]): Promise<RunCodeClient> {
  const client = new Client({ name: 'run-code-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: recordingFetch(versions) }));
  return {
    toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args, onprogress) => (await client.callTool({ name, arguments: args }, onprogress ? { onprogress } : {})) as Result,
    close: () => client.close(),
  };
}

const CLIENTS: [string, string, (url: URL, versions: string[]) => Promise<RunCodeClient>][] = [
  ['sdk v1', '2025-11-25', v1()],
  ['sdk v1', '2025-03-26', v1('2025-03-26')],
  ['v2 client', '2026-07-28', v2],
];

const valueOf = (result: Result): unknown => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent ?? JSON.parse(result.content?.[0]?.text ?? 'null');
};

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ gateway: { compact: { codeMode: { enabled: true } } } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe.each(CLIENTS)('run_code over real HTTP: %s at %s', (_client, revision, connect) => {
  it('answers the 4-step read in one run, equal to the four calls one by one, with a progress notification per inner call', async () => {
    const versions: string[] = [];
    const client = await connect(new URL(`${stack.gatewayUrl}/mcp/compact`), versions);
    try {
      expect(await client.toolNames()).toEqual(expect.arrayContaining(['search_tools', 'call_tool', 'run_code']));
      const expected = await fourStepsOneByOne(async (name, args) => valueOf(await client.call(name, args)));
      expect(expected).toHaveLength(5);
      expect(expected.every((row) => row.last_price !== undefined && row.volume !== null)).toBe(true);

      const progress: Progress[] = [];
      const result = await client.call('run_code', { code: FOUR_STEP_SCRIPT }, (p) => progress.push(p));
      // Before 2025-06-18 there is no structuredContent: the text says the same {result, logs, calls}.
      expect(valueOf(result)).toEqual({ result: expected, logs: [], calls: 4 });
      expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
      expect(progress.map((p) => p.message)).toEqual(['list_accounts', 'list_positions', 'get_market_data', 'get_bars'].map((t) => `tools.${t} answered`));
      // Every request after the handshake went out at the revision under test.
      expect(new Set(versions)).toEqual(new Set([revision]));
    } finally {
      await client.close();
    }
  }, 60_000);
});
