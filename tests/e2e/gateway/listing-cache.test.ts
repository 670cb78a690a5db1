/**
 * The built tools/list answers are bounded by bytes (`cache.listingBytes`), and a large JSON listing
 * goes out in gzip when the caller accepts it: through the real gateway over HTTP, 500 callers with
 * 500 different scope sets, the cache's bytes read back from GET /metrics.
 */
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';

const BOUND = 96 * 1024;
const CALLERS = 500;
/** Tool i needs scope `s<i>`; caller n holds the scopes of the set bits of n: 500 different visible sets. */
const SCOPED_TOOLS = 9;
/** Public tools with long descriptions, so that every caller's listing is tens of KiB (compressible, and the bound bites). */
const PUBLIC_TOOLS = 40;

const tool = (name: string, description: string, requiredScopes: string[]): { definition: Tool } => ({
  definition: {
    name,
    description,
    inputSchema: { type: 'object', properties: { limit: { type: 'integer' } } },
    _meta: { 'ai.cpz/tool': { category: 'data', requiredScopes } },
    annotations: { readOnlyHint: true },
  } as Tool,
});
const scopesOf = (n: number) =>
  Array.from({ length: SCOPED_TOOLS }, (_, bit) => bit)
    .filter((bit) => n & (1 << bit))
    .map((bit) => `s${bit}`);
const keyOf = (n: number) => `caller-${n}`;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'listing-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let upstream: FakeUpstream;
let scopes: ScopeEndpoint;
let gateway: RunningGateway;
beforeAll(async () => {
  const tools = [
    ...Array.from({ length: SCOPED_TOOLS }, (_, i) => tool(`scoped_${i}`, `Scoped tool ${i}`, [`s${i}`])),
    ...Array.from({ length: PUBLIC_TOOLS }, (_, i) =>
      tool(`public_${i}`, `Public tool ${i}: ${'reads records of the account and returns them page by page. '.repeat(8)}`, []),
    ),
  ];
  upstream = await startFakeUpstream({ tools });
  scopes = await startScopeEndpoint(Object.fromEntries(Array.from({ length: CALLERS }, (_, n) => [keyOf(n), scopesOf(n)])));
  gateway = await startGatewayWith({
    overrides: { upstreams: [{ name: 'fake', url: upstream.url }], scopes: { endpoint: scopes.url }, cache: { listingBytes: BOUND } },
  });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await scopes?.close();
});

async function toolsList(n: number, acceptEncoding?: string, id: number | string = n) {
  const response = await request(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      'x-cpz-key': keyOf(n),
      'x-cpz-secret': 'secret',
      ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: ENVELOPE } }),
  });
  const raw = Buffer.from(await response.body.arrayBuffer());
  const encoding = response.headers['content-encoding'];
  const text = (encoding === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
  return {
    status: response.statusCode,
    encoding,
    vary: response.headers.vary,
    raw,
    wireBytes: raw.length,
    message: JSON.parse(text) as { id: number | string; result: { tools: { name: string }[] } },
  };
}

async function gauge(name: string): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

const expectedNames = (n: number) =>
  [...scopesOf(n).map((s) => `scoped_${s.slice(1)}`), ...Array.from({ length: PUBLIC_TOOLS }, (_, i) => `public_${i}`)].sort();

describe('the listing cache', () => {
  it(`keeps its bytes under cache.listingBytes while ${CALLERS} scope sets are served, and serves every set right`, async () => {
    let largest = 0;
    for (let batch = 0; batch < CALLERS; batch += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const { status, message } = await toolsList(batch + i);
          expect(status).toBe(200);
          expect(message.result.tools.map((t) => t.name).sort()).toEqual(expectedNames(batch + i));
        }),
      );
      largest = Math.max(largest, await gauge('mcp_listing_cache_bytes'));
    }
    const bytes = await gauge('mcp_listing_cache_bytes');
    const entries = await gauge('mcp_listing_cache_entries');
    expect(bytes).toBeGreaterThan(0);
    expect(Math.max(bytes, largest)).toBeLessThanOrEqual(BOUND);
    // Each listing is ~20 KiB: far fewer than 500 fit, so the bound (not an entry count) decided.
    expect(entries).toBeLessThan(CALLERS / 4);
    // An evicted listing is rebuilt, right.
    const again = await toolsList(0);
    expect(again.message.result.tools.map((t) => t.name).sort()).toEqual(expectedNames(0));
  }, 120_000);

  it('serves a large JSON listing in gzip when Accept-Encoding allows it, the same answer as plain, with its own id', async () => {
    const plain = await toolsList(7);
    const gzipped = await toolsList(7, 'br;q=1, gzip;q=0.5');
    expect(gzipped.encoding).toBe('gzip');
    expect(gzipped.vary).toMatch(/accept-encoding/i);
    expect(plain.encoding).toBeUndefined();
    expect(gzipped.message).toEqual(plain.message);
    expect(gzipped.wireBytes).toBeLessThan(plain.wireBytes / 4);
    // The cached compressed part does not carry the id: another request id comes back as sent.
    const other = await toolsList(7, 'gzip', 'another-id');
    expect(other.encoding).toBe('gzip');
    expect(other.message.id).toBe('another-id');
    expect(other.message.result).toEqual(plain.message.result);
    // One gzip member (curl, for one, reads no concatenated members): the strict single-member reader agrees.
    expect(gunzipSync(gzipped.raw, { finishFlush: 0 }).length).toBeGreaterThan(0);
    const refused = await toolsList(7, 'gzip;q=0, identity');
    expect(refused.encoding).toBeUndefined();
  });
});
