/**
 * Catalogue freshness and process lifecycle: an upstream list_changed invalidates the cached
 * catalogue at once (even inside its TTL); close() lets an in-flight call finish, then stops serving.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { connectV2, namesOf } from '../../helpers/clients.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startStack } from '../../helpers/stack.ts';

const KEY = { 'x-cpz-key': 'life', 'x-cpz-secret': 'life-secret' };
const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

describe('catalogue invalidation', () => {
  it('refetches the catalogue after the upstream sends tools/list_changed, within the 60 s TTL', async () => {
    const stack = await startStack({
      upstream: { tools: [{ definition: tool('first') }], listChanged: true, toolsListHint: { ttlMs: 60_000, cacheScope: 'public' } },
    });
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      expect(namesOf(await client.listTools())).toEqual(['first']);
      stack.fake!.setTools([{ definition: tool('first') }, { definition: tool('second') }]);
      await expect.poll(async () => namesOf(await client.listTools(undefined, { cacheMode: 'bypass' })), { timeout: 5000 }).toEqual(['first', 'second']);
      expect(stack.logs.records('upstream list changed').length).toBeGreaterThan(0);
    } finally {
      await client.close();
      await stack.close();
    }
  });
});

describe('graceful close', () => {
  it('lets a call in flight finish with its result, then refuses new connections', async () => {
    const slow = {
      definition: tool('slow'),
      call: () =>
        new Promise<{ content: { type: 'text'; text: string }[] }>((resolve) => setTimeout(() => resolve({ content: [{ type: 'text', text: 'done' }] }), 400)),
    };
    const stack = await startStack({ upstream: { tools: [slow] } });
    const client = await connectV2(stack.mcpUrl, KEY);
    try {
      const call = client.callTool({ name: 'slow', arguments: {} });
      // In flight means the upstream has it (was: a fixed 100 ms sleep, too short on a loaded machine).
      await waitFor('the call at the upstream', () => stack.fake!.received.some((r) => r.method === 'tools/call'));
      const closed = stack.gateway.close({ reason: 'SIGINT' });
      expect(await call).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
      await closed;
      await expect(fetch(`${stack.gatewayUrl}/healthz`)).rejects.toThrow();
      // Why it closed is in the log, first and last (a gateway that stopped with only "gateway closed" said nothing of why).
      expect(stack.logs.records('gateway closing').map((r) => r.reason)).toEqual(['SIGINT']);
      expect(stack.logs.records('gateway closed').map((r) => r.reason)).toEqual(['SIGINT']);
    } finally {
      await client.close();
      await stack.close();
    }
  });
});

describe('metrics on their own port', () => {
  it('serves /metrics on metrics.port and not on the MCP port', async () => {
    const stack = await startStack({ upstream: { tools: [{ definition: tool('t') }] }, gateway: { metrics: { port: 0 } } });
    try {
      expect(stack.gateway.metricsUrl).toBeDefined();
      const scraped = await fetch(`${stack.gateway.metricsUrl}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('# TYPE mcp_requests_total counter');
      expect((await fetch(`${stack.gatewayUrl}/metrics`)).status).toBe(404);
    } finally {
      await stack.close();
    }
  });
});
