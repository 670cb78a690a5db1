/**
 * A live reload lets go of the runtime it retires (robustness try-out: every reload, a no-op SIGHUP
 * included, kept the runtime before it reachable, its catalogues, search index and listings with it:
 * +21 MB a reload at 10,000 tools, out of memory after ~19 reloads under a 512 MB heap). The new pin
 * guard kept the old one it inherits from, and createRuntime's closures kept its options (the old
 * guard among them): each runtime held the one before it, back to the first. Reloads over the same pin
 * store, as swap makes them (reloadInProcess); after a few, the retired runtimes are garbage.
 */
import { afterEach, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { FakeTool } from '../fixtures/fake-upstream.ts';
import { connectEra } from '../helpers/era-client.ts';
import { inProcessGateway, reloadInProcess, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';
import { collectGarbage } from '../helpers/collect-garbage.ts';
import { waitFor } from '../helpers/wait.ts';

const tools: FakeTool[] = Array.from({ length: 50 }, (_, i) => ({
  definition: {
    name: `tool_${i}`,
    description: `Looks up record kind ${i} by its id.`,
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    annotations: { readOnlyHint: i % 2 === 0 },
  } as Tool,
  call: () => ({ content: [{ type: 'text', text: 'ok' }] }),
}));

let gateway: InProcessGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** What a client does with a runtime: lists the tools on both endpoints and searches, so its catalogue, listings and search index exist. */
async function use(served: InProcessGateway): Promise<void> {
  for (const url of [served.mcpUrl, served.compactUrl]) {
    const client = await connectEra('modern', url, FULL_KEY);
    try {
      expect((await client.listTools()).length).toBeGreaterThan(0);
      if (url === served.compactUrl) expect((await client.callTool('search_tools', { query: 'record kind 7' })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }
}

it('retired runtimes are collected: a reload keeps nothing of the runtime before it', async () => {
  gateway = inProcessGateway({ upstreams: [{ health: { intervalMs: 0 } }] }, { fake: { tools } });
  const served = gateway;
  await served.runtime.startOAuth(served.gatewayUrl);
  await use(served);
  // Weak, so the test itself keeps none of them. The state, not the Runtime: what kept a runtime were closures over its scope, not its handle.
  const retired: WeakRef<object>[] = [];
  for (let i = 0; i < 4; i++) {
    retired.push(new WeakRef(served.runtime.state), new WeakRef(served.runtime.state.pins));
    await reloadInProcess(served, structuredClone(served.runtime.state.config), {});
    await use(served);
  }
  // Collected once nothing refers to them: whatever of theirs is still settling (a closed stream, a timer) ends first.
  await waitFor(
    'the retired runtimes and their pin guards to be collected',
    async () => {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      return retired.every((ref) => ref.deref() === undefined);
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  ).catch(() => undefined);
  const named = (i: number) => `${i % 2 === 0 ? 'runtime state' : 'pin guard'} of reload ${i >> 1}`;
  expect(retired.map((ref, i) => `${named(i)}: ${ref.deref() === undefined ? 'collected' : 'kept'}`)).toEqual(retired.map((_, i) => `${named(i)}: collected`));
});
