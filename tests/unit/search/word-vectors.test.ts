/**
 * The word arm (search/semantic/word-vectors.ts): the distilled file's format, and a request that shares
 * no word with the tool it wants finding it through general English.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool } from '../../../search/index.ts';
import { encodeWordVectors, parseWordVectors, projectWordVectors } from '../../../search/semantic/word-vectors.ts';

const tools: SearchableTool[] = [
  { name: 'rent_car', description: 'Book a rental car at an airport.' },
  { name: 'get_weather', description: 'Current conditions and the weather for a city.' },
  { name: 'list_orders', description: 'Orders of an account.' },
];

describe('word vectors file', () => {
  it('round-trips words and int8 vectors, each scaled to its largest component', () => {
    const bytes = encodeWordVectors(['car', 'café'], [Float32Array.from([0.5, -1, 0.25]), Float32Array.from([2, 0, -2])], 3);
    const wv = parseWordVectors(bytes);
    expect(wv.dim).toBe(3);
    expect([...wv.rows]).toEqual([
      ['car', 0],
      ['café', 1],
    ]);
    expect([...wv.scales]).toEqual([1, 2]);
    expect([...wv.data]).toEqual([64, -127, 32, 127, 0, -127]);
  });

  it('refuses anything else, naming what is wrong', () => {
    const bytes = encodeWordVectors(['car'], [Float32Array.from([1, 0])], 2);
    expect(() => parseWordVectors(Buffer.from('not vectors at all'))).toThrow('not a word vectors file');
    expect(() => parseWordVectors(bytes.subarray(0, bytes.length - 1))).toThrow('word vectors file: wrong length');
  });

  it('ships with the project: 40,000 words of 100 dimensions', () => {
    const wv = projectWordVectors();
    expect(wv?.dim).toBe(100);
    expect(wv?.rows.size).toBe(40_000);
    expect(wv?.rows.get('the')).toBe(0);
  });
});

describe('the word arm', () => {
  it('finds a tool that shares no word with the request, and only through the arm', () => {
    expect(buildToolIndex(tools).search('automobile')[0]?.name).toBe('rent_car');
    expect(buildToolIndex(tools, { wordWeight: 0 }).search('automobile')).toEqual([]);
  });

  it('leaves a faint likeness out of the answer and the count', () => {
    const page = buildToolIndex(tools).searchPage('automobile');
    expect(page.hits.map((h) => h.name)).toEqual(['rent_car']);
    expect(page.matched).toBe(1);
  });
});
