/**
 * An upstream that answers every request with an error (the process up) costs bounded log
 * volume and bounded upstream traffic: a list whose refresh failed is served from its stale copy and asked
 * of the upstream again at most about once a second, and its warning and each failed call's warning are
 * given at most once in 10 s per upstream and kind (with `notLogged`), while every call keeps its own
 * answer. An outage made 2,704 log lines for 1,000 requests, 703 of them list refreshes (observability try-out).
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV2 } from '../helpers/clients.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'volume', 'x-cpz-secret': 'volume-secret' };
let stack: InProcessGateway;
let client: Client;
let listsFail = false;

beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      // A list the upstream fails to give (a JSON-RPC error) while `listsFail`: the request reaches it, and is counted.
      tools: () => {
        if (listsFail) throw new Error('the catalogue backend is down');
        return [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } }];
      },
      toolsListHint: { ttlMs: 100, cacheScope: 'public' },
    },
    // No health probe: the calls themselves meet the failures.
    gateway: { upstreams: [{ health: { intervalMs: 0 } }], log: { level: 'info' } },
  });
  client = await connectV2(stack.mcpUrl, KEY);
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

const listsAsked = () => stack.fake!.received.filter((r) => r.method === 'tools/list').length;

describe('an upstream failing every request', () => {
  it('is asked for an expired list about once a second, the stale copy serving, with one warning', async () => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    listsFail = true;
    const before = listsAsked();
    const started = performance.now();
    for (let i = 0; i < 40; i++) expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    const seconds = (performance.now() - started) / 1000;
    // One refresh per started second at most (plus the first), not one per request.
    expect(listsAsked() - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(listsAsked() - before).toBeGreaterThanOrEqual(1);
    expect(stack.logs.records('list refresh failed; serving the stale copy')).toHaveLength(1);
    listsFail = false;
  });

  it('answers each failed call, and warns of them once in 10 s', async () => {
    stack.fake!.failWith(503);
    for (let i = 0; i < 20; i++) expect((await client.callTool({ name: 'echo', arguments: {} })).isError).toBe(true);
    expect(stack.logs.records('tools/call failed upstream; answering isError')).toHaveLength(1);
  });
});
