/**
 * The issue 7 metric families on a gateway's /metrics over real HTTP, and the edge's 401 counted under its
 * route (kept end to end: the in-process fetch of createRuntime showed no http_request_duration_seconds
 * observation for this suite's requests on 2026-12-05, while a listening gateway does; see the rest of the
 * edge in tests/in-process/http-edge.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { followSse, openStream, rpc } from '../../helpers/raw-mcp.ts';
import { waitFor } from '../../helpers/wait.ts';

const LEGACY = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    upstream: {
      tools: [
        { definition: { name: 'echo', inputSchema: { type: 'object' } } },
        {
          definition: { name: 'slow', inputSchema: { type: 'object' } },
          call: async () => {
            await new Promise((resolve) => setTimeout(resolve, 1500));
            return { content: [{ type: 'text', text: 'late' }] };
          },
        },
      ],
    },
    gateway: { upstreams: [{ health: { intervalMs: 0 } }] },
  });
  // One unauthenticated POST, so the 401 series exists.
  await fetch(stack.mcpUrl, { method: 'POST', headers: LEGACY, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
});
afterAll(async () => {
  await stack?.close();
});

describe('GET /metrics', () => {
  it('exposes the issue 7 metric families on /metrics', async () => {
    const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    for (const name of [
      'http_request_duration_seconds',
      'mcp_requests_total',
      'mcp_tool_calls_total',
      'mcp_tool_call_duration_seconds',
      'mcp_upstream_request_duration_seconds',
      'mcp_upstream_errors_total',
      'mcp_scope_lookups_total',
      'mcp_scope_lookup_duration_seconds',
      'mcp_catalog_tools',
      'mcp_catalog_refreshes_total',
      'mcp_search_duration_seconds',
      'mcp_output_schema_violations_total',
      'mcp_advertised_tools',
      'mcp_tools_list_bytes',
      'process_cpu_seconds_total',
    ])
      expect(text).toContain(`# TYPE ${name} `);
    expect(text).toMatch(/^http_request_duration_seconds_count\{route="\/mcp",method="POST",status_code="401"\} [1-9]/m);
  });
});

describe('a client that leaves before its answer', () => {
  it('is counted and logged as 499 (client closed request), not as the 404 no handler sent', async () => {
    const series = async () => {
      const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
      const count = (status: string) =>
        Number(new RegExp(`^http_request_duration_seconds_count\\{route="/mcp",method="POST",status_code="${status}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
      return { left: count('499'), notFound: count('404') };
    };
    const before = await series();
    const { headers, body } = rpc('modern', 7, 'tools/call', { name: 'slow', arguments: {} });
    const controller = new AbortController();
    const sent = fetch(stack.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal }).catch((error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await sent;
    await waitFor('the 499 series to count the request', async () => (await series()).left === before.left + 1);
    expect((await series()).notFound).toBe(before.notFound);
    const line = stack.logs.records('request').find((r) => r.path === '/mcp' && r.status === 499);
    expect(line).toMatchObject({ method: 'POST', status: 499, incomplete: true });
  });
});

describe('the access line', () => {
  it('carries the trace id of an MCP request (here the incoming traceparent: tracing is off), so it joins its trace and audit line', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { headers, body } = rpc('modern', 8, 'tools/list');
    const response = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'access-line-trace' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    await response.text();
    const line = await waitFor('the access line', () => stack.logs.records('request').find((r) => r.requestId === 'access-line-trace'));
    expect(line).toMatchObject({ traceId, status: 200, path: '/mcp' });
    expect(line).not.toHaveProperty('incomplete');
  });

  it('of an event stream its client closed says no incomplete: that is how such a stream ends', async () => {
    const { headers, body } = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const stream = await openStream(stack.mcpUrl, body, { ...headers, 'x-request-id': 'closed-listen-stream' });
    await followSse(stream).waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    stream.destroy();
    const line = await waitFor("the stream's access line", () => stack.logs.records('request').find((r) => r.requestId === 'closed-listen-stream'));
    expect(line).toMatchObject({ status: 200, path: '/mcp' });
    expect(line).not.toHaveProperty('incomplete');
  });
});
