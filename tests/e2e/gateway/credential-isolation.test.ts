/**
 * Several credentials with different scopes through one gateway, at once and in turn: each caller
 * only ever sees its own catalogue (no shared mutable state, caches keyed by scope set and digest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DATA_KEY_TOOLS, DEMO_KEYS, connectV1, connectV2, namesOf, type DemoKey } from '../../helpers/clients.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
let fullNames: string[];
const clients: { key: DemoKey; era: string; client: Client | V1Client }[] = [];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await Promise.allSettled(clients.map(({ client }) => client.close()));
  await stack?.close();
});

const expectedFor = (key: DemoKey) => (key === 'full' ? fullNames : key === 'data' ? DATA_KEY_TOOLS : ['get_profile']);

async function list(client: Client | V1Client): Promise<string[]> {
  return namesOf(await (client as Client).listTools(undefined, { cacheMode: 'bypass' } as never));
}

describe('credential isolation', () => {
  it('keeps 300 concurrent tools/list calls on a cold gateway (3 keys x 2 eras) each to its own catalogue', async () => {
    for (const key of Object.keys(DEMO_KEYS) as DemoKey[]) {
      clients.push({ key, era: 'modern', client: await connectV2(stack.mcpUrl, DEMO_KEYS[key]) });
      clients.push({ key, era: 'legacy', client: await connectV1(stack.mcpUrl, DEMO_KEYS[key]) });
    }
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => clients[i % clients.length]!).map(async (c) => ({ key: c.key, names: await list(c.client) })),
    );
    fullNames = answers.find((a) => a.key === 'full')!.names;
    expect(fullNames).toHaveLength(34);
    for (const { key, names } of answers) expect(names).toEqual(expectedFor(key));
  });

  it('keeps 300 alternating calls (full, data, identity, full, ...) each to its own catalogue', async () => {
    for (let i = 0; i < 300; i++) {
      const c = clients[i % clients.length]!;
      expect(await list(c.client)).toEqual(expectedFor(c.key));
    }
  });

  it('looks each credential up at the scope endpoint once, then serves it from the scope cache', async () => {
    const metrics = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    const count = (result: string) => Number(metrics.match(new RegExp(`^mcp_scope_lookups_total\\{result="${result}"\\} (\\d+)`, 'm'))?.[1] ?? 0);
    expect(count('miss')).toBe(3);
    expect(count('hit')).toBeGreaterThan(500);
  });
});
