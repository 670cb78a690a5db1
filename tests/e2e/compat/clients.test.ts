/**
 * Real MCP clients we did not write, against the gateway in front of the reference stack, on both
 * endpoints with the three demo keys: the v1 SDK client (2025-11-25 initialize, what most deployed
 * clients run) and the v2 client with version negotiation `auto` and pinned to 2026-07-28.
 * Each lists tools, calls one, reads a resource and gets a prompt (and searches on /mcp/compact).
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, MODERN } from '../../helpers/raw-mcp.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

type ToolResult = { isError?: boolean; content?: unknown[]; structuredContent?: unknown };

/** The surface the tests drive, the same for every client library. */
interface ClientUnderTest {
  era: string | undefined;
  toolNames(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  read(uri: string): Promise<{ contents: { text?: string }[] }>;
  prompt(name: string): Promise<{ messages: unknown[] }>;
  close(): Promise<void>;
}

const CLIENTS = {
  'sdk v1 (2025-11-25)': async (url: URL, headers: Record<string, string>): Promise<ClientUnderTest> => {
    const client = new V1Client({ name: 'compat-v1', version: '1.0.0' });
    const transport = new V1Transport(url, { requestInit: { headers } });
    await client.connect(transport);
    return {
      era: transport.protocolVersion,
      toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
      read: async (uri) => (await client.readResource({ uri })) as never,
      prompt: async (name) => client.getPrompt({ name }),
      close: () => client.close(),
    };
  },
  'v2 auto': (url: URL, headers: Record<string, string>) => v2(url, headers, 'auto'),
  'v2 pinned 2026-07-28': (url: URL, headers: Record<string, string>) => v2(url, headers, { pin: MODERN }),
};

async function v2(url: URL, headers: Record<string, string>, mode: 'auto' | { pin: string }): Promise<ClientUnderTest> {
  const client = new Client({ name: 'compat-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return {
    era: client.getProtocolEra(),
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    read: async (uri) => (await client.readResource({ uri })) as never,
    prompt: async (name) => client.getPrompt({ name }),
    close: () => client.close(),
  };
}

/** Per key: a read the key may make, called directly on /mcp; on /mcp/compact through call_tool unless advertised. */
const CALLS = {
  full: { tool: 'get_profile', args: {}, search: 'who am I, my profile and plan' },
  data: { tool: 'list_accounts', args: { limit: 1 }, search: 'broker accounts' },
  identity: { tool: 'get_profile', args: {}, search: 'who am I, my profile and plan' },
} as const;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe.each(['/mcp', '/mcp/compact'])('%s', (path) => {
  describe.each(Object.keys(DEMO_KEYS) as (keyof typeof DEMO_KEYS)[])('with the %s key', (key) => {
    it.each(Object.keys(CLIENTS) as (keyof typeof CLIENTS)[])('%s lists, calls, reads a resource and gets a prompt', async (clientName) => {
      const client = await CLIENTS[clientName](new URL(`${stack.gateway.url}${path}`), { ...DEMO_KEYS[key] });
      try {
        // The v1 client speaks a 2025 revision; both v2 modes must land on 2026-07-28 at the gateway.
        expect(client.era).toBe(clientName.startsWith('v2') ? 'modern' : '2025-11-25');
        const names = (await client.toolNames()).sort();
        const { tool, args, search } = CALLS[key];

        let result: ToolResult;
        if (names.includes(tool)) {
          result = await client.call(tool, args);
        } else {
          expect(path).toBe('/mcp/compact');
          const found = await client.call('search_tools', { query: search });
          expect(found.isError).toBeFalsy();
          expect(JSON.stringify(found.structuredContent ?? found.content)).toContain(tool);
          result = await client.call('call_tool', { name: tool, arguments: args });
        }
        expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy();
        expect(result.content?.length).toBeGreaterThan(0);
        if (path === '/mcp/compact') {
          const found = await client.call('search_tools', { query: search });
          expect(found.isError).toBeFalsy();
        }

        const guide = await client.read('cpzai://guides/tool-usage');
        expect(guide.contents[0]?.text?.length).toBeGreaterThan(100);
        const prompt = await client.prompt('review_portfolio');
        expect(prompt.messages.length).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
    });

    it('every client sees the same tools/list', async () => {
      const lists: string[][] = [];
      for (const clientName of Object.keys(CLIENTS) as (keyof typeof CLIENTS)[]) {
        const client = await CLIENTS[clientName](new URL(`${stack.gateway.url}${path}`), { ...DEMO_KEYS[key] });
        try {
          lists.push((await client.toolNames()).sort());
        } finally {
          await client.close();
        }
      }
      expect(lists).toHaveLength(Object.keys(CLIENTS).length);
      for (const list of lists) expect(list).toEqual(lists[0]);
      if (key === 'identity') expect(lists[0]).toContain(path === '/mcp' ? 'get_profile' : 'search_tools');
      if (key === 'data') expect(lists[0]).not.toContain('place_order');
    });
  });
});
