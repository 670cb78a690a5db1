/**
 * An index built with `previous` (search/index.ts `BuildOptions`) takes over the tools it already read
 * and ranks exactly as an index built from scratch: same names, same scores, for every shared query,
 * whatever changed in between (a description; a tool added, then removed, whose name other tools'
 * descriptions mention, so that their text loses, then regains, the mention; tools removed; a tool
 * renamed), with the default tuning and with prefix and fuzzy expansion (whose matches depend on the
 * order terms were first met).
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, buildToolIndexAsync, type SearchableTool, type ToolIndex, type TuningOverrides } from '../../../search/index.ts';
import { loadQuerySets, searchableTools } from '../../../search/eval/query-sets.ts';
import { syntheticCatalog } from '../../../upstream/replay/synthetic-catalog.ts';

const MENTIONED = 'start_process';
const queries = [
  ...loadQuerySets().sets.flatMap((set) => set.queries.map((q) => q.query)),
  'quetzalcoatl',
  MENTIONED,
  'start a process and interact with it',
  'entity_id',
];
// The base catalogue's first 480 tools: every one described in Chinese (73, glossed only by the async
// build, so their documents are read again after it) and both whose descriptions mention start_process.
// More copies of the same tools (the 1,200 this test used) add build time, not paths.
const base = searchableTools(syntheticCatalog(480));

/** Every query's top 20 (names and scores), and the nearest names of a misspelt one. */
function answers(index: ToolIndex): unknown[] {
  return [...queries.map((q) => index.search(q, { limit: 20 })), index.nearestNames('start_proces')];
}

/** Catalogue versions in a row, each mostly the previous one's tool objects. */
function versions(): [string, SearchableTool[]][] {
  const changed = base.map((t, i) => (i === 3 ? { ...t, description: `${t.description ?? ''} Catalogue marker: quetzalcoatl.` } : t));
  const added = [...changed, { name: MENTIONED, description: 'Starts a process.', upstream: 'extra' }];
  const removed = added.filter((t, i) => i % 7 !== 2 && t.name !== MENTIONED);
  const renamed = removed.map((t, i) => (i === 10 ? { ...t, name: `${t.name}_v2` } : t));
  return [
    ['a description changed', changed],
    ['a tool added whose name other tools mention', added],
    ['tools removed, that one too', removed],
    ['a tool renamed', renamed],
  ];
}

describe('building an index from the previous one', () => {
  it('has tools whose descriptions mention the name of the tool added later, and tools described in Chinese', () => {
    expect(base.filter((t) => (t.description ?? '').includes(MENTIONED)).length).toBeGreaterThan(1);
    expect(base.filter((t) => /\p{Script=Han}/u.test(t.description ?? '')).length).toBeGreaterThan(50);
  });

  for (const [label, tuning] of [
    ['default tuning', {}],
    ['prefix and fuzzy expansion', { prefixMinLength: 4, fuzzy: 0.2, fuzzyMaxTerms: 6 }],
  ] as [string, TuningOverrides][]) {
    // Several builds per case (and the semantic arm in each): slow on a busy machine.
    it(`ranks as a build from scratch after each change (${label})`, { timeout: 120_000 }, () => {
      let previous = buildToolIndex(base, tuning);
      for (const [change, tools] of versions()) {
        const reused = buildToolIndex(tools, tuning, { previous });
        expect(answers(reused), change).toEqual(answers(buildToolIndex(tools, tuning)));
        previous = reused;
      }
    });
  }

  // The one test of the unit suite that loads the gloss dictionary (a worker, 2-3 s): the async build
  // glosses the Chinese text, and must then rank as a synchronous build with those glosses.
  it('gives the same index asynchronously, and from an index whose documents a build already took', { timeout: 120_000 }, async () => {
    const changed = versions()[0][1];
    const first = buildToolIndex(base); // before any gloss: its Chinese documents are marked unglossed
    const plain = await buildToolIndexAsync(changed);
    const reused = await buildToolIndexAsync(changed, {}, { previous: first });
    const again = buildToolIndex(changed, {}, { previous: first });
    const fresh = buildToolIndex(changed);
    expect(answers(plain)).toEqual(answers(fresh));
    expect(answers(reused)).toEqual(answers(fresh));
    expect(answers(again)).toEqual(answers(fresh));
  });

  it('reads every tool again when the tuning differs from the previous build', () => {
    const previous = buildToolIndex(base, { stem: false });
    const tools = versions()[0][1];
    expect(answers(buildToolIndex(tools, {}, { previous }))).toEqual(answers(buildToolIndex(tools)));
  });
});
