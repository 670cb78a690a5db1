/**
 * The real reload (startGateway + gateway.reload, what SIGHUP runs) lets go of each configuration it
 * replaces, and so of the runtime built for it (robustness try-out: every reload, a no-op SIGHUP
 * included, kept the runtime before it, catalogues and search index with it: +21 MB a reload at 10,000
 * tools, out of memory after ~19 reloads under a 512 MB heap). Reloads that keep the upstream's
 * connection and catalogue (the same settings) and that hand it new per-call settings (`repolicy`).
 * A configuration is held by its runtime (`state.config`) and by nothing a later runtime keeps.
 */
import { afterAll, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../../config/types.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { fakeUpstream, type FakeTool } from '../../fixtures/fake-upstream.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { ANY_BEARER, anonymousGatewayConfig } from '../../helpers/stack.ts';
import { collectGarbage } from '../../helpers/collect-garbage.ts';
import { waitFor } from '../../helpers/wait.ts';

const tools: FakeTool[] = Array.from({ length: 50 }, (_, i) => ({
  definition: {
    name: `tool_${i}`,
    description: `Looks up record kind ${i} by its id.`,
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  } as Tool,
  call: () => ({ content: [{ type: 'text', text: 'ok' }] }),
}));
const upstream = fakeUpstream({ tools });

const config = (timeoutMs: number): GatewayConfig =>
  anonymousGatewayConfig({
    compact: { codeMode: { enabled: false } },
    upstreams: [{ name: 'records', url: 'http://records.upstream.invalid/mcp', timeoutMs, health: { intervalMs: 0 } }],
  });

let gateway: RunningGateway | undefined;
afterAll(async () => {
  await gateway?.close();
  await upstream.close();
});

/** Lists the tools on both endpoints and searches, so the serving runtime's catalogue, listings and search index exist. */
async function use(served: RunningGateway): Promise<void> {
  for (const path of ['/mcp', '/mcp/compact']) {
    const client = await connectV2(`${served.url}${path}`, ANY_BEARER);
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      if (path === '/mcp/compact') expect((await client.callTool({ name: 'search_tools', arguments: { query: 'record kind 7' } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }
}

it('replaced configurations are collected after reloads that keep and that repolicy the upstream', async () => {
  gateway = await startGateway(config(30_000), { upstreamTransport: () => upstream.fetch });
  const served = gateway;
  await use(served);
  // Weak, so the test itself keeps none of them. keep, repolicy, keep, repolicy, keep.
  const replaced: WeakRef<GatewayConfig>[] = [];
  for (const timeoutMs of [30_000, 20_000, 20_000, 30_000, 30_000]) {
    const next = config(timeoutMs);
    replaced.push(new WeakRef(next));
    await served.reload(next);
    await use(served);
  }
  // The last one serves; the one before it may still be retiring.
  const gone = replaced.slice(0, -2);
  await waitFor(
    'the replaced configurations to be collected',
    async () => {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      return gone.every((ref) => ref.deref() === undefined);
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  ).catch(() => undefined);
  expect(gone.map((ref, i) => `reload ${i + 1}: ${ref.deref() === undefined ? 'collected' : 'kept'}`)).toEqual(
    gone.map((_, i) => `reload ${i + 1}: collected`),
  );
});
