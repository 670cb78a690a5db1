/**
 * The ranking does not depend on the order of the catalogue (issue 31): the same tools in another order
 * (upstream blocks reversed, as a reload that reorders upstreams gives; or shuffled) give the same top 10
 * for every labelled query of every set, names and scores, semantic arm on.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool, type ToolIndex } from '../../../search/index.ts';
import { seeded } from '../../../search/semantic/seeded-random.ts';
import { loadQuerySets } from '../../fixtures/search-data.ts';

const { sets } = loadQuerySets();

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const random = seeded(seed);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The catalogue with its upstreams' blocks in reverse order, each block's tools kept in theirs. */
function upstreamsReversed(tools: readonly SearchableTool[]): SearchableTool[] {
  const blocks = new Map<string, SearchableTool[]>();
  for (const tool of tools) blocks.set(tool.upstream ?? '', [...(blocks.get(tool.upstream ?? '') ?? []), tool]);
  return [...blocks.values()].reverse().flat();
}

const top10 = (index: ToolIndex, queries: readonly string[]): unknown[] => queries.map((q) => index.search(q, { limit: 10 }));

describe('a ranking independent of the catalogue order', () => {
  it('has every labelled set to check', () => {
    expect(sets.map((s) => s.name)).toEqual(['cpzai-dev', 'cpzai-user', 'cpzai-agent', 'livemcpbench-dev', 'restbench', 'metatool']);
  });

  for (const set of sets) {
    it(`gives the same top 10 for every ${set.name} query whatever the order of its ${set.tools.length} tools`, { timeout: 120_000 }, () => {
      const queries = set.queries.map((q) => q.query);
      const expected = top10(buildToolIndex(set.tools), queries);
      expect(top10(buildToolIndex(upstreamsReversed(set.tools)), queries)).toEqual(expected);
      expect(top10(buildToolIndex(shuffled(set.tools, 31)), queries)).toEqual(expected);
    });
  }
});
