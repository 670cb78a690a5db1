/**
 * A resource URI two upstreams list belongs to the first of them in config order, and stays its own while
 * it is down: a read answers upstream_unavailable (-32603) as a call of its tools does, never the other
 * upstream's copy, even when that one also lists a template matching the URI; resources/list shows the URI once,
 * as that first upstream lists it. The overlap is logged once, not per request or refresh (adversarial-upstream try-out: the URI was listed twice without a word, and
 * once `alpha` was down, `beta` answered for it). In process, 2026-07-28, through the real handler.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway, type ServedUpstream } from '../helpers/in-process.ts';
import { DATA_KEY, FULL_KEY, messagesOf, post, rpc, type JsonRpcMessage } from '../helpers/raw-mcp.ts';
import { waitFor } from '../helpers/wait.ts';

/** An in-memory upstream that can be made to refuse connections, as a server that went away does. */
function switchable(upstream: ServedUpstream): ServedUpstream & { refuse(): void } {
  let refusing = false;
  return {
    fetch: (input, init) =>
      refusing
        ? Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }))
        : upstream.fetch(input, init),
    close: () => upstream.close(),
    refuse: () => void (refusing = true),
  };
}

async function call(
  gateway: InProcessGateway<ServedUpstream>,
  method: string,
  params: Record<string, unknown> = {},
  key: Record<string, string> = FULL_KEY,
): Promise<JsonRpcMessage> {
  const { headers, body } = rpc('modern', 1, method, params);
  return (await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, { ...headers, ...key })))[0]!;
}

const textOf = (message: JsonRpcMessage) => (message.result as { contents?: { text?: string }[] } | undefined)?.contents?.[0]?.text;

let gateway: InProcessGateway<ServedUpstream> | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('a resource URI listed by two upstreams', () => {
  it("is read from the first, answers upstream_unavailable while that one is down (never the other's copy), and is logged once", async () => {
    const alpha = switchable(inMemoryFakeUpstream({ tools: [], resources: { 'cfg://settings': { text: 'alpha settings', name: 'alpha-settings' } } }));
    const beta = inMemoryFakeUpstream({
      tools: [],
      resources: { 'cfg://settings': { text: 'beta settings', name: 'beta-settings' }, 'cfg://other': 'beta other' },
      resourceTemplates: ['cfg://{x}'],
    });
    // alpha's probe finds it gone within 50 ms; its reconnection attempts back off far past this test.
    const g = inProcessGateway<ServedUpstream>(
      { upstreams: [{ health: { intervalMs: 50 }, restart: { minDelayMs: 60_000, maxDelayMs: 60_000 } }, {}] },
      { upstreams: { alpha, beta } },
    );
    gateway = g;
    for (let i = 0; i < 3; i++) {
      // Listed once, as the upstream a read reaches lists it (a client keys resources by URI).
      const listed = (await call(g, 'resources/list')).result as { resources: { uri: string; name: string }[] };
      expect(listed.resources.map((r) => [r.uri, r.name])).toEqual([
        ['cfg://settings', 'alpha-settings'],
        ['cfg://other', 'cfg://other'],
      ]);
    }
    const shared = g.logs.records('listed by more than one upstream');
    expect(shared).toHaveLength(1);
    expect(shared[0]).toMatchObject({ level: 40, count: 1, shared: [{ uri: 'cfg://settings', upstreams: ['alpha', 'beta'] }] });
    expect(textOf(await call(g, 'resources/read', { uri: 'cfg://settings' }))).toBe('alpha settings');

    alpha.refuse();
    const alphaClient = g.runtime.state.upstreams.find((u) => u.client.name === 'alpha')!.client;
    await waitFor('alpha to be down', () => alphaClient.health().state === 'down');
    for (let i = 0; i < 2; i++) {
      const read = await call(g, 'resources/read', { uri: 'cfg://settings' });
      expect(textOf(read)).toBeUndefined();
      expect(read.error).toMatchObject({ code: -32603, data: { kind: 'upstream_unavailable' } });
      expect(JSON.stringify(read.error)).toContain('alpha');
    }
    // A caller that never listed alpha's resources (lists are kept per credential): alpha's all the same (review).
    const stranger = await call(g, 'resources/read', { uri: 'cfg://settings' }, DATA_KEY);
    expect(textOf(stranger)).toBeUndefined();
    expect(stranger.error).toMatchObject({ code: -32603, data: { kind: 'upstream_unavailable' } });
    // What only beta lists or matches is still beta's.
    expect(textOf(await call(g, 'resources/read', { uri: 'cfg://other' }))).toBe('beta other');
    expect(g.logs.records('listed by more than one upstream')).toHaveLength(1);
  });
});
