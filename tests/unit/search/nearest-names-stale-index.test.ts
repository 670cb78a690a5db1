/**
 * An unknown name's nearest names while a new catalogue version's index is still building
 * (gateway/catalog/search-index-cache.ts `nearestFindableNames`): the latest index built answers, and a
 * name it holds that the catalogue no longer does is never suggested (an operator try-out renamed
 * `echo` to `echo2` upstream and was told, for `echo`, "Nearest names: echo, ..."); the new name comes
 * from the names alone. The build is held back here by a builder of the test's own, so the stale
 * window is certain, not a race.
 */
import type { Tool } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { buildCatalog } from '../../../gateway/catalog/catalog.ts';
import { SearchIndexCache } from '../../../gateway/catalog/search-index-cache.ts';
import { buildToolIndexAsync } from '../../../search/index.ts';

const upstream = loadConfig({ env: {}, overrides: { upstreams: [{}] } }).upstreams[0]!;
const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });

describe('nearest names while the new index builds', () => {
  it('leaves out a name the catalogue no longer has and finds the renamed one by its spelling', async () => {
    const gate: { hold?: Promise<void> } = {};
    const held: typeof buildToolIndexAsync = async (...args) => {
      if (gate.hold) await gate.hold;
      return buildToolIndexAsync(...args);
    };
    const cache = new SearchIndexCache(pino({ level: 'silent' }), [], undefined, held);
    const before = buildCatalog(upstream, [tool('echo', 'Echoes its input.'), tool('get_weather', 'Current weather.')]);
    const after = buildCatalog(upstream, [tool('echo2', 'Echoes its input.'), tool('get_weather', 'Current weather.')]);
    await cache.get(before);
    let release!: () => void;
    gate.hold = new Promise((resolve) => (release = resolve));
    try {
      // The precondition: the new version's index is not built, so the old one answers.
      expect((await cache.get(after)).size).toBe(2);
      expect((await cache.get(after)).search('echo').map((h) => h.name)).toEqual(['echo']);
      const names = await cache.nearestFindableNames(after, after.tools, 'echo', 5);
      expect(names).not.toContain('echo');
      expect(names[0]).toBe('echo2');
    } finally {
      gate.hold = undefined;
      release();
    }
  });
});
