/**
 * Multi-step requests (search/tuning.ts `clauseFusion: 'steps'`): each clause's best tool keeps a place in
 * the answer, so a later step is not crowded out by the tools of the first; and the server first: a
 * server whose tools between them cover the request's words lifts its tools (search/engine/server-choice.ts).
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool } from '../../../search/index.ts';

const weather: SearchableTool[] = ['today', 'tomorrow', 'hourly', 'weekly', 'radar', 'alerts'].map((w) => ({
  name: `weather_${w}`,
  description: `Weather forecast for a city: ${w} temperature, humidity, rain, snow and wind, in the forecast.`,
}));
const others: SearchableTool[] = Array.from({ length: 40 }, (_, i) => ({ name: `get_record_${i}`, description: `Record number ${i} of a ledger.` }));
const tools: SearchableTool[] = [...weather, ...others, { name: 'summarise_page', description: 'Summarise a page of a website.' }];

describe('multi-step requests', () => {
  const query = 'Get the weather forecast with temperature, humidity, rain, snow and wind for Paris; then summarise it';

  it("keeps the later step's tool in the answer", () => {
    // Lexical only: the word arm's likenesses of "weather" and "summarise" are another matter.
    const names = buildToolIndex(tools, { wordWeight: 0 })
      .search(query, { limit: 3 })
      .map((h) => h.name);
    expect(names).toHaveLength(3);
    expect(names[0]).toMatch(/^weather_/);
    expect(names).toContain('summarise_page');
  });

  it('is crowded out without the steps', () => {
    expect(
      buildToolIndex(tools, { clauseFusion: 'off', wordWeight: 0 })
        .search(query, { limit: 3 })
        .map((h) => h.name),
    ).not.toContain('summarise_page');
  });
});

describe('the server first', () => {
  // "route" is in one maps tool, "travel time" in another; a lone tool elsewhere holds the rare word.
  const catalogue: SearchableTool[] = [
    { name: 'geocode', description: 'Coordinates of an address.', upstream: 'maps' },
    { name: 'directions', description: 'A bike or car route between two places.', upstream: 'maps' },
    { name: 'eta', description: 'Estimated travel time of a trip.', upstream: 'maps' },
    { name: 'bike_shop', description: 'Bike shops and bike rentals near a campus.', upstream: 'shops' },
    { name: 'campus_news', description: 'News of a university campus.', upstream: 'news' },
  ];

  it("lifts the tools of the server that covers the request's words", () => {
    const query = 'plan a bike route between two campuses with the travel time';
    const names = (tuning = {}) =>
      buildToolIndex(catalogue, { wordWeight: 0, bm25: { idf: 'field' }, boosts: { name: 2 }, ...tuning })
        .search(query, { limit: 3 })
        .map((h) => h.name);
    // Lexical only, with a rarity per field and names x2 (today's defaults already put eta second, flat).
    // Flat, the lone bike shop holds "bike" and "campus" and comes second; the maps server covers the
    // route and the travel time between its tools, and both of its tools come first.
    expect(names({ serverWeight: 0 })).toEqual(['directions', 'bike_shop', 'eta']);
    expect(names()).toEqual(['directions', 'eta', 'bike_shop']);
  });
});
