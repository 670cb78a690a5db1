/**
 * An upstream that answers every request with an error (the process up) costs bounded log
 * volume and bounded upstream traffic: a list whose refresh failed is served from its stale copy and asked
 * of the upstream again at most about once a second, and its warning and each failed call's warning are
 * given at most once in 10 s per upstream and kind (with `notLogged`), while every call keeps its own
 * answer; so is the warning of an upstream that never served a list (a stdio command that does not exist). An outage made 2,704 log lines for 1,000 requests, 703 of them list refreshes (observability try-out).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { connectV2 } from '../helpers/clients.ts';
import { inProcessGateway, inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';

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

describe('an upstream that never connected (a stdio command that does not exist)', () => {
  it('warns that its list cannot be fetched once in 10 s, not at every fetch', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ghost-')), 'gateway.yaml');
    writeFileSync(file, 'anonymous: true\nupstreams:\n  - name: ghost\n    command: /nonexistent/node\n    health: { intervalMs: 0 }\n');
    const ghost = inProcessGateway(loadConfig({ path: file, env: {}, overrides: { listen: { host: '127.0.0.1', port: 0 }, log: { level: 'info' } } }));
    try {
      // Each listing asks for the catalogue afresh (there is no copy to serve): 17 lines in 20 s at cache.ttlMs 2000 (try-out).
      for (let i = 0; i < 5; i++) {
        const answer = await ghost.fetch(
          new Request(ghost.mcpUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
            body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
          }),
        );
        await answer.text();
      }
      const failures = ghost.runtime.state.metrics.catalogRefreshes;
      expect((await failures.get()).values.find((v) => v.labels.outcome === 'error')?.value).toBeGreaterThanOrEqual(2);
      expect(ghost.logs.records('list fetch failed')).toHaveLength(1);
    } finally {
      await ghost.close();
    }
  });
});
