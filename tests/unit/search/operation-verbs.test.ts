/**
 * Operation verbs (search/analysis/operation-verbs.ts): an everyday verb that no tool holds ("rename",
 * "erase") matches the operation verb the catalogue names its tools with (update, delete), while a verb
 * some tool holds keeps its own matches only. A small synthetic catalogue: no set of the bench.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool } from '../../../search/index.ts';
import { OPERATION_VERBS, operationSynonyms } from '../../../search/analysis/operation-verbs.ts';
import { normaliseTerm } from '../../../search/analysis/terms.ts';
import { readCatalog } from '../../../upstream/replay/catalog-file.ts';
import { PROJECT_ROOT, searchableTools } from '../../fixtures/search-data.ts';

const tool = (name: string, description: string): SearchableTool => ({ name, description, inputSchema: { type: 'object' } });
const tools = [
  tool('create_playlist', 'Create a playlist of songs.'),
  tool('update_playlist', 'Update the name or the songs of a playlist.'),
  tool('delete_playlist', 'Delete a playlist for good.'),
  tool('list_playlists', 'List the playlists of the account.'),
  tool('get_song', 'Get one song by its id.'),
  tool('tag_song', 'Tag a song; change its tags later with update_song_tags.'),
];

describe('operation verbs', () => {
  it('"rename my playlist" and "erase that playlist" find the update and the delete', () => {
    const index = buildToolIndex(tools);
    expect(index.search('rename my road trip playlist')[0]?.name).toBe('update_playlist');
    expect(index.search('erase that playlist')[0]?.name).toBe('delete_playlist');
  });

  it('"stop", "cancel", "disable" ask for a delete; "spin up", "launch", "deploy" for a create', () => {
    const index = buildToolIndex(tools);
    for (const query of ['stop my workout playlist', 'cancel the workout playlist', 'disable my workout playlist']) {
      expect(index.search(query)[0]?.name, query).toBe('delete_playlist');
    }
    for (const query of ['spin up a workout playlist', 'launch a workout playlist', 'deploy a workout playlist']) {
      expect(index.search(query)[0]?.name, query).toBe('create_playlist');
    }
  });

  it("a request's leading verb matches its operation, not the things its stem names ('swap' is no request for 'swaps')", () => {
    const trading = [
      tool('list_deals', 'List booked deals: swaps, swaps on rates, bonds and FX forwards, with their symbols.'),
      tool('update_strategy', "Update a strategy's symbols, parameters or status."),
      tool('create_strategy', 'Create a strategy from a title, its symbols and parameters.'),
    ];
    const query = 'swap the symbols of my pairs strategy';
    expect(buildToolIndex(trading).search(query)[0]?.name).toBe('update_strategy');
    expect(buildToolIndex(trading, { leadingVerb: false }).search(query)[0]?.name).not.toBe('update_strategy');
    // A verb some tool is named with keeps its own matches: "add" is add_to_queue's, not a create.
    const music = [tool('add_to_queue', 'Add a track to the play queue.'), tool('create_playlist', 'Create a playlist of tracks.')];
    expect(buildToolIndex(music).search('add a track')[0]?.name).toBe('add_to_queue');
    // Not a leading verb in its base form: the word keeps its matches.
    expect(buildToolIndex(trading).search('swaps booked this week')[0]?.name).toBe('list_deals');
  });

  it('without them the everyday verb matches nothing, and the update is not first', () => {
    const index = buildToolIndex(tools, { operationVerbs: 'off' });
    expect(index.search('rename my road trip playlist')[0]?.name).not.toBe('update_playlist');
  });

  it('a verb some tool holds keeps its own matches ("change" is in tag_song\'s text): gaps only', () => {
    const index = buildToolIndex(tools);
    const always = buildToolIndex(tools, { operationVerbs: 'always' });
    expect(index.search('change tags')[0]?.name).toBe('tag_song');
    expect(always.search('change playlist')[0]?.name).toBe('update_playlist');
  });

  it('maps a verb only to operations the catalogue holds, stemmed as the index stems', () => {
    const holds = new Set(['update', 'delete'].map((w) => normaliseTerm(w, true) as string));
    const synonyms = operationSynonyms((t) => holds.has(t), true, true);
    expect(synonyms.get(normaliseTerm('rename', true) as string)).toEqual([normaliseTerm('update', true)]);
    expect(synonyms.get(normaliseTerm('remove', true) as string)).toEqual([normaliseTerm('delete', true)]);
    expect(synonyms.has(normaliseTerm('fetch', true) as string)).toBe(false);
    // No class holds its own operation, and every verb is one plain word.
    for (const [operation, verbs] of Object.entries(OPERATION_VERBS)) {
      expect(verbs).not.toContain(operation);
      for (const v of verbs) expect(v).toMatch(/^[a-z]+$/);
    }
  });
});

describe('operations that undo one another (UNDOING)', () => {
  // The reference catalogue has no tool that cancels an order or stops a strategy: the request's own verb is no
  // request for the tool that starts one (try-out: place_order first for "cancel my open order").
  const cpzai = searchableTools(readCatalog(resolve(PROJECT_ROOT, 'tool-catalog.json')));
  const index = buildToolIndex(cpzai);
  const top = (query: string) => index.search(query)[0]?.name;

  it('does not rank the starting tool first for a request to end one, nor the reverse', () => {
    expect(top('cancel my open order')).not.toBe('place_order');
    expect(top('stop my strategy')).not.toBe('execute_strategy');
    expect(top('place an order')).toBe('place_order');
    expect(top('execute my strategy')).toBe('execute_strategy');
  });
});
