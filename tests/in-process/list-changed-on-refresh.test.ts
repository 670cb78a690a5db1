/**
 * A catalogue refresh that finds another tool list tells 2026-07-28 `subscriptions/listen` callers
 * (`notifications/tools/list_changed`) though the upstream sent no list_changed: the gateway advertises
 * `tools.listChanged`, and an upstream that cannot announce its changes (or does not) changed all the same
 * (a try-out's listener heard nothing for a new tool the listing already served). A refresh that finds the
 * same list says nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

const tool = (name: string) => ({ definition: { name, description: `the ${name} tool`, inputSchema: { type: 'object' } } as Tool });
let current = [tool('get_time')];
let gateway: InProcessGateway;
const listening = new AbortController();

beforeAll(() => {
  gateway = inProcessGateway(
    { anonymous: true, upstreams: [{ health: { intervalMs: 0 }, catalog: { ttlMs: 50 } }] },
    // A function: the upstream's list changes without a list_changed.
    { fake: { tools: () => current } },
  );
});
afterAll(async () => {
  listening.abort();
  await gateway?.close();
});

async function post(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  const { headers, body } = rpc('modern', method, method, params);
  return gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body), signal }));
}

async function listedNames(): Promise<string[]> {
  const [message] = await messagesOf(await post('tools/list', {}));
  return ((message!.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
}

describe('a refresh that finds another tool list', () => {
  it('notifies subscribed callers once per change, and not for a refresh that found the same list', async () => {
    const stream = await post('subscriptions/listen', { notifications: { toolsListChanged: true } }, listening.signal);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const heard = () => text.split('notifications/tools/list_changed').length - 1;
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })();
    expect(await listedNames()).toEqual(['get_time']);
    // Refreshed past the TTL, unchanged: nothing said.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await listedNames()).toEqual(['get_time']);
    await new Promise((resolve) => setTimeout(resolve, 80));
    await listedNames();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard()).toBe(0);
    // Changed silently: the next refresh finds it and the listener is told.
    current = [tool('get_time'), tool('get_date')];
    await new Promise((resolve) => setTimeout(resolve, 80));
    for (let i = 0; i < 20 && !(await listedNames()).includes('get_date'); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 40 && heard() === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(heard()).toBe(1);
  });
});

describe('a refresh of per-credential lists (an upstream that is sent each caller credential)', () => {
  it('announces one change once, however many credentials find it (review)', async () => {
    let tools = [tool('get_time')];
    const keyed = inProcessGateway(
      {
        credentials: { bearer: true, apiKeys: ['a', 'b'].map((name) => ({ name, token: `tok-${name}-0123456789`, scopes: ['x'] })) },
        upstreams: [{ health: { intervalMs: 0 }, catalog: { ttlMs: 50 } }],
      },
      { fake: { tools: () => tools } },
    );
    const stop = new AbortController();
    try {
      const as = async (name: string, method: string, params: Record<string, unknown>, signal?: AbortSignal) => {
        const { headers, body } = rpc('modern', method, method, params);
        delete headers['x-cpz-key'];
        delete headers['x-cpz-secret'];
        return keyed.fetch(
          new Request(keyed.mcpUrl, {
            method: 'POST',
            headers: { ...headers, authorization: `Bearer tok-${name}-0123456789` },
            body: JSON.stringify(body),
            signal,
          }),
        );
      };
      const listed = async (name: string) => {
        const [message] = await messagesOf(await as(name, 'tools/list', {}));
        return ((message!.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
      };
      expect(await listed('a')).toEqual(['get_time']);
      expect(await listed('b')).toEqual(['get_time']);
      const stream = await as('a', 'subscriptions/listen', { notifications: { toolsListChanged: true } }, stop.signal);
      const reader = stream.body!.getReader();
      let text = '';
      void (async () => {
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) return;
          text += new TextDecoder().decode(value);
        }
      })();
      tools = [tool('get_time'), tool('get_date')];
      await new Promise((resolve) => setTimeout(resolve, 80));
      for (const name of ['a', 'b', 'a', 'b']) {
        for (let i = 0; i < 20 && !(await listed(name)).includes('get_date'); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(text.split('notifications/tools/list_changed').length - 1).toBe(1);
    } finally {
      stop.abort();
      await keyed.close();
    }
  });
});
