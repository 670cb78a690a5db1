/**
 * Stable names across reloads (issue 30): a live reload that adds a second upstream renames the first
 * one's tools (`quote` becomes `alpha__quote`), and one that removes it renames them back. Callers of
 * the names served before keep reaching the same tools (aliases, listed and searched nowhere): a steady
 * 10 calls/s by the old names, directly and through call_tool, across both reloads, gets 0 errors.
 * How long calls took across the reload is bench/reload-names.ts's to report, not this test's. Beside the
 * names: a listen stream opened before a reload hears every reload while its configuration retires, and
 * a removed upstream's gauges go once its connection is closed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { loadConfig } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { pacedCalls } from '../../helpers/paced-calls.ts';
import { followSse, messagesOf, openStream, post, rpc } from '../../helpers/raw-mcp.ts';
import { waitFor } from '../../helpers/wait.ts';

const CONFORMANCE_CONFIG = new URL('../../../config/conformance.yaml', import.meta.url).pathname;
const read = (name: string, text: string) => ({
  definition: { name, description: `${name} (read)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } as Tool,
  call: () => ({ content: [{ type: 'text' as const, text }] }),
});

let alpha: FakeUpstream;
let beta: FakeUpstream;
let gateway: RunningGateway;

function config(upstreams: FakeUpstream[]): GatewayConfig {
  return loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: upstreams.map((u) => ({ name: u === alpha ? 'alpha' : 'beta', url: u.url, forwardCredentials: true })),
      log: { level: 'silent' },
    },
  });
}

beforeAll(async () => {
  alpha = await startFakeUpstream({ tools: [read('quote', 'alpha quote'), read('fx_rate', 'alpha fx')] });
  beta = await startFakeUpstream({ tools: [read('headline', 'beta headline'), read('quote', 'beta quote')] });
  gateway = await startGateway(config([alpha]));
});
afterAll(async () => {
  await gateway?.close();
  await alpha?.close();
  await beta?.close();
});

/** One tools/call on `path` (2026-07-28, plain JSON): undefined when it answered a result that is not isError, else what went wrong. */
async function call(path: '/mcp' | '/mcp/compact', name: string, expected: string): Promise<string | undefined> {
  const params = path === '/mcp' ? { name, arguments: {} } : { name: 'call_tool', arguments: { name, arguments: {} } };
  const { headers, body } = rpc('modern', 1, 'tools/call', params);
  const response = await post(`${gateway.url}${path}`, body, headers);
  const [message] = await messagesOf(response);
  if (message?.error) return `${message.error.code} ${message.error.message}`;
  const result = message?.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
  const text = result?.content?.[0]?.text;
  return result?.isError || text !== expected ? `HTTP ${response.status}: ${JSON.stringify(message).slice(0, 300)}` : undefined;
}

/** A 2026-07-28 listen stream for tool list changes on `url`, acknowledged; the caller destroys `stream`. */
async function listenForToolChanges(url: string) {
  const { headers, body } = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
  const stream = await openStream(`${url}/mcp`, body, headers);
  expect(stream.statusCode).toBe(200);
  const messages = followSse(stream);
  const acknowledged = await messages.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
  expect(acknowledged.params?.notifications).toEqual({ toolsListChanged: true });
  return { stream, messages };
}

const toolsChanged = (m: { method?: string }) => m.method === 'notifications/tools/list_changed';

async function list(path: '/mcp' | '/mcp/compact'): Promise<string[]> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  const [message] = await messagesOf(await post(`${gateway.url}${path}`, body, headers));
  return ((message?.result?.tools ?? []) as { name: string }[]).map((t) => t.name);
}

describe('a live reload that adds, then removes, a second upstream', () => {
  it('answers every call by the names served before (10/s, direct and call_tool): 0 errors; the old names are listed nowhere', async () => {
    // Every tool is first served under its one-upstream name.
    expect(await list('/mcp')).toEqual(['quote', 'fx_rate']);
    const upstreamCalls = (upstream: typeof alpha) => upstream.received.filter((r) => r.method === 'tools/call').length;
    // Counted from here: the file's other tests call alpha too.
    const [alphaBefore, betaBefore] = [upstreamCalls(alpha), upstreamCalls(beta)];
    const oldNames = [
      { label: 'quote /mcp', call: () => call('/mcp', 'quote', 'alpha quote') },
      { label: 'fx_rate call_tool', call: () => call('/mcp/compact', 'fx_rate', 'alpha fx') },
    ];
    const first = pacedCalls(100, oldNames);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await gateway.reload(config([alpha, beta]));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const duringTwo = await first.stop();

    expect(await list('/mcp')).toEqual(['alpha__quote', 'alpha__fx_rate', 'beta__headline', 'beta__quote']);
    const { headers, body } = rpc('modern', 2, 'tools/call', { name: 'search_tools', arguments: { query: 'quote fx rate' } });
    const [searched] = await messagesOf(await post(`${gateway.url}/mcp/compact`, body, headers));
    const found = ((searched?.result?.structuredContent as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
    expect(found).toContain('alpha__fx_rate');
    expect(found.filter((name) => !name.includes('__'))).toEqual([]);

    // Names of the two-upstream configuration, and the first ones, across the reload that removes beta.
    const second = pacedCalls(100, [
      ...oldNames,
      { label: 'alpha__quote /mcp', call: () => call('/mcp', 'alpha__quote', 'alpha quote') },
      { label: 'alpha__fx_rate call_tool', call: () => call('/mcp/compact', 'alpha__fx_rate', 'alpha fx') },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await gateway.reload(config([alpha]));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const afterRemoval = await second.stop();

    expect(await list('/mcp')).toEqual(['quote', 'fx_rate']);
    const calls = [...duringTwo, ...afterRemoval];
    expect(calls.length).toBeGreaterThanOrEqual(40);
    expect(calls.filter((c) => c.error).map((c) => `${c.label}: ${c.error}`)).toEqual([]);
    // Every call reached alpha (none was answered by the gateway alone, none went to beta).
    expect(upstreamCalls(alpha) - alphaBefore).toBe(calls.length);
    expect(upstreamCalls(beta) - betaBefore).toBe(0);
  });

  it('tells a 2026-07-28 caller listening for tool list changes that the list changed, on each reload', async () => {
    // A listen stream is served by the configuration it was opened under: a reload notifies it, then
    // completes it once that configuration retires, and the caller listens again (on the new one).
    const changed = toolsChanged;
    for (const upstreams of [[alpha, beta], [alpha]]) {
      const { stream, messages } = await listenForToolChanges(gateway.url);
      try {
        expect(messages.seen.filter(changed)).toEqual([]);
        await gateway.reload(config(upstreams));
        await messages.waitFor(changed);
      } finally {
        stream.destroy();
      }
    }
  });

  it('gives an alias no precedence over a name the new configuration serves', async () => {
    await gateway.reload(config([alpha, beta]));
    // `quote` was alpha's; beta's own `quote` is beta__quote, and the bare name still means alpha's.
    expect(await call('/mcp', 'quote', 'alpha quote')).toBeUndefined();
    expect(await call('/mcp', 'beta__quote', 'beta quote')).toBeUndefined();
    await gateway.reload(config([alpha]));
  });
});

// A gateway of this block's own: its reloads change no other test's history (the alias test reads it).
describe('a reload and what outlives it', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(config([alpha]));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('announces a second reload on a listen stream opened before the first, while its configuration retires', async () => {
    const { stream, messages } = await listenForToolChanges(gateway.url);
    const changed = toolsChanged;
    try {
      await gateway.reload(config([alpha, beta]));
      await messages.waitFor(changed);
      await gateway.reload(config([alpha]));
      await waitFor('a second tools/list_changed on the same stream', () => messages.seen.filter(changed).length >= 2, { timeoutMs: 5000 });
    } finally {
      stream.destroy();
    }
  });

  it('announces nothing for a reload of the same configuration, and the next reload that changes it once', async () => {
    const { stream, messages } = await listenForToolChanges(gateway.url);
    const changed = toolsChanged;
    try {
      await gateway.reload(config([alpha]));
      await gateway.reload(config([alpha]));
      await gateway.reload(config([alpha, beta]));
      await messages.waitFor(changed);
      // The stream is ordered: a notification of either no-op reload would have come first.
      expect(messages.seen.filter(changed)).toHaveLength(1);
    } finally {
      stream.destroy();
      await gateway.reload(config([alpha]));
    }
  });

  it("drops a removed upstream's gauges once its connection is closed (a stale mcp_upstream_up would alert forever)", async () => {
    await gateway.reload(config([alpha, beta]));
    const metrics = async () => (await fetch(`${gateway.url}/metrics`)).text();
    await waitFor('beta to be counted', async () => (await metrics()).includes('mcp_upstream_up{upstream="beta"} 1'));
    await gateway.reload(config([alpha]));
    await waitFor('the gauges of beta to go', async () => !(await metrics()).includes('mcp_upstream_up{upstream="beta"}'), { timeoutMs: 15_000 });
    const text = await metrics();
    expect(text).toContain('mcp_upstream_up{upstream="alpha"} 1');
    for (const gauge of ['mcp_upstream_up', 'mcp_catalog_tools', 'mcp_tools_held', 'mcp_catalog_cache_bytes'])
      expect(text).not.toContain(`${gauge}{upstream="beta"}`);
    // Counters keep their history.
    expect(text).toMatch(/mcp_catalog_refreshes_total\{upstream="beta",outcome="ok"\} [1-9]/);
  });
});

// A gateway of this block's own, reloaded before anything asked it for a name.
describe('a reload right after start', () => {
  let fresh: RunningGateway;
  afterAll(async () => {
    await fresh?.close();
  });

  it('keeps the names of the starting configuration callable though no request listed them yet', async () => {
    fresh = await startGateway(config([alpha]));
    await fresh.reload(config([alpha, beta]));
    const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'quote', arguments: {} });
    const [message] = await messagesOf(await post(`${fresh.url}/mcp`, body, headers));
    expect(message?.error).toBeUndefined();
    expect((message?.result as { content: { text: string }[] }).content[0]!.text).toBe('alpha quote');
  });
});
