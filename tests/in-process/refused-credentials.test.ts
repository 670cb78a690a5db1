/**
 * Guessing a key's secret on the MCP endpoints is bounded (security try-out: 300 wrong secrets for one key
 * in 5.7 s from one address, each a scope lookup, no 429, while the sign-in page had locked the key after
 * 10): `rateLimits.refusedCredentials.perKey` counts refused key pairs per key id and client address; the
 * attempt over it gets 429 with Retry-After, and from then on that key from that address is refused before
 * its secret is checked (no scope lookup), the right secret too. Another address, another key, a request
 * without a credential and a bearer token are not affected. The reference stack in process (the platform
 * stand-in's /v1/me is the scope endpoint), behind a trusted proxy so each test names its client address.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessReferenceStack, routedFetch, type InProcessReferenceStack } from '../helpers/in-process.ts';
import { DATA_KEY, FULL_KEY, rpc } from '../helpers/raw-mcp.ts';

let stack: InProcessReferenceStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function start(): Promise<InProcessReferenceStack> {
  stack = await inProcessReferenceStack({
    gateway: {
      security: { trustedProxies: ['127.0.0.1'] },
      rateLimits: { refusedCredentials: { perKey: { points: 3, durationMs: 900_000, blockMs: 600_000 } } },
    },
  });
  return stack;
}

/** tools/list on /mcp from `address` (X-Forwarded-For through the trusted proxy) with `credential` headers. */
async function list(s: InProcessReferenceStack, address: string, credential: Record<string, string>, era: 'modern' | 'legacy' = 'modern'): Promise<Response> {
  const { headers, body } = rpc(era, 1, 'tools/list');
  for (const name of Object.keys(FULL_KEY)) delete headers[name];
  return s.fetch(new Request(s.mcpUrl, { method: 'POST', headers: { ...headers, ...credential, 'x-forwarded-for': address }, body: JSON.stringify(body) }));
}

const wrong = (i: number) => ({ ...FULL_KEY, 'x-cpz-secret': `guess-${i}` });

async function scopeLookups(s: InProcessReferenceStack): Promise<number> {
  const metrics = await (await routedFetch(`${s.gatewayUrl}/metrics`)).text();
  return [...metrics.matchAll(/^mcp_scope_lookups_total\{result="(?!hit)[^"]*"\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('rateLimits.refusedCredentials.perKey', () => {
  it('answers 429 past the budget, then refuses that key from that address before its secret is checked, the right one too', async () => {
    const s = await start();
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await list(s, '198.51.100.1', wrong(i))).status);
    expect(first).toEqual([401, 401, 401]);
    const over = await list(s, '198.51.100.1', wrong(3));
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(590);
    const error = ((await over.json()) as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(-32000);
    expect(error.message.toLowerCase()).toContain('too many refused secrets for this x-cpz-key from this address');
    expect(error.message).not.toContain('guess-');
    const lookups = await scopeLookups(s);
    // The right secret, both eras: refused unchecked; nothing asked of the scope endpoint.
    expect((await list(s, '198.51.100.1', FULL_KEY)).status).toBe(429);
    expect((await list(s, '198.51.100.1', FULL_KEY, 'legacy')).status).toBe(429);
    expect((await list(s, '198.51.100.1', wrong(4))).status).toBe(429);
    expect(await scopeLookups(s)).toBe(lookups);
    // The key id as the credential carries it (trimmed): a padded one is the same key (review: it had a budget of its own).
    expect((await list(s, '198.51.100.1', { ...FULL_KEY, 'x-cpz-key': 'cpz_demo_full\u00a0\u00a0' })).status).toBe(429);
    expect((await list(s, '198.51.100.1', { ...FULL_KEY, 'x-cpz-key': '  cpz_demo_full' })).status).toBe(429);
    expect(await scopeLookups(s)).toBe(lookups);
    // The same key from elsewhere, and another key from the same address, are served.
    expect((await list(s, '198.51.100.2', FULL_KEY)).status).toBe(200);
    expect((await list(s, '198.51.100.1', DATA_KEY)).status).toBe(200);
    const metrics = await (await routedFetch(`${s.gatewayUrl}/metrics`)).text();
    // Every 429: the one over the budget, then the five refused unchecked.
    expect(metrics).toMatch(/^mcp_rate_limited_total\{budget="refused_credentials_per_key"\} 6$/m);
  });

  it('bounds a burst sent at once as a sequence: the right secret among 60 guesses is refused unchecked, not answered', async () => {
    // Review: counted only once refused, 60 guesses at once were all checked, the right one (46th) answered 200.
    const s = await start();
    const burst = Array.from({ length: 60 }, (_, i) => list(s, '198.51.100.9', i === 45 ? FULL_KEY : wrong(i)));
    const statuses = (await Promise.all(burst)).map((r) => r.status);
    expect(statuses.filter((x) => x === 401)).toHaveLength(3);
    expect(statuses[45]).toBe(429);
    expect(statuses.filter((x) => x === 429)).toHaveLength(57);
    // A valid client's cold burst (nothing cached) joins one check: served whole, however many past the budget.
    const cold = await Promise.all(Array.from({ length: 10 }, () => list(s, '198.51.100.10', DATA_KEY)));
    expect(cold.map((r) => r.status)).toEqual(Array(10).fill(200));
    // Once verified (a live cached answer) no point is spent at all.
    const valid = await Promise.all(Array.from({ length: 10 }, () => list(s, '198.51.100.10', DATA_KEY)));
    expect(valid.map((r) => r.status)).toEqual(Array(10).fill(200));
  });

  it('counts an IPv6 client by its /64, and never counts a request without a credential or a bearer token', async () => {
    const s = await start();
    for (let i = 0; i < 3; i++) expect((await list(s, '2001:db8:1::1', wrong(i))).status).toBe(401);
    expect((await list(s, '2001:db8:1:0:ffff::2', wrong(9))).status).toBe(429);
    for (let i = 0; i < 6; i++) {
      expect((await list(s, '198.51.100.7', {})).status).toBe(401);
      expect((await list(s, '198.51.100.7', { authorization: `Bearer not-a-token-${i}` })).status).toBe(401);
    }
    expect((await list(s, '198.51.100.7', FULL_KEY)).status).toBe(200);
  });
});
