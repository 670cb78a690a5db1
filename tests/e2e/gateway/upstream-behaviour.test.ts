/**
 * How the gateway treats its upstream: every page gathered before filtering, a pagination loop
 * refused rather than truncated, request ids and credentials forwarded, and upstream failures turned
 * into isError results (tools/call) or -32603 (lists), never crashes or hangs.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { connectV2, namesOf } from '../../helpers/clients.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { startGatewayWith, startStack, type Stack } from '../../helpers/stack.ts';
import { freePort } from '../../helpers/free-port.ts';

const KEY = { 'x-cpz-key': 'pager', 'x-cpz-secret': 'pager-secret' };
const tool = (name: string, scopes: string[] = []): Tool => ({
  name,
  inputSchema: { type: 'object' },
  _meta: { 'ai.cpz/tool': { category: 'test', requiredScopes: scopes } },
});
const text = (t: string) => [{ type: 'text' as const, text: t }];

describe('a paginating upstream (7 tools, 2 per page)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      upstream: {
        pageSize: 2,
        tools: [
          ...['a', 'b', 'c', 'd', 'e', 'f'].map((n) => ({ definition: tool(`tool_${n}`) })),
          // Answers long after timeoutMs, which is long enough for a list page on a loaded machine (300 ms was not).
          { definition: tool('slow_tool'), call: () => new Promise((resolve) => setTimeout(() => resolve({ content: text('late') }), 20_000).unref()) },
        ],
        toolsListHint: { ttlMs: 60_000, cacheScope: 'public' },
      },
      gateway: { upstreams: [{ timeoutMs: 3000 }] },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('gathers every page before answering tools/list', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      expect(namesOf(await client.listTools())).toEqual(['slow_tool', 'tool_a', 'tool_b', 'tool_c', 'tool_d', 'tool_e', 'tool_f']);
      expect(stack.fake!.received.filter((r) => r.method === 'tools/list').length).toBeGreaterThanOrEqual(4);
    } finally {
      await client.close();
    }
  });

  it('forwards the caller credential headers and the X-Request-Id to the upstream', async () => {
    const response = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        'x-request-id': 'req-fwd-1',
        ...KEY,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tool_a', arguments: {} } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-fwd-1');
    await response.text();
    const seen = stack.fake!.received.find((r) => r.method === 'tools/call' && r.headers['x-request-id'] === 'req-fwd-1');
    expect(seen?.headers['x-cpz-key']).toBe(KEY['x-cpz-key']);
    expect(seen?.headers['x-cpz-secret']).toBe(KEY['x-cpz-secret']);
  });

  it('answers a tools/call the upstream does not finish within timeoutMs with an isError result', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      const result = await client.callTool({ name: 'slow_tool', arguments: {} });
      expect(result.isError).toBe(true);
      // The setting that decided it is named (try-out).
      expect(JSON.stringify(result.content)).toMatch(/did not answer in time \(its timeoutMs, \d+ ms\)/);
    } finally {
      await client.close();
    }
  });

  it('answers tools/call with an isError result while the upstream fails with HTTP 503, and serves tools/list from cache', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    // The catalogue in the cache first, whether or not another test listed it.
    expect(namesOf(await client.listTools())).toHaveLength(7);
    stack.fake!.failWith(503);
    try {
      const result = await client.callTool({ name: 'tool_b', arguments: {} });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('HTTP 503');
      expect(namesOf(await client.listTools())).toHaveLength(7);
    } finally {
      stack.fake!.failWith(undefined);
      await client.close();
    }
  });

  it('reports ready on /readyz once the catalogue is fetched', async () => {
    // Fetched here, whether or not another test listed it first.
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      expect(namesOf(await client.listTools())).toHaveLength(7);
    } finally {
      await client.close();
    }
    const response = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });
});

describe('an upstream whose pagination loops', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ upstream: { cursorLoop: true, tools: [{ definition: tool('only_tool') }] } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('refuses the list with JSON-RPC -32603 naming the loop instead of serving a truncated catalogue', async () => {
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      await expect(client.listTools()).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('pagination loop') });
    } finally {
      await client.close();
    }
  });

  it('answers 503 on /readyz with the reason', async () => {
    // The reason is the last fetch's: one is tried here, whether or not the test above ran.
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      await expect(client.listTools()).rejects.toMatchObject({ code: -32603 });
    } finally {
      await client.close();
    }
    const response = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { reasons: string[] };
    expect(body.reasons[0]).toMatch(/catalogue not fetched yet.*pagination loop/);
  });
});

describe('an upstream that is down', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ upstream: { tools: [{ definition: tool('t') }] } });
    await stack.fake!.close();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers tools/list with -32603 and the upstream named, and keeps serving', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await fetch(stack.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...KEY },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      const body = await response.text();
      expect(body).toContain('-32603');
      expect(body).toContain('upstream cpzai');
    }
    expect((await fetch(`${stack.gatewayUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.gatewayUrl}/readyz`)).status).toBe(503);
  });
});

describe('a gateway started before its upstream', () => {
  it('turns ready on /readyz once the upstream comes up, without any MCP request', async () => {
    const port = await freePort();
    const platform = await startPlatform({ port: 0 });
    const gateway = await startGatewayWith({
      overrides: {
        upstreams: [{ url: `http://127.0.0.1:${port}/mcp`, restart: { minDelayMs: 50, maxDelayMs: 200 } }],
        scopes: { endpoint: `${platform.url}/v1/me` },
      },
    });
    let upstream: Awaited<ReturnType<typeof startUpstreamServer>> | undefined;
    try {
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(503);
      upstream = await startUpstreamServer({ platformUrl: platform.url, port });
      await vi.waitFor(async () => expect(await (await fetch(`${gateway.url}/readyz`)).json()).toEqual({ status: 'ready' }), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await gateway.close();
      await upstream?.close();
      await platform.close();
    }
  });
});
