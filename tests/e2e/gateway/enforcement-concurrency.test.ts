/**
 * Enforcement under load (issue 13, Done when): 2,000 mixed tools/call from three credentials with
 * different scopes and one the scope endpoint refuses, 16 at a time, through real clients of both eras
 * (raw POSTs for the refused one, which no client can connect with). The recording upstream must see
 * exactly the calls each credential may make; every one of them must succeed. Also the latency rule:
 * a cold credential costs exactly one scope lookup shared by its concurrent requests, a warm one none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { connectV1, connectV2 } from '../../helpers/clients.ts';
import { rawRequest } from '../../helpers/enforcement.ts';
import type { FakeTool } from '../../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const CREDENTIALS = {
  k1: { 'x-cpz-key': 'k1', 'x-cpz-secret': 's1' },
  k2: { 'x-cpz-key': 'k2', 'x-cpz-secret': 's2' },
  k3: { 'x-cpz-key': 'k3', 'x-cpz-secret': 's3' },
  bad: { 'x-cpz-key': 'k_refused', 'x-cpz-secret': 'nope' },
} as const;
type Who = keyof typeof CREDENTIALS;
const TOOLS = ['pub', 'alpha', 'beta'] as const;
const ALLOWED: Record<Who, readonly string[]> = { k1: ['pub', 'alpha'], k2: ['pub', 'beta'], k3: ['pub', 'alpha', 'beta'], bad: [] };

const ran: { tool: string; who: string }[] = [];
const tool = (name: string): FakeTool => ({
  definition: { name, inputSchema: { type: 'object', properties: { who: { type: 'string' } } }, annotations: { readOnlyHint: true } } as Tool,
  call: (args) => {
    ran.push({ tool: name, who: String(args.who) });
    return { content: [{ type: 'text', text: `ok:${name}:${String(args.who)}` }] };
  },
});

let endpoint: ScopeEndpoint;
let stack: Stack;
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ k1: ['a'], k2: ['b'], k3: ['a', 'b'], k4: ['a'] });
  stack = await startStack({
    upstream: { tools: TOOLS.map(tool) },
    scopeEndpoint: endpoint.url,
    gateway: {
      scopes: { failureMode: 'closed' },
      // Hundreds of refused pairs from 127.0.0.1 are the point here, not the budget that bounds guessing.
      rateLimits: { refusedCredentials: { perKey: { points: 100_000, durationMs: 60_000 } } },
      upstreams: [{ scopeRules: { pub: [], alpha: ['a'], beta: ['b'] } }],
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await endpoint?.close();
});

describe('enforcement under concurrency', () => {
  it('2,000 mixed calls, 16 concurrent: no out-of-scope or refused-credential call reaches the upstream, every valid one succeeds', {
    timeout: 240_000,
  }, async () => {
    // The upstream calls of this test: the other test's come before or after it.
    const ranBefore = ran.length;
    const clients = {
      k1: await connectV2(stack.mcpUrl, CREDENTIALS.k1),
      k2: await connectV1(stack.mcpUrl, CREDENTIALS.k2),
      k3: await connectV2(stack.mcpUrl, CREDENTIALS.k3),
    };
    const jobs = Array.from({ length: 2000 }, (_, i) => ({ who: (['k1', 'k2', 'k3', 'bad'] as const)[i % 4]!, tool: TOOLS[Math.floor(i / 4) % 3]! }));
    const outcomes = { ok: 0, refused: 0, unauthorized: 0, wrong: [] as string[] };
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const { who, tool: name } = jobs[next++]!;
        const allowed = ALLOWED[who].includes(name);
        if (who === 'bad') {
          const response = await rawRequest(stack.gatewayUrl, '/mcp', 'modern', 'tools/call', { name, arguments: { who } }, CREDENTIALS.bad);
          await response.body?.cancel();
          if (response.status === 401) outcomes.unauthorized++;
          else outcomes.wrong.push(`bad ${name}: HTTP ${response.status}`);
          continue;
        }
        try {
          const result = (await (clients[who] as typeof clients.k1).callTool({ name, arguments: { who } })) as {
            content: { text?: string }[];
            isError?: boolean;
          };
          if (allowed && !result.isError && result.content[0]?.text === `ok:${name}:${who}`) outcomes.ok++;
          else outcomes.wrong.push(`${who} ${name}: ${JSON.stringify(result).slice(0, 200)}`);
        } catch (error) {
          if (!allowed && (error as { code?: number }).code === -32602) outcomes.refused++;
          else outcomes.wrong.push(`${who} ${name}: ${(error as Error).message}`);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: 16 }, worker));
    } finally {
      await Promise.all(Object.values(clients).map((c) => c.close()));
    }
    const expectedOk = jobs.filter((j) => ALLOWED[j.who].includes(j.tool)).length;
    expect(outcomes.wrong).toEqual([]);
    expect(outcomes.ok).toBe(expectedOk);
    expect(outcomes.unauthorized).toBe(500);
    expect(outcomes.refused).toBe(2000 - 500 - expectedOk);
    // What reached the upstream: exactly the permitted calls, none with the refused credential.
    const reached = ran.slice(ranBefore);
    expect(reached.filter((r) => !ALLOWED[r.who as Who]?.includes(r.tool))).toEqual([]);
    expect(reached).toHaveLength(expectedOk);
    expect(stack.fake!.received.filter((r) => r.headers['x-cpz-key'] === 'k_refused')).toEqual([]);
  });

  it('a cold credential costs one scope lookup shared by 16 concurrent calls; a warm one costs none', async () => {
    const k4 = { 'x-cpz-key': 'k4', 'x-cpz-secret': 's4' };
    const calls = () =>
      Promise.all(
        Array.from({ length: 16 }, async () => {
          const response = await rawRequest(stack.gatewayUrl, '/mcp', 'modern', 'tools/call', { name: 'alpha', arguments: { who: 'k4' } }, k4);
          expect(response.status).toBe(200);
          await response.text();
        }),
      );
    const cold = endpoint.hits;
    await calls();
    expect(endpoint.hits - cold).toBe(1);
    const warm = endpoint.hits;
    await calls();
    expect(endpoint.hits).toBe(warm);
  });
});
