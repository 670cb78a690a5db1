/**
 * Several credentials with different scopes through one gateway, at once and in turn: each caller
 * only ever sees its own catalogue (no shared mutable state, caches keyed by scope set and digest).
 * Sized for a loaded 2-core machine: 60 calls each way (ten per client and era) interleave the six
 * clients as 300 did; 300 took over 30 s there, 60 took 18 s (connecting included) at a load average of 28.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DATA_KEY_TOOLS, DEMO_KEYS, connectV1, connectV2, namesOf, type DemoKey } from '../helpers/clients.ts';
import { inProcessReferenceStack, routedFetch, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

/** tools/list calls per test: each of the six clients (3 keys x 2 eras) ten times. */
const CALLS = 60;
/** Per test: several times the worst run measured (18 s). */
const TIMEOUT_MS = 120_000;

// A cold gateway of each test's own, with the six clients connected (no tools/list yet).
let stack: Stack;
let clients: { key: DemoKey; era: string; client: Client | V1Client }[];

beforeEach(async () => {
  stack = await inProcessReferenceStack();
  clients = [];
  for (const key of Object.keys(DEMO_KEYS) as DemoKey[]) {
    clients.push({ key, era: 'modern', client: await connectV2(stack.mcpUrl, DEMO_KEYS[key]) });
    clients.push({ key, era: 'legacy', client: await connectV1(stack.mcpUrl, DEMO_KEYS[key]) });
  }
}, TIMEOUT_MS);
afterEach(async () => {
  await Promise.allSettled(clients.map(({ client }) => client.close()));
  await stack?.close();
});

/** The full key's catalogue: its 34 tools, as its first client lists them. */
async function fullNames(): Promise<string[]> {
  const names = await list(clients.find((c) => c.key === 'full')!.client);
  expect(names).toHaveLength(34);
  return names;
}

const expectedFor = (key: DemoKey, full: string[]) => (key === 'full' ? full : key === 'data' ? DATA_KEY_TOOLS : ['get_profile']);

/** `calls` tools/list calls in turn (full, data, identity, full, ...), each checked against its own catalogue. */
async function alternate(calls: number, full: string[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const c = clients[i % clients.length]!;
    expect(await list(c.client)).toEqual(expectedFor(c.key, full));
  }
}

async function list(client: Client | V1Client): Promise<string[]> {
  return namesOf(await (client as Client).listTools(undefined, { cacheMode: 'bypass' } as never));
}

describe('credential isolation', { timeout: TIMEOUT_MS }, () => {
  it(`keeps ${CALLS} concurrent tools/list calls on a cold gateway (3 keys x 2 eras) each to its own catalogue`, async () => {
    const answers = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => clients[i % clients.length]!).map(async (c) => ({ key: c.key, names: await list(c.client) })),
    );
    const full = answers.find((a) => a.key === 'full')!.names;
    expect(full).toHaveLength(34);
    for (const { key, names } of answers) expect(names).toEqual(expectedFor(key, full));
  });

  it(`keeps ${CALLS} alternating calls (full, data, identity, full, ...) each to its own catalogue`, async () => {
    await alternate(CALLS, await fullNames());
  });

  it('looks each credential up at the scope endpoint once, then serves it from the scope cache', async () => {
    await alternate(2 * CALLS, await fullNames());
    const metrics = await (await routedFetch(`${stack.gatewayUrl}/metrics`)).text();
    const count = (result: string) => Number(metrics.match(new RegExp(`^mcp_scope_lookups_total\\{result="${result}"\\} (\\d+)`, 'm'))?.[1] ?? 0);
    expect(count('miss')).toBe(3);
    expect(count('hit')).toBeGreaterThanOrEqual(2 * CALLS);
  });
});
