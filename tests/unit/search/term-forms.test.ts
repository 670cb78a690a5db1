import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool } from '../../../search/index.ts';
import { normaliseTerm, queryTerms } from '../../../search/analysis/terms.ts';
import { splitWords } from '../../../search/analysis/tokenize.ts';

const terms = (text: string): string[] =>
  splitWords(text)
    .map((w) => normaliseTerm(w, true)!)
    .filter(Boolean);

describe('term forms', () => {
  it('folds accents on Latin letters, and leaves CJK and Hangul as they were', () => {
    expect(splitWords('ordérs Café naïve')).toEqual(['orders', 'cafe', 'naive']);
    expect(splitWords('한국어')).toEqual(['한국', '국어']);
  });

  it('reads time-frame codes as their words, keeping the code whole too', () => {
    expect(splitWords('1Min')).toEqual(['1', 'minute', '1min']);
    expect(splitWords('15Min 1Hour 4h 1Day')).toEqual(['15', 'minute', '15min', '1', 'hour', '1hour', '4', 'hour', '4h', '1', 'day', '1day']);
    // Not every letter after a number is a unit.
    expect(splitWords('3D')).toEqual(['3', 'd', '3d']);
  });

  it('drops the words that phrase a request ("can you find me", "provide me with", "I need assistance")', () => {
    const opts = { stem: true, stopWords: true, requestWords: true };
    expect(queryTerms('Can you please find me the weather forecast?', opts)).toEqual(queryTerms('weather forecast', opts));
    expect(queryTerms('I need assistance: provide me with a weather forecast', opts)).toEqual(queryTerms('weather forecast', opts));
    // A request of such words only still searches for them.
    expect(queryTerms('find', opts)).toEqual(['find']);
    // A tool whose one line begins "Find ..." no longer matches every "can you find me" request.
    const tools: SearchableTool[] = [
      { name: 'agencies', description: 'Find top marketing agencies around the world.', inputSchema: { type: 'object' } },
      { name: 'sake', description: 'Find sake and get detailed information.', inputSchema: { type: 'object' } },
      { name: 'forecasts', description: 'Weather forecasts for cities around the globe.', inputSchema: { type: 'object' } },
    ];
    const index = buildToolIndex(tools, { wordWeight: 0 });
    expect(index.search('Can you find me the weather forecast for tomorrow?').map((h) => h.name)).toEqual(['forecasts']);
  });

  it('gives the forms of one word one stem', () => {
    expect(new Set(terms('history historical'))).toEqual(new Set(['histor']));
    expect(new Set(terms('category categories'))).toEqual(new Set(['categor']));
    expect(normaliseTerm('history', true, false)).toBe('histori');
    expect(queryTerms('historical', { stem: true, stopWords: true, requestWords: true })).toEqual(['histor']);
  });

  it('matches a tool through each fix', () => {
    const tools: SearchableTool[] = [
      { name: 'get_bars', description: 'Bars of one symbol.', inputSchema: { type: 'object', properties: { timeframe: { enum: ['1Min', '1Hour', '1Day'] } } } },
      { name: 'get_history', description: 'The history of an account.' },
      { name: 'list_orders', description: 'Orders of an account.' },
      { name: 'noise', description: 'Unrelated text.' },
    ];
    const index = buildToolIndex(tools);
    expect(index.search('one minute bars')[0]?.name).toBe('get_bars');
    expect(index.search('hour')[0]?.name).toBe('get_bars');
    expect(index.search('historical')[0]?.name).toBe('get_history');
    expect(index.search('ordérs')[0]?.name).toBe('list_orders');
  });
});
