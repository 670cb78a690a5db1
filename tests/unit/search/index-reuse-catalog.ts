/**
 * The catalogue versions and queries of the index-reuse tests (index-reuse.test.ts, index-reuse-async.test.ts):
 * a real catalogue, changed one way at a time, and what an index answers for it.
 */
import type { SearchableTool, ToolIndex } from '../../../search/index.ts';
import { loadQuerySets, searchableTools } from '../../fixtures/search-data.ts';
import { syntheticCatalog } from '../../../upstream/replay/synthetic-catalog.ts';

export const MENTIONED = 'start_process';
const queries = [
  ...loadQuerySets({ only: ['cpzai-dev', 'livemcpbench-dev'] }).sets.flatMap((set) => set.queries.map((q) => q.query)),
  'quetzalcoatl',
  MENTIONED,
  'start a process and interact with it',
  'entity_id',
];
// 280 real tools (livemcpbench's first 240, and the 40 up to desktop-commander's, two of which mention
// start_process in their descriptions), 53 of them described in Chinese (glossed only by the async
// build, so their documents are read again after it: index-reuse-async.test.ts). A build is mostly the
// semantic arm (three quarters at this size); the 1,200 tools these tests used (the same tools repeated
// under a second prefix) took about 2 s a build on a busy machine, these 280 about 0.13 s.
export const base = searchableTools(syntheticCatalog(480).filter((_, i) => i < 240 || i >= 440));

/** Every query's top 20 (names and scores), and the nearest names of a misspelt one. */
export function answers(index: ToolIndex): unknown[] {
  return [...queries.map((q) => index.search(q, { limit: 20 })), index.nearestNames('start_proces')];
}

/** Catalogue versions in a row, each mostly the previous one's tool objects. */
export function versions(): [string, SearchableTool[]][] {
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
