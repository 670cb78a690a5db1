/**
 * A catalogue refresh that finds another tool list tells 2026-07-28 `subscriptions/listen` callers
 * (`notifications/tools/list_changed`) though the upstream sent no list_changed: the gateway advertises
 * `tools.listChanged`, and an upstream that cannot announce its changes (or does not) changed all the same
 * (a try-out's listener heard nothing for a new tool the listing already served). Found by the gateway's
 * own keep-warm refresh (no credential) or a list shared by every caller; never by one caller's private
 * list, which would tell every other caller about it, once per credential (review, try-out). A refresh
 * that finds the same list says nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const tool = (name: string) => ({ definition: { name, description: `the ${name} tool`, inputSchema: { type: 'object' } } as Tool });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let current = [tool('get_time')];
let gateway: InProcessGateway;
const stop = new AbortController();

let endpoint: ScopeEndpoint;

beforeAll(async () => {
  // Platform tokens (the scope endpoint's): a configured key never reaches the upstream, which must tell a from b.
  endpoint = await startScopeEndpoint(Object.fromEntries(['a', 'b'].map((name) => [`tok-${name}-0123456789`, ['x']])));
  gateway = inProcessGateway(
    {
      // The keep-warm refreshes every second (cache.ttlMs / 2, at least 1 s); the upstream's lists expire after 50 ms.
      cache: { ttlMs: 100 },
      credentials: { bearer: true },
      scopes: { endpoint: endpoint.url },
      upstreams: [{ health: { intervalMs: 0 }, catalog: { ttlMs: 50 } }],
    },
    // A function: the upstream's list changes without a list_changed; b is also listed a tool of its own.
    { fake: { tools: (caller: string) => (caller.startsWith('tok-b') ? [...current, tool('b_only')] : current) } },
  );
});
afterAll(async () => {
  stop.abort();
  await gateway?.close();
  await endpoint?.close();
});

async function as(name: string, method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  const { headers, body } = rpc('modern', method, method, params);
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  const auth = { authorization: `Bearer tok-${name}-0123456789` };
  return gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...auth }, body: JSON.stringify(body), signal }));
}

async function listed(name: string): Promise<string[]> {
  const [message] = await messagesOf(await as(name, 'tools/list', {}));
  return ((message!.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
}

/** A listen stream of `name`'s: how many list_changed it has received so far. */
async function listen(name: string): Promise<() => number> {
  const stream = await as(name, 'subscriptions/listen', { notifications: { toolsListChanged: true } }, stop.signal);
  expect(stream.status).toBe(200);
  const reader = stream.body!.getReader();
  let text = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      text += new TextDecoder().decode(value);
    }
  })();
  return () => text.split('notifications/tools/list_changed').length - 1;
}

describe('a change no upstream announced', () => {
  it('is announced once, found by the keep-warm, however many callers list; an unchanged list is not', async () => {
    const [heardA, heardB] = [await listen('a'), await listen('b')];
    expect(await listed('a')).toEqual(['get_time']);
    expect(await listed('b')).toEqual(['get_time', 'b_only']);
    // Refreshes past the TTL that find the same list, the callers' and the keep-warm's: nothing said.
    for (let i = 0; i < 6; i += 1) {
      await listed(i % 2 ? 'a' : 'b');
      await pause(250);
    }
    expect([heardA(), heardB()]).toEqual([0, 0]);
    // Changed silently: each caller's own refresh finds it and says nothing; the keep-warm announces it once.
    current = [tool('get_time'), tool('get_date')];
    for (let i = 0; i < 12; i += 1) {
      await listed(i % 2 ? 'a' : 'b');
      await pause(250);
    }
    expect(await listed('a')).toContain('get_date');
    expect([heardA(), heardB()]).toEqual([1, 1]);
    // An announced change (list_changed) to a third list, then silently back to the second: a change all the same (the
    // first version remembered only what it had announced itself, and said nothing).
    const second = current;
    current = [tool('get_time'), tool('get_week')];
    gateway.fake!.setTools((caller: string) => (caller.startsWith('tok-b') ? [...current, tool('b_only')] : current));
    for (let i = 0; i < 8 && heardA() < 2; i += 1) await pause(250);
    await pause(1500);
    expect([heardA(), heardB()]).toEqual([2, 2]);
    current = second;
    for (let i = 0; i < 12 && heardA() < 3; i += 1) await pause(250);
    expect([heardA(), heardB()]).toEqual([3, 3]);
  });
});
