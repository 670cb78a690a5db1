/**
 * The term index's fuzzy matches (search/engine/term-index.ts: found by shared bigrams, each checked by its
 * edit distance) are minisearch's radix-tree walk's, entry for entry and in its order: over the terms of a
 * 2,000-tool catalogue, one term in twelve itself and three misspellings of it, at the fuzzy reaches the tuning
 * uses and beyond.
 */
import { resolve } from 'node:path';

import SearchableMap from 'minisearch/SearchableMap';
import { describe, expect, it } from 'vitest';

import { DEFAULT_TUNING, NO_GLOSSES } from '../../../search/index.ts';
import { fuzzyWeight, type TermEntry, type TermIndex } from '../../../search/engine/term-index.ts';
import { documentIndexer } from '../../../search/engine/tool-documents.ts';
import { searchableTools, DATA_DIR } from '../../fixtures/search-data.ts';
import { baseEntries, syntheticCatalog } from '../../../upstream/replay/synthetic-catalog.ts';

const tools = searchableTools(syntheticCatalog(2_000, baseEntries(resolve(DATA_DIR, 'catalogs'))));
const indexer = documentIndexer(tools, DEFAULT_TUNING, NO_GLOSSES);
tools.forEach((_, id) => indexer.add(id));
const index: TermIndex = indexer.builder.finish();

const byTerm = new Map<string, TermEntry>();
index.forEachTerm((term, entry) => byTerm.set(term, entry));
const termOf = new Map([...byTerm].map(([term, entry]) => [entry, term]));
const tree = SearchableMap.from(byTerm);

/** What `matches` gave before the bigram count: the term itself, then minisearch's fuzzy walk, in its order. */
function walked(term: string, maxDistance: number): [string, number][] {
  const out: [string, number][] = byTerm.has(term) ? [[term, 1]] : [];
  for (const [other, [, distance]] of tree.fuzzyGet(term, maxDistance)) if (distance) out.push([other, fuzzyWeight(other.length, distance)]);
  return out;
}

function ours(term: string, fuzzy: number): [string, number][] {
  return index.matches(term, { fuzzy, prefix: false }).map(({ entry, weight }) => [termOf.get(entry)!, weight]);
}

/** A deterministic sample of misspellings: a letter dropped, two swapped, one doubled. */
function misspellings(term: string, i: number): string[] {
  const at = i % term.length;
  const swap = Math.min(at, term.length - 2);
  return [
    term.slice(0, at) + term.slice(at + 1),
    term.slice(0, swap) + term[swap + 1] + term[swap] + term.slice(swap + 2),
    term.slice(0, at) + term[at] + term.slice(at),
  ];
}

describe('fuzzy matches by shared bigrams', () => {
  const words = [...byTerm.keys()].filter((term) => term.length >= 4 && term.length <= 24);
  const sample = words.filter((_, i) => i % 12 === 0);
  const queries = sample.flatMap((term, i) => [term, ...misspellings(term, i)]);

  it('has a catalogue with terms enough to compare', () => {
    expect(byTerm.size).toBeGreaterThan(5_000);
    expect(queries.length).toBeGreaterThan(1_200);
  });

  it('finds what the radix-tree walk finds, in its order, with its weights', () => {
    let expanded = 0;
    for (const fuzzy of [0.2, 0.34, 2]) {
      for (const query of queries) {
        const maxDistance = fuzzy < 1 ? Math.min(6, Math.round(query.length * fuzzy)) : fuzzy;
        const expected = maxDistance ? walked(query, maxDistance) : byTerm.has(query) ? [[query, 1]] : [];
        expect(ours(query, fuzzy), `${query} at ${fuzzy}`).toEqual(expected);
        if (expected.length > 1) expanded += 1;
      }
    }
    // Many queries reach several terms (so the order is compared), through both ways of finding them.
    expect(expanded).toBeGreaterThan(600);
  });
});
