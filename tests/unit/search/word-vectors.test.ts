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

  it('ships with the project: 40,000 words of 64 dimensions', () => {
    const wv = projectWordVectors();
    expect(wv?.dim).toBe(64);
    expect(wv?.rows.size).toBe(40_000);
    expect(wv?.rows.get('the')).toBe(0);
  });
});

describe('the word arm', () => {
  it('finds a tool that shares no word with the request, and only through the arm', () => {
    expect(buildToolIndex(tools).search('automobile')[0]?.name).toBe('rent_car');
    expect(buildToolIndex(tools, { wordWeight: 0 }).search('automobile')).toEqual([]);
  });

  it('reads the vectors given to the build instead of the project file', () => {
    // Three words in two dimensions: "automobile" points at "weather" here, not at "car".
    const wv = parseWordVectors(
      encodeWordVectors(['automobile', 'car', 'weather'], [Float32Array.from([0, 1]), Float32Array.from([1, 0]), Float32Array.from([0, 1])], 2),
    );
    expect(buildToolIndex(tools, {}, { wordVectors: wv }).search('automobile')[0]?.name).toBe('get_weather');
  });

  it('leaves a faint likeness out of the answer and the count', () => {
    const page = buildToolIndex(tools).searchPage('automobile');
    expect(page.hits.map((h) => h.name)).toEqual(['rent_car']);
    expect(page.matched).toBe(1);
  });
});

describe('the fusion of the word arm with the lexical ranking', () => {
  const travel: SearchableTool[] = [
    { name: 'rent_car', description: 'Book a rental car at an airport.' },
    { name: 'book_taxi', description: 'Order a taxi ride to the airport.' },
    { name: 'car_colours', description: 'Paint colours of a car model, car by car, every car listed.' },
  ];

  it('semanticGate: a lexical first tool holding every query word leaves the arm out', () => {
    expect(
      buildToolIndex(travel, { semanticGate: 0 })
        .search('car')
        .map((h) => h.name),
    ).toContain('book_taxi');
    expect(
      buildToolIndex(travel, { semanticGate: 1 })
        .search('car')
        .map((h) => h.name),
    ).toEqual(['car_colours', 'rent_car']);
  });

  it('lexicalCoverage: a tool holding half the query words weighs less against one holding them all', () => {
    const score = (tuning: object, name: string): number | undefined =>
      buildToolIndex(travel, tuning)
        .search('rental car')
        .find((h) => h.name === name)?.score;
    expect(score({ lexicalCoverage: 2 }, 'rent_car')).toBe(score({}, 'rent_car'));
    expect(score({ lexicalCoverage: 2 }, 'car_colours')).toBeLessThan((score({}, 'car_colours') ?? 0) - 0.5);
  });
});
