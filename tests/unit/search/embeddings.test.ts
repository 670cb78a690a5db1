/**
 * The external semantic arm (search/embeddings.ts) against a real HTTP server this test starts on
 * 127.0.0.1, speaking the OpenAI-compatible `POST /v1/embeddings`: its vectors find a tool no word of the
 * query names, only changed tools are embedded again, and a server that is down or too slow leaves the
 * search to the index (same answer as without it), counted and reported, never thrown.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { buildToolIndex, EmbeddingSearch, type SearchableTool } from '../../../search/index.ts';

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

type Toy = { url: string; inputs: string[]; server: Server; hang: boolean };
const started: Toy[] = [];
async function startToy(): Promise<Toy> {
  const toy = { url: '', inputs: [] as string[], server: undefined as unknown as Server, hang: false };
  toy.server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (toy.hang) return;
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
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

describe('external embeddings', () => {
  it("ranks by the endpoint's vectors, fused with the lexical ranking", async () => {
    const toy = await startToy();
    const index = buildToolIndex(tools);
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' });
    expect(await arm.prepare(tools)).toBe(true);
    expect(index.search('automobile')).toEqual([]);
    expect((await arm.search(index, 'automobile'))[0]?.name).toBe('rent_car');
    expect((await arm.search(index, 'forecast for Paris'))[0]?.name).toBe('get_weather');
    expect(arm.failures).toBe(0);
  });

  it('embeds only the tools whose text changed', async () => {
    const toy = await startToy();
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' });
    await arm.prepare(tools);
    expect(toy.inputs).toHaveLength(3);
    const next = [...tools.slice(0, 2), { name: 'list_orders', description: 'Orders of an account, newest first.' }];
    await arm.prepare(next);
    expect(toy.inputs).toHaveLength(4);
    expect(toy.inputs[3]).toMatch(/newest first/);
  });

  it('answers from the index alone when the endpoint is down, counting and reporting it', async () => {
    const toy = await startToy();
    const failures: { stage: string; reason: string }[] = [];
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy' }, (f) => failures.push(f));
    const index = buildToolIndex(tools);
    await arm.prepare(tools);
    toy.server.closeAllConnections();
    await new Promise((resolve) => toy.server.close(resolve));
    await expect(arm.search(index, 'weather in Paris')).resolves.toEqual(index.search('weather in Paris'));
    expect(arm.failures).toBe(1);
    expect(failures).toEqual([{ stage: 'query', reason: expect.any(String) }]);
    // Cached tools need no request; a changed one while the endpoint is down: the index alone, no error.
    expect(await arm.prepare(tools)).toBe(true);
    expect(await arm.prepare([...tools.slice(0, 2), { name: 'list_orders', description: 'Changed.' }])).toBe(false);
    await expect(arm.search(index, 'orders')).resolves.toEqual(index.search('orders'));
    expect(arm.failures).toBe(2);
  });

  it('gives up on a slow endpoint after its timeout', async () => {
    const toy = await startToy();
    const arm = new EmbeddingSearch({ baseUrl: toy.url, model: 'toy', timeoutMs: 200 });
    const index = buildToolIndex(tools);
    await arm.prepare(tools);
    toy.hang = true;
    await expect(arm.search(index, 'orders')).resolves.toEqual(index.search('orders'));
    expect(arm.failures).toBe(1);
  });
});
