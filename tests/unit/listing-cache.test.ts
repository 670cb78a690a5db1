import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { ListingCache } from '../../gateway/catalog/listing.ts';

/** `n` tools whose JSON is about `n * 1 KiB`. */
const tools = (n: number, tag: string): Tool[] =>
  Array.from({ length: n }, (_, i) => ({ name: `${tag}_${i}`, description: 'x'.repeat(1000), inputSchema: { type: 'object' } }));

describe('ListingCache', () => {
  it('stays under its byte bound once listings are serialised, and counts each listing it pushes out', () => {
    const dropped: string[] = [];
    let bytes = 0;
    const cache = new ListingCache(
      64 * 1024,
      (b) => (bytes = b),
      (reason) => dropped.push(reason),
    );
    for (let i = 0; i < 10; i++) expect(cache.get(`k${i}`, () => tools(20, `t${i}`)).json.length).toBeGreaterThan(20_000);
    expect(bytes).toBeLessThanOrEqual(64 * 1024);
    expect(cache.size).toBeLessThan(4);
    expect(dropped.length).toBe(10 - cache.size);
    expect(new Set(dropped)).toEqual(new Set(['evicted']));
  });

  it('serves a listing larger than the whole bound, keeps none of it and counts it oversized', () => {
    const dropped: string[] = [];
    const cache = new ListingCache(16 * 1024, undefined, (reason) => dropped.push(reason));
    const listing = cache.get('big', () => tools(40, 'big'));
    expect(JSON.parse(listing.json.toString()).length).toBe(40);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    expect(dropped).toEqual(['oversized']);
  });

  it('does not count a listing re-set under its grown size as an eviction', () => {
    const dropped: string[] = [];
    const cache = new ListingCache(1024 * 1024, undefined, (reason) => dropped.push(reason));
    const listing = cache.get('a', () => tools(5, 'a'));
    void listing.json;
    listing.derived('gzip', () => Buffer.alloc(100));
    expect(cache.get('a', () => tools(1, 'other'))).toBe(listing);
    expect(dropped).toEqual([]);
  });
});
