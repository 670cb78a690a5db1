/**
 * MCP Apps through the gateway (issue 18, Done when), with a 2025-era upstream that declares the
 * `io.modelcontextprotocol/ui` extension, links a tool to a `ui://` view and has one app-only tool
 * (fixtures/fake-tools.ts startAppsUpstream: the fake upstream, legacy era), through real clients of both eras, on both surfaces:
 * - the extension is in the capabilities (server/discover for 2026-07-28, initialize for 2025-11-25);
 * - the `ui://` view reads through;
 * - the app-only tool is on tools/list (for the host) but never in a search_tools answer, and call_tool
 *   refuses it as it refuses an unknown name, without contacting the upstream;
 * - the upstream's -32002 reaches a 2026-07-28 caller as -32602 and a 2025 caller as -32002, its -32042
 *   a 2026-07-28 caller as an in-band URL elicitation.
 */
import { Client, type ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { connectV1, connectV2, fetchWithHeaders } from '../../helpers/clients.ts';
import { APP_MIME, LOGIN_URL, UI_EXTENSION, VANISHED_URI, VIEW_HTML, VIEW_URI, startAppsUpstream } from '../../fixtures/fake-tools.ts';
import { FULL_KEY } from '../../helpers/raw-mcp.ts';
import { startGatewayOver } from '../../helpers/stack.ts';

let upstream: Awaited<ReturnType<typeof startAppsUpstream>>;
let gateway: RunningGateway;
const base = () => gateway.url.replace(/\/mcp$/, '');
const SURFACES = ['/mcp', '/mcp/compact'] as const;

beforeAll(async () => {
  upstream = await startAppsUpstream();
  gateway = await startGatewayOver(upstream.url);
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

type AnyClient = {
  getServerCapabilities(): { extensions?: Record<string, unknown> } | undefined;
  listTools(): Promise<{ tools: { name: string; _meta?: Record<string, unknown> }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; mimeType?: string; text?: string }[] }>;
  close(): Promise<void>;
};

async function connect(era: 'modern' | 'legacy', path: string): Promise<AnyClient> {
  const url = `${base()}${path}`;
  return (era === 'modern' ? await connectV2(url, FULL_KEY) : await connectV1(url, FULL_KEY)) as unknown as AnyClient;
}

describe.each(['modern', 'legacy'] as const)('MCP Apps through the gateway, %s caller', (era) => {
  describe.each(SURFACES)('on %s', (path) => {
    let client: AnyClient;
    beforeAll(async () => {
      client = await connect(era, path);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('advertises the upstream-declared io.modelcontextprotocol/ui extension', () => {
      expect(client.getServerCapabilities()?.extensions).toEqual({ [UI_EXTENSION]: {} });
    });

    it('reads the ui:// view through', async () => {
      const read = await client.readResource({ uri: VIEW_URI });
      expect(read.contents).toEqual([expect.objectContaining({ uri: VIEW_URI, mimeType: APP_MIME, text: VIEW_HTML })]);
    });

    it('lists the app-only tool for the host, with its _meta.ui', async () => {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'refresh_chart')?._meta).toMatchObject({ ui: { visibility: ['app'] } });
    });

    it("answers the upstream's -32002 as the caller's revision names it", async () => {
      const error = await client.readResource({ uri: VANISHED_URI }).then(
        () => undefined,
        (e: unknown) => e as { code?: number; data?: unknown },
      );
      expect(error?.code).toBe(era === 'modern' ? -32602 : -32002);
      expect(error?.data).toMatchObject({ uri: VANISHED_URI });
    });
  });

  it('never returns the app-only tool from search_tools, and call_tool refuses it like an unknown name', async () => {
    const client = await connect(era, '/mcp/compact');
    try {
      const before = upstream.received.filter((r) => r.method === 'tools/call').length;
      for (const query of ['refresh chart', 'refresh_chart', 'chart', 'called by the chart view']) {
        const found = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 20 } })) as {
          structuredContent?: { tools: { name: string }[] };
        };
        expect(found.structuredContent?.tools.map((t) => t.name)).not.toContain('refresh_chart');
      }
      const refused = (await client.callTool({ name: 'call_tool', arguments: { name: 'refresh_chart' } })) as {
        isError?: boolean;
        content: { text: string }[];
        _meta?: Record<string, unknown>;
      };
      const unknown = (await client.callTool({ name: 'call_tool', arguments: { name: 'no_such_tool' } })) as typeof refused;
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(/^Unknown tool: refresh_chart\./);
      expect(refused._meta?.['ai.cpz.gateway/error']).toBe(unknown._meta?.['ai.cpz.gateway/error']);
      expect(upstream.received.filter((r) => r.method === 'tools/call').length).toBe(before);
      // The model-visible read tool of the same view is a read anchor on /mcp/compact (upstreams[].maxAnchors):
      // listed up front and called directly.
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('show_chart');
      const shown = (await client.callTool({ name: 'show_chart' })) as typeof refused;
      expect(shown.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

describe('-32042 URL elicitation required', () => {
  it('reaches a 2025 caller unchanged', async () => {
    const client = await connectV1(`${base()}/mcp`, FULL_KEY);
    try {
      const error = await client.callTool({ name: 'needs_login', arguments: {} }).then(
        () => undefined,
        (e: unknown) => e as McpError,
      );
      expect(error?.code).toBe(-32042);
    } finally {
      await client.close();
    }
  });

  it('reaches a 2026-07-28 caller as an in-band URL elicitation (or -32021 without elicitation.url)', async () => {
    const plain = await connectV2(`${base()}/mcp`, FULL_KEY);
    try {
      const error = await plain.callTool({ name: 'needs_login', arguments: {} }).then(
        () => undefined,
        (e: unknown) => e as ProtocolError,
      );
      expect(error?.code).toBe(-32021);
    } finally {
      await plain.close();
    }
    const asked: unknown[] = [];
    const client = new Client(
      { name: 'apps-tests', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { maxRounds: 2 } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return { action: 'decline' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base()}/mcp`), { fetch: fetchWithHeaders(FULL_KEY) }));
    try {
      await client.callTool({ name: 'needs_login', arguments: {} }).catch(() => undefined);
      expect(asked[0]).toMatchObject({ mode: 'url', url: LOGIN_URL, message: 'Connect your account' });
      expect(asked[0]).not.toHaveProperty('elicitationId');
    } finally {
      await client.close();
    }
  });
});
