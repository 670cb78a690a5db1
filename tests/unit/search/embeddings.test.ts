/**
 * The external semantic arm (search/semantic/embeddings.ts) against a real HTTP server this test starts on
 * 127.0.0.1, speaking the OpenAI-compatible `POST /v1/embeddings`: its vectors find a tool no word of the
 * query names, only changed tools are embedded again, and a server that is down or too slow leaves the
 * search to the index (same answer as without it), counted and reported, never thrown.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { buildToolIndex, EmbeddingSearch, type DenseVectors, type SearchableTool, type ToolIndex, type VectorStore } from '../../../search/index.ts';

/** A toy embedding model: words hashed into 512 dimensions, with a few words given one meaning. */
const SAME = { automobile: 'car', vehicle: 'car', auto: 'car', forecast: 'weather' } as Record<string, string>;
function toyEmbedding(text: string): number[] {
  const v = new Array<number>(512).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const word = SAME[raw] ?? raw;
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % 512] += 1;
  }
  return v;
}

type Toy = { url: string; inputs: string[]; targets: string[]; server: Server; hang: boolean };
const started: Toy[] = [];
async function startToy(): Promise<Toy> {
  const toy = { url: '', inputs: [] as string[], targets: [] as string[], server: undefined as unknown as Server, hang: false };
  toy.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (toy.hang) return;
      toy.targets.push(req.url!);
      if (req.method !== 'POST' || req.url!.split('?')[0] !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      toy.inputs.push(...input);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model, data: input.map((text, index) => ({ object: 'embedding', index, embedding: toyEmbedding(text) })) }));
    });
  });
  await new Promise<void>((resolve) => toy.server.listen(0, '127.0.0.1', resolve));
  toy.url = `http://127.0.0.1:${(toy.server.address() as AddressInfo).port}/v1`;
  started.push(toy);
  return toy;
}
afterEach(async () => {
  for (const toy of started.splice(0)) {
    toy.server.closeAllConnections();
    await new Promise((resolve) => toy.server.close(resolve));
  }
});

const tools: SearchableTool[] = [
  { name: 'rent_car', description: 'Book a rental car at an airport.' },
  { name: 'get_weather', description: 'Current conditions and the weather for a city.' },
  { name: 'list_orders', description: 'Orders of an account.' },
];

/** A search as the gateway makes it (gateway/catalog/search-index-cache.ts): the index with the arm's
 *  vectors when it has them, the index alone when not. */
async function searchWith(arm: EmbeddingSearch, index: ToolIndex, vectors: DenseVectors | undefined, query: string) {
  const q = vectors && (await arm.queryVector(query, vectors));
  return index.search(query, q && vectors ? { vectors: { tools: vectors, query: q } } : {});
}

describe('external embeddings', () => {
  it("ranks by the endpoint's vectors, fused with the lexical ranking", async () => {
    const toy = await startToy();
    // Without the built-in word arm, which finds the car by itself (word-vectors.test.ts).
    const index = buildToolIndex(tools, { wordWeight: 0 });
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' });
    const vectors = await arm.vectorsFor(tools);
    expect(vectors?.dim).toBe(512);
    expect(index.search('automobile')).toEqual([]);
    expect((await searchWith(arm, index, vectors, 'automobile'))[0]?.name).toBe('rent_car');
    expect((await searchWith(arm, index, vectors, 'forecast for Paris'))[0]?.name).toBe('get_weather');
    expect(arm.failures).toBe(0);
  });

  it("appends /embeddings to the base URL's path and keeps its query (Azure OpenAI's api-version)", async () => {
    const toy = await startToy();
    await new EmbeddingSearch({ baseUrl: `${toy.url}/?api-version=2024-02-01`, model: 'toy' }).vectorsFor(tools);
    expect(toy.targets).toEqual(['/v1/embeddings?api-version=2024-02-01']);
  });

  it('embeds only the tools whose text changed', async () => {
    const toy = await startToy();
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' });
    await arm.vectorsFor(tools);
    expect(toy.inputs).toHaveLength(3);
    const next = [...tools.slice(0, 2), { name: 'list_orders', description: 'Orders of an account, newest first.' }];
    await arm.vectorsFor(next);
    expect(toy.inputs).toHaveLength(4);
    expect(toy.inputs[3]).toMatch(/newest first/);
  });

  it('takes tool vectors from the shared store by content hash: another process embeds nothing again', async () => {
    const toy = await startToy();
    const shared = new Map<string, Float32Array>();
    const store: VectorStore = { get: async (k) => shared.get(k), set: async (k, v) => void shared.set(k, v) };
    const first = await new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' }, undefined, store).vectorsFor(tools);
    expect(toy.inputs).toHaveLength(3);
    expect(shared.size).toBe(3);
    const restarted = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' }, undefined, store);
    expect(await restarted.vectorsFor(tools)).toEqual(first);
    expect(toy.inputs).toHaveLength(3);
    // Another model is another key: nothing of the first model's is reused.
    await new EmbeddingSearch({ baseUrl: toy.url, model: 'other' }, undefined, store).vectorsFor(tools);
    expect(toy.inputs).toHaveLength(6);
  });

  it('embeds what a failing store cannot give, as a cache miss', async () => {
    const toy = await startToy();
    const store: VectorStore = { get: async () => Promise.reject(new Error('down')), set: async () => Promise.reject(new Error('down')) };
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' }, undefined, store);
    expect((await arm.vectorsFor(tools))?.dim).toBe(512);
    expect(arm.failures).toBe(0);
  });

  it('answers from the index alone when the endpoint is down, counting and reporting it', async () => {
    const toy = await startToy();
    const failures: { stage: string; reason: string }[] = [];
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' }, (f) => failures.push(f));
    const index = buildToolIndex(tools);
    const vectors = await arm.vectorsFor(tools);
    toy.server.closeAllConnections();
    await new Promise((resolve) => toy.server.close(resolve));
    await expect(searchWith(arm, index, vectors, 'weather in Paris')).resolves.toEqual(index.search('weather in Paris'));
    expect(arm.failures).toBe(1);
    expect(failures).toEqual([{ stage: 'query', reason: expect.any(String) }]);
    // Cached tools need no request; a changed one while the endpoint is down: no vectors, no error.
    expect(await arm.vectorsFor(tools)).toEqual(vectors);
    expect(await arm.vectorsFor([...tools.slice(0, 2), { name: 'list_orders', description: 'Changed.' }])).toBeUndefined();
    expect(arm.failures).toBe(2);
  });

  it('never reports the key: a key no header can carry fails with a reason that does not quote it (review)', async () => {
    const toy = await startToy();
    const failures: { stage: string; reason: string }[] = [];
    const apiKey = 'sk-proj-REALKEY123\nsk-proj-OTHER456';
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy', apiKey }, (f) => failures.push(f));
    expect(await arm.vectorsFor(tools)).toBeUndefined();
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).not.toContain('REALKEY123');
    expect(failures[0]!.reason).not.toContain('OTHER456');
    toy.server.closeAllConnections();
    await new Promise((resolve) => toy.server.close(resolve));
  });

  it('gives up on a slow endpoint after its timeout', async () => {
    const toy = await startToy();
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy', timeoutMs: 200 });
    const index = buildToolIndex(tools);
    const vectors = await arm.vectorsFor(tools);
    toy.hang = true;
    await expect(searchWith(arm, index, vectors, 'orders')).resolves.toEqual(index.search('orders'));
    expect(arm.failures).toBe(1);
  });
});
