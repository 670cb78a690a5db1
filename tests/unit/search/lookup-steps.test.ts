/**
 * Lookup steps (search/analysis/lookups.ts, search/tuning.ts `lookupDepth`): a request that names
 * something and asks about it through a tool taking its identifier gets the server's lookup tool (a
 * free-text query, no identifier) beside it, though no word of the request names that step.
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool } from '../../../search/index.ts';
import { answersCurrent, identifiedThings, isLookup } from '../../../search/analysis/lookups.ts';
import { namesSomething } from '../../../search/analysis/names.ts';

const search = (what: string, upstream = 'films'): SearchableTool => ({
  name: `search_${what}`,
  title: `Search ${what}`,
  description: `Search for ${what} by name.`,
  inputSchema: { type: 'object', properties: { query: { type: 'string' }, page: { type: 'integer' } }, required: ['query'] },
  upstream,
});
const byId = (name: string, description: string, param: string, upstream = 'films', title?: string): SearchableTool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { [param]: { type: 'integer', ...(title ? { title } : {}) } }, required: [param] },
  upstream,
});

const catalogue: SearchableTool[] = [
  search('movie'),
  search('person'),
  search('tv'),
  byId('movie_credits', 'The cast and crew of a movie: actors, director.', 'movie_id'),
  byId('person_details', 'Details of a person: birthday, biography.', 'person_id'),
  byId('tv_images', 'Posters and images of a TV show.', 'tv_id'),
  { name: 'trending', description: 'Movies and shows trending today.', upstream: 'films' },
  search('album', 'music'),
  byId('album_tracks', 'The tracks of an album.', 'id', 'music', 'Album ID'),
  byId('show_soundtrack', 'The soundtrack album of a TV show.', 'show_id', 'music'),
];

const names = (query: string, tuning = {}): string[] =>
  buildToolIndex(catalogue, { wordWeight: 0, ...tuning })
    .search(query, { limit: 3 })
    .map((h) => h.name);

describe('lookup steps', () => {
  it('puts the lookup for the thing a named request needs the identifier of beside the tool that needs it', () => {
    // The lookup goes before the tool that needs its identifier.
    expect(names('Who are the actors and the director of The Dark Knight?')).toEqual(['search_movie', 'movie_credits']);
    // Off, nothing in the request's words brings it.
    expect(names('Who are the actors and the director of The Dark Knight?', { lookupDepth: 0 })).not.toContain('search_movie');
  });

  it('never brings a lookup the caller may not see', () => {
    const index = buildToolIndex(catalogue, { wordWeight: 0 });
    const query = 'Who are the actors and the director of The Dark Knight?';
    for (const filterKey of ['hidden-search', undefined]) {
      const names = index.search(query, { limit: 3, filter: (name) => name !== 'search_movie', filterKey }).map((h) => h.name);
      expect(names).toEqual(['movie_credits']);
    }
  });

  it('takes no lookup without a name, nor one of another server', () => {
    expect(names('who are the actors and the director of the film')).toEqual(names('who are the actors and the director of the film', { lookupDepth: 0 }));
    expect(names('posters of the show "Severance"')).toEqual(['search_tv', 'tv_images']);
    expect(names('the tracks of the album "Abbey Road"').slice(0, 2)).toEqual(['search_album', 'album_tracks']);
    expect(names('the tracks of the album "Abbey Road"', { lookupDepth: 0 }).slice(0, 2)).toEqual(['album_tracks', 'search_album']);
    // The TV lookup is the films server's: the music server's show identifier has no lookup of its own.
    expect(names('the soundtrack of "Severance"')).not.toContain('search_tv');
    expect(names('the soundtrack of "Severance"')).toEqual(names('the soundtrack of "Severance"', { lookupDepth: 0 }));
  });

  it('puts the tool answering the current one after a tool that needs its identifier, named or not', () => {
    const music: SearchableTool[] = [
      byId('create_playlist', 'Create a playlist for a user.', 'user_id', 'music'),
      {
        name: 'get_my_profile',
        title: 'Get current user profile',
        description: 'The profile of the user.',
        outputSchema: { properties: { id: {} } },
        upstream: 'music',
      },
      { name: 'pause_user_playback', description: 'Pause playback.', upstream: 'music' },
      ...catalogue,
    ];
    const names = (tuning = {}): string[] =>
      buildToolIndex(music, { wordWeight: 0, ...tuning })
        .search('make a new playlist', { limit: 3 })
        .map((h) => h.name);
    expect(names().slice(0, 2)).toEqual(['create_playlist', 'get_my_profile']);
    expect(names({ selfLookups: false })).not.toContain('get_my_profile');
  });

  it('reads the roles from the schemas', () => {
    expect(answersCurrent({ name: 'x', outputSchema: { properties: { data: { properties: { id: {}, email: {} } } } } })).toBe(true);
    expect(answersCurrent({ name: 'x', inputSchema: { properties: { limit: {} } }, outputSchema: { properties: { id: {} } } })).toBe(false);
    expect(answersCurrent({ name: 'x', outputSchema: { properties: { items: {}, total: {} } } })).toBe(false);
    expect(namesSomething('the lead actor of The Dark Knight')).toBe(true);
    expect(namesSomething('play "My Top" now')).toBe(true);
    expect(namesSomething('I need a review for breaking bad')).toBe(false);
    expect(namesSomething("What's trending today?")).toBe(false);
    expect(identifiedThings(catalogue[3])).toEqual(['movie']);
    expect(identifiedThings({ name: 'x', inputSchema: { properties: { id: { title: 'Spotify Artist ID' } }, required: ['id'] } })).toEqual([
      'spotify',
      'artist',
    ]);
    expect(identifiedThings({ name: 'x', inputSchema: { properties: { paid: { type: 'boolean' } }, required: ['paid'] } })).toEqual([]);
    // A schema that marks nothing required (converted from an API spec) requires every parameter it has.
    expect(identifiedThings({ name: 'x', inputSchema: { properties: { id: { title: 'Album ID' }, market: {} } } })).toEqual(['album']);
    expect(isLookup({ name: 'x', inputSchema: { properties: { q: {}, type: {}, limit: {} } } })).toBe(true);
    expect(isLookup({ name: 'x', inputSchema: { properties: { q: {}, limit: {} }, required: [] } })).toBe(false);
    expect(isLookup(catalogue[0])).toBe(true);
    expect(isLookup(catalogue[3])).toBe(false);
    expect(isLookup({ name: 'x', inputSchema: { properties: { q: {}, user_id: {} }, required: ['q', 'user_id'] } })).toBe(false);
  });
});
