/**
 * The `ttlMs` of a private tools/list (SEP-2549, 2026-07-28 server/utilities/caching; mcp/server.ts
 * `privateTtlMs`): what is left of the caller's scope entry (`scopes.ttlMs`) and of the catalogue copy
 * served (the upstream's hint), the shorter; 0 when either is not known. Through the real handler in
 * process, on both surfaces, on the fast path (plain and gzip) and the SDK path, with the clock faked
 * (`Date` only: scope entries, the store's TTLs and catalogue expiry all read it; timers run), so every
 * value is exact. The scope endpoint is a loopback stand-in (tests/fixtures/scope-endpoint.ts).
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { waitFor } from '../helpers/wait.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const T0 = Date.UTC(2026, 6, 28, 9, 0, 0);
/** The upstream's tools/list hint (public: one catalogue copy for everyone) and the scope entries' life. */
const CATALOG_TTL_MS = 50_000;
const SCOPE_TTL_MS = 20_000;
const CONFIG_KEY = { 'x-cpz-key': 'k_config', 'x-cpz-secret': 'config-secret-0123' };

/** Enough long descriptions that the listing goes out in gzip when accepted (listing-gzip.ts, 16 KiB and up). */
const TOOLS = Array.from({ length: 40 }, (_, i) => ({
  definition: {
    name: `read_${i}`,
    description: `Reads page ${i} of the ledger: ${'entries, balances and their history, one page at a time. '.repeat(8)}`,
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    _meta: { 'ai.cpz/tool': { requiredScopes: ['ledger:read'] } },
  } as Tool,
}));

const at = (ms: number) => vi.setSystemTime(T0 + ms);
const key = (name: string) => ({ 'x-cpz-key': name, 'x-cpz-secret': 'any' });

interface Listed {
  status: number;
  encoding: string | null;
  result: { tools?: unknown[]; ttlMs?: number; cacheScope?: string };
  text: string;
}

/** One tools/list of `era` with `credential`, on `/mcp` or `/mcp/compact`; the JSON-RPC result and the body as text. */
async function list(
  gateway: InProcessGateway,
  credential: Record<string, string>,
  options: { surface?: 'full' | 'compact'; era?: 'modern' | 'legacy'; acceptEncoding?: string } = {},
): Promise<Listed> {
  const { headers, body } = rpc(options.era ?? 'modern', 1, 'tools/list');
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  const url = options.surface === 'compact' ? gateway.compactUrl : gateway.mcpUrl;
  const response = await gateway.fetch(
    new Request(url, {
      method: 'POST',
      headers: { ...headers, ...credential, ...(options.acceptEncoding ? { 'accept-encoding': options.acceptEncoding } : {}) },
      body: JSON.stringify(body),
    }),
  );
  const raw = Buffer.from(await response.arrayBuffer());
  const encoding = response.headers.get('content-encoding');
  const text = (encoding === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
  const json = response.headers.get('content-type')?.startsWith('text/event-stream') ? /^event: message\ndata: (.*)\n\n$/s.exec(text)?.[1] : text;
  const message = JSON.parse(json ?? 'null') as { result?: Listed['result']; error?: unknown };
  expect(message.error).toBeUndefined();
  return { status: response.status, encoding, result: message.result!, text };
}

const ttlOf = async (...args: Parameters<typeof list>) => (await list(...args)).result.ttlMs;

let scopes: ScopeEndpoint;
beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
  scopes = await startScopeEndpoint({ reader: ['ledger:read'], writer: ['ledger:read'], late: ['ledger:read'], vaulted: ['vault:read'] });
});
afterAll(async () => {
  vi.useRealTimers();
  await scopes?.close();
});

describe.each([
  { path: 'fast path', fastPath: true },
  { path: 'SDK path', fastPath: false },
])('a private tools/list on the $path', ({ fastPath }) => {
  // A gateway of each test's own, started at 0: each test tells its own story of scope entries and catalogue copies.
  let gateway: InProcessGateway;
  beforeEach(() => {
    at(0);
    gateway = inProcessGateway(
      {
        scopes: { endpoint: scopes.url, ttlMs: SCOPE_TTL_MS },
        credentials: { apiKeys: [{ name: 'config', key: CONFIG_KEY['x-cpz-key'], secret: CONFIG_KEY['x-cpz-secret'], scopes: ['ledger:read'] }] },
        upstreams: [{ scopes: { failureMode: 'open' } }],
        dispatch: { fastPath },
      },
      { fake: { tools: TOOLS, toolsListHint: { ttlMs: CATALOG_TTL_MS, cacheScope: 'public' } } },
    );
  });
  afterEach(() => gateway?.close());

  it("says what is left of the caller's scope entry, counting down, on both surfaces, each caller its own", async () => {
    at(0);
    const first = await list(gateway, key('reader'));
    expect(first.result).toMatchObject({ ttlMs: SCOPE_TTL_MS, cacheScope: 'private' });
    expect(first.result.tools).toHaveLength(TOOLS.length);
    expect(await ttlOf(gateway, key('reader'), { surface: 'compact' })).toBe(SCOPE_TTL_MS);
    const lookups = scopes.hits;
    at(5000);
    expect(await ttlOf(gateway, key('reader'))).toBe(SCOPE_TTL_MS - 5000);
    expect(await ttlOf(gateway, key('reader'), { surface: 'compact' })).toBe(SCOPE_TTL_MS - 5000);
    // The same entry, older: no lookup of its own.
    expect(scopes.hits).toBe(lookups);
    // Another caller's entry starts now.
    expect(await ttlOf(gateway, key('writer'))).toBe(SCOPE_TTL_MS);
  });

  it('says what is left of the catalogue copy when that ends first (a renewed scope entry outlives it)', async () => {
    // The reader's entry and the catalogue copy, both of T0.
    await list(gateway, key('reader'));
    at(40_000);
    const lookups = scopes.hits;
    // The reader's entry of T0 ended at 20 s: looked up again now (to 60 s); the catalogue copy of T0 ends at 50 s.
    expect(await ttlOf(gateway, key('reader'))).toBe(CATALOG_TTL_MS - 40_000);
    expect(await ttlOf(gateway, key('reader'), { surface: 'compact' })).toBe(CATALOG_TTL_MS - 40_000);
    expect(scopes.hits).toBe(lookups + 1);
  });

  it("a config API key's scopes change only with the configuration: bounded by the catalogue copy alone", async () => {
    // The catalogue copy of T0.
    await list(gateway, CONFIG_KEY);
    at(45_000);
    expect(await ttlOf(gateway, CONFIG_KEY)).toBe(CATALOG_TTL_MS - 45_000);
  });

  it('is 0 while a stale catalogue copy is served (the refresh failed), and counts again once the upstream answers', async () => {
    // The catalogue copy of T0 (to 50 s), and the reader's entry renewed at 40 s (to 60 s).
    await list(gateway, key('reader'));
    at(40_000);
    await list(gateway, key('reader'));
    at(55_000);
    gateway.fake!.failWith(503);
    try {
      const stale = await list(gateway, key('reader'));
      expect(stale.result.tools).toHaveLength(TOOLS.length);
      expect(stale.result.ttlMs).toBe(0);
    } finally {
      gateway.fake!.failWith(undefined);
    }
    // Refetched once the upstream client is back (real time: waitFor's deadline reads performance.now(), not
    // the faked Date): the copy of now lasts to 105 s, so the reader's entry of 40 s (to 60 s) bounds it; until
    // then every answer says 0.
    const seen = new Set<number | undefined>();
    await waitFor(
      'the ttlMs of a refetched catalogue copy',
      async () => {
        const ttlMs = await ttlOf(gateway, key('reader'));
        seen.add(ttlMs);
        return ttlMs === 60_000 - 55_000;
      },
      { intervalMs: 50 },
    );
    expect([...seen].filter((v) => v !== 0 && v !== 60_000 - 55_000)).toEqual([]);
  });

  it("is 0 when the caller's scopes are unknown (the lookup failed; failure mode open serves its last good answer's list)", async () => {
    // Seen valid once; its entry expires (at 20 s), and the lookup that should renew it fails, while the catalogue copy of T0 (to 50 s) is fresh.
    await list(gateway, key('late'));
    at(26_000);
    scopes.mode = 'error';
    try {
      const unknown = await list(gateway, key('late'));
      expect(unknown.result.tools).toHaveLength(TOOLS.length);
      expect(unknown.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    } finally {
      scopes.mode = 'ok';
    }
    // The failure was not remembered (scopes.unknownTtlMs 0): the next list has an entry again (to 46 s, before the copy's 50 s).
    expect(await ttlOf(gateway, key('late'))).toBe(SCOPE_TTL_MS);
  });

  it('is never on a 2025-era answer', async () => {
    at(57_000);
    const legacy = await list(gateway, key('reader'), { era: 'legacy' });
    expect(legacy.result.tools).toHaveLength(TOOLS.length);
    expect(legacy.result).not.toHaveProperty('ttlMs');
    expect(legacy.result).not.toHaveProperty('cacheScope');
  });

  it.runIf(fastPath)("goes out in gzip's per-answer tail: the same answer as plain, its own ttlMs each time", async () => {
    // The reader's entry of T0 (to 20 s).
    await list(gateway, key('reader'));
    at(18_000);
    const plain = await list(gateway, key('reader'));
    const gzipped = await list(gateway, key('reader'), { acceptEncoding: 'gzip' });
    expect(gzipped.encoding).toBe('gzip');
    expect(gzipped.text).toBe(plain.text);
    expect(gzipped.result.ttlMs).toBe(SCOPE_TTL_MS - 18_000);
    at(19_000);
    expect((await list(gateway, key('reader'), { acceptEncoding: 'gzip' })).result.ttlMs).toBe(SCOPE_TTL_MS - 19_000);
  });
});

describe('a private tools/list of several upstreams', () => {
  let gateway: InProcessGateway;
  beforeAll(() => {
    at(0);
    // No scope source: the credential is not checked by the gateway, so only the catalogue copies bound the answer.
    gateway = inProcessGateway(
      {},
      {
        upstreams: {
          quick: inMemoryFakeUpstream({ tools: TOOLS.slice(0, 2), toolsListHint: { ttlMs: 30_000, cacheScope: 'public' } }),
          slow: inMemoryFakeUpstream({ tools: TOOLS.slice(2, 4), toolsListHint: { ttlMs: CATALOG_TTL_MS, cacheScope: 'public' } }),
        },
      },
    );
  });
  afterAll(() => gateway?.close());

  it("says what is left of the soonest upstream's copy, and 0 while one upstream's copy is stale", async () => {
    // Both copies fetched at 0 (the start-up fetch or this list), then 1 s on.
    expect((await list(gateway, key('anyone'))).result.ttlMs).toBe(30_000);
    at(1000);
    const both = await list(gateway, key('anyone'));
    expect(both.result.tools).toHaveLength(4);
    expect(both.result.ttlMs).toBe(30_000 - 1000);
    at(31_000);
    gateway.upstreams.quick!.failWith(503);
    try {
      const partly = await list(gateway, key('anyone'));
      expect(partly.result.ttlMs).toBe(0);
    } finally {
      gateway.upstreams.quick!.failWith(undefined);
    }
  });
});

describe('a pass-through resources/list', () => {
  /** Two upstreams whose resource lists say `public` for 50 s; `vault` can be reached with `vault:read` only. */
  const twoUpstreams = (vaultScopes: string[]) =>
    inProcessGateway(
      {
        scopes: { endpoint: scopes.url, ttlMs: SCOPE_TTL_MS },
        upstreams: [{ scopes: { failureMode: 'open' } }, { scopes: { failureMode: 'open', required: vaultScopes } }],
      },
      {
        upstreams: {
          open: inMemoryFakeUpstream({ tools: [], resources: { 'memo://open': 'o' }, resourcesListHint: { ttlMs: CATALOG_TTL_MS, cacheScope: 'public' } }),
          vault: inMemoryFakeUpstream({ tools: [], resources: { 'memo://vault': 'v' }, resourcesListHint: { ttlMs: CATALOG_TTL_MS, cacheScope: 'public' } }),
        },
      },
    );
  const resources = async (gateway: InProcessGateway, credential: Record<string, string>) => {
    const { headers, body } = rpc('modern', 1, 'resources/list');
    delete headers['x-cpz-key'];
    delete headers['x-cpz-secret'];
    const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...credential }, body: JSON.stringify(body) }));
    const message = (await response.json()) as { result: { resources: { uri: string }[]; ttlMs?: number; cacheScope?: string } };
    return { uris: message.result.resources.map((r) => r.uri).sort(), ttlMs: message.result.ttlMs, cacheScope: message.result.cacheScope };
  };

  it("is private, and no fresher than the caller's scope entry, when which upstreams it holds depends on the caller", async () => {
    at(100_000);
    const gateway = twoUpstreams(['vault:read']);
    try {
      // `vaulted` may reach `vault`; `reader` (ledger:read alone) may not.
      expect(await resources(gateway, key('vaulted'))).toEqual({ uris: ['memo://open', 'memo://vault'], ttlMs: SCOPE_TTL_MS, cacheScope: 'private' });
      expect(await resources(gateway, key('reader'))).toEqual({ uris: ['memo://open'], ttlMs: SCOPE_TTL_MS, cacheScope: 'private' });
      at(105_000);
      expect((await resources(gateway, key('reader'))).ttlMs).toBe(SCOPE_TTL_MS - 5000);
    } finally {
      gateway.close();
    }
  });

  it("keeps the upstreams' own hints when every caller sees the same list", async () => {
    at(200_000);
    const gateway = twoUpstreams([]);
    try {
      const seen = await resources(gateway, key('reader'));
      expect(seen.uris).toEqual(['memo://open', 'memo://vault']);
      expect(seen.cacheScope).toBe('public');
      expect(seen.ttlMs).toBeGreaterThan(SCOPE_TTL_MS);
    } finally {
      gateway.close();
    }
  });
});
