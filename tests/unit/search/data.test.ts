/**
 * The labelled sets of data/ hold together: every gold name is a tool of its set's catalogue, ids are
 * unique, and the CPZAI requests written as users ask (cpzai-user-dev.jsonl) do not echo the tools'
 * `_meta` keyword phrases (they test the ranker, not the keyword lists).
 */
import { describe, expect, it } from 'vitest';

import { loadQuerySets } from '../../fixtures/search-data.ts';

const { sets } = loadQuerySets();

describe('the labelled query sets', () => {
  for (const set of sets) {
    it(`${set.name}: every gold name is a tool of its catalogue, every id once`, () => {
      const names = new Set(set.tools.map((t) => t.name));
      expect(set.queries.flatMap((q) => q.gold.filter((g) => !names.has(g)).map((g) => `${q.query}: ${g}`))).toEqual([]);
      const ids = set.queries.map((q) => q.id).filter((id) => id !== undefined);
      expect(new Set(ids).size).toBe(ids.length);
    });
  }

  it('cpzai-user: no request holds a keyword phrase of the catalogue', () => {
    const set = sets.find((s) => s.name === 'cpzai-user');
    expect(set).toBeDefined();
    const phrases = set!.tools
      .flatMap((t) => t.keywords ?? [])
      .filter((k) => /\s/.test(k.trim()))
      .map((k) => k.toLowerCase());
    expect(phrases.length).toBeGreaterThan(100);
    const echoes = set!.queries.flatMap((q) => phrases.filter((p) => q.query.toLowerCase().includes(p)).map((p) => `${q.query} <- ${p}`));
    expect(echoes).toEqual([]);
  });
});
