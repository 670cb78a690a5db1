/**
 * `limits.listenStreamsPerAccount`: the 2026-07-28 `subscriptions/listen` streams one account holds open
 * at once are capped (a tester held 60 on one credential, all acknowledged). Counted per account as the
 * rate budgets are, so a key pair and a bearer token of one account share the cap; past it the listen is
 * refused with HTTP 429 and -32000 naming the key; a stream that closes frees its place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, type InMemoryUpstream, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { eventually } from '../helpers/wait.ts';

const PAIR = { 'x-cpz-key': 'k_alice', 'x-cpz-secret': 'alice-secret' };
const TOKEN = { authorization: 'Bearer tok_alice' };
const BOB = { 'x-cpz-key': 'k_bob', 'x-cpz-secret': 'bob-secret' };

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
const open: AbortController[] = [];

beforeAll(async () => {
  endpoint = await startScopeEndpoint(
    { k_alice: ['ledger:read'], tok_alice: ['ledger:read'], k_bob: ['ledger:read'] },
    { accounts: { k_alice: 'alice', tok_alice: 'alice', k_bob: 'bob' } },
  );
  gateway = inProcessGateway(
    {
      scopes: { endpoint: endpoint.url, accountField: 'key_id', timeoutMs: 30_000 },
      limits: { listenStreamsPerAccount: 2 },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools: [] } },
  );
});
afterAll(async () => {
  for (const stream of open) stream.abort();
  await gateway?.close();
  await endpoint?.close();
});

/** Opens a listen stream as `credential`: the response as soon as its headers arrive; `close` ends the stream. */
async function listen(credential: Record<string, string>, id = 'listen'): Promise<{ response: Response; close: () => void }> {
  const { headers, body } = rpc('modern', id, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  const controller = new AbortController();
  open.push(controller);
  const response = await gateway.fetch(
    new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body), signal: controller.signal }),
  );
  return { response, close: () => controller.abort() };
}

describe('subscriptions/listen streams per account', () => {
  it('holds the cap across credential forms, refuses one more with 429 naming the limit, and frees a place when a stream closes', async () => {
    const first = await listen(PAIR);
    const second = await listen(TOKEN);
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    for (const credential of [PAIR, TOKEN, { ...PAIR, ...TOKEN }]) {
      const refused = await listen(credential, 'one-more');
      expect(refused.response.status).toBe(429);
      const [message] = await messagesOf(refused.response);
      expect(message!.id).toBe('one-more');
      expect(message!.error).toMatchObject({ code: -32000 });
      expect(message!.error!.message).toMatch(/already holds 2 subscriptions\/listen streams open, as many as limits\.listenStreamsPerAccount allows/);
    }
    // Another account has places of its own.
    expect((await listen(BOB)).response.status).toBe(200);
    // Closing a stream frees its place.
    first.close();
    const again = await eventually(
      async () => {
        const attempt = await listen(TOKEN);
        if (attempt.response.status !== 200) await attempt.response.body?.cancel();
        return attempt.response.status;
      },
      (status) => status === 200,
    );
    expect(again).toBe(200);
  }, 30_000);
});

describe('a listen stream whose caller leaves during admission', () => {
  it('frees its place: the caller closed while the gateway awaited the upstreams resource listing to route its resourceSubscriptions', async () => {
    // Two upstreams: a resource URI is routed by listing their resources (catalog/upstream-set.ts), which `ledger` holds here.
    let holdListing: Promise<void> | undefined;
    let listingAsked: () => void = () => {};
    const asked = new Promise<void>((resolve) => (listingAsked = resolve));
    const core = inMemoryFakeUpstream({ tools: [], resources: { 'ledger://entries': 'entries' } });
    const ledger: InMemoryUpstream = {
      ...core,
      fetch: async (input, init) => {
        if (holdListing && typeof init?.body === 'string' && init.body.includes('"resources/list"')) {
          listingAsked();
          await holdListing;
        }
        return core.fetch(input, init);
      },
    };
    const held = inProcessGateway(
      { limits: { listenStreamsPerAccount: 1 }, upstreams: [{ health: { intervalMs: 0 } }, { health: { intervalMs: 0 } }] },
      { upstreams: { ledger, other: inMemoryFakeUpstream({ tools: [] }) } },
    );
    let release: () => void = () => {};
    holdListing = new Promise<void>((resolve) => (release = resolve));
    try {
      const { headers, body } = rpc('modern', 'left', 'subscriptions/listen', { notifications: { resourceSubscriptions: ['ledger://entries'] } });
      const controller = new AbortController();
      const leaving = held
        .fetch(new Request(held.mcpUrl, { method: 'POST', headers: { ...headers, ...PAIR }, body: JSON.stringify(body), signal: controller.signal }))
        .catch(() => undefined);
      await asked;
      controller.abort();
      holdListing = undefined;
      release();
      await leaving;
      // The one place of the account is free: a stream opens, and the one after it is refused (the cap still holds).
      const { headers: h2, body: b2 } = rpc('modern', 'next', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
      const next = new AbortController();
      const opened = await eventually(
        async () => {
          const attempt = await held.fetch(
            new Request(held.mcpUrl, { method: 'POST', headers: { ...h2, ...PAIR }, body: JSON.stringify(b2), signal: next.signal }),
          );
          if (attempt.status !== 200) await attempt.body?.cancel();
          return attempt.status;
        },
        (status) => status === 200,
        3_000,
      );
      expect(opened).toBe(200);
      const refused = await held.fetch(new Request(held.mcpUrl, { method: 'POST', headers: { ...h2, ...PAIR }, body: JSON.stringify(b2) }));
      expect(refused.status).toBe(429);
      await refused.body?.cancel();
      next.abort();
    } finally {
      release();
      await held.close();
    }
  }, 30_000);
});
