/**
 * Exposed names and the merged catalogue as pure functions of data: valid, unique and stable names for
 * several upstreams, built through a lookup table; one upstream's names untouched.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../config/load.ts';
import { mergeCatalogs, ORIGIN_META_KEY } from '../../gateway/catalog/catalog-merge.ts';
import { buildCatalog } from '../../gateway/catalog/catalog.ts';
import { EXPOSED_NAME, exposedNames } from '../../gateway/catalog/naming.ts';
import { resourceOwner, uriProblem } from '../../gateway/catalog/resource-routing.ts';

const PREFIXED = { separator: '__', prefixed: true };
const LONG = 'a_tool_name_that_goes_on_and_on_past_what_model_apis_accept_for_names_x'; // 72 characters
const AWKWARD = ['search', 'get-catalog-entity', 'a.b/c', LONG, '検索ツール', 'x__y', 'a b'];

describe('exposedNames with several upstreams', () => {
  const entries = [...AWKWARD.map((name) => ({ upstream: 'one', name })), { upstream: 'two', name: 'search' }, { upstream: 'two', name: 'a_b_c' }];
  const names = exposedNames(entries, PREFIXED);

  it('gives every tool a valid name (A-Z a-z 0-9 _ -, at most 64 characters)', () => {
    for (const name of names) expect(name).toMatch(EXPOSED_NAME);
    expect(LONG.length).toBeGreaterThan(64);
  });

  it('keeps names that are already valid readable as <upstream>__<tool>, `-` and `__` included', () => {
    expect(names.slice(0, 2)).toEqual(['one__search', 'one__get-catalog-entity']);
    expect(names[5]).toBe('one__x__y');
    expect(names[7]).toBe('two__search');
  });

  it('spells the others cleaned up, cut to fit and suffixed with a hash of the original', () => {
    expect(names[2]).toMatch(/^one__a_b_c_[0-9a-f]{8}$/);
    expect(names[3]).toMatch(/^one__a_tool_name_that_goes_on_and_on_past_what_[a-z_]+_[0-9a-f]{8}$/);
    expect(names[3]).toHaveLength(64);
    expect(names[4]).toMatch(/^one__tool_[0-9a-f]{8}$/);
    expect(names[6]).toMatch(/^one__a_b_[0-9a-f]{8}$/);
  });

  it('never gives two tools one name, even when cleaned names meet an existing one (a.b/c and a_b_c)', () => {
    expect(new Set(names).size).toBe(names.length);
    expect(names[8]).toBe('two__a_b_c');
  });

  it('is stable: the same tool keeps its name whatever else is listed, and in any order', () => {
    const alone = exposedNames([{ upstream: 'one', name: 'a.b/c' }], PREFIXED);
    expect(alone[0]).toBe(names[2]);
    const reversed = exposedNames([...entries].reverse(), PREFIXED).reverse();
    expect(reversed).toEqual(names);
  });

  it('hashes every member of a clash of valid names instead of letting one win (a + __ + _b vs a_ + __ + b)', () => {
    const clash = exposedNames(
      [
        { upstream: 'a', name: '_b' },
        { upstream: 'a_', name: 'b' },
      ],
      PREFIXED,
    );
    expect(new Set(clash).size).toBe(2);
    for (const name of clash) expect(name).toMatch(/^a__?_b_[0-9a-f]{8}$/);
  });

  it('uses the configured separator', () => {
    expect(exposedNames([{ upstream: 'gh', name: 'search' }], { separator: '-', prefixed: true })).toEqual(['gh-search']);
  });
});

describe('exposedNames with one upstream', () => {
  it('returns the names exactly as the upstream gives them, valid or not', () => {
    expect(
      exposedNames(
        AWKWARD.map((name) => ({ upstream: 'one', name })),
        { separator: '__', prefixed: false },
      ),
    ).toEqual(AWKWARD);
  });
});

describe('mergeCatalogs', () => {
  const configOf = (name: string) =>
    loadConfig({ env: {}, overrides: { upstreams: [{ name, url: 'http://x/mcp', scopeRules: { search: name === 'one' ? ['a:read'] : [] } }] } }).upstreams[0]!;
  const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
  const one = buildCatalog(configOf('one'), [tool('search'), tool('a.b/c')]);
  const two = buildCatalog(configOf('two'), [tool('search')]);
  const merged = mergeCatalogs(
    [
      { upstream: 'one', catalog: one },
      { upstream: 'two', catalog: two },
    ],
    PREFIXED,
  );

  it("keeps both upstreams' `search`, each routed to its own upstream and name, with its own scope rules", () => {
    expect(merged.byName.get('one__search')).toMatchObject({ upstream: 'one', upstreamName: 'search', requiredScopes: ['a:read'] });
    expect(merged.byName.get('two__search')).toMatchObject({ upstream: 'two', upstreamName: 'search', requiredScopes: [] });
    expect(merged.tools).toHaveLength(3);
    expect([...merged.scopesInUse]).toEqual(['a:read']);
  });

  it("reports the mapping in each definition's _meta and renames the definition", () => {
    const renamed = merged.tools.find((t) => t.upstreamName === 'a.b/c')!;
    expect(renamed.definition.name).toBe(renamed.name);
    expect(renamed.definition._meta?.[ORIGIN_META_KEY]).toEqual({ upstream: 'one', name: 'a.b/c' });
  });

  it('versions the merge by its parts: the same parts give the same version, another part another one', () => {
    expect(
      mergeCatalogs(
        [
          { upstream: 'one', catalog: one },
          { upstream: 'two', catalog: two },
        ],
        PREFIXED,
      ).version,
    ).toBe(merged.version);
    expect(mergeCatalogs([{ upstream: 'one', catalog: one }], PREFIXED).version).not.toBe(merged.version);
  });

  it("returns a single upstream's catalogue itself when names are not prefixed", () => {
    expect(mergeCatalogs([{ upstream: 'one', catalog: one }], { separator: '__', prefixed: false })).toBe(one);
  });

  it('returns it itself after a reload that renamed nothing (every alias names a tool under its own name), not a new version', () => {
    const unchanged = new Map([
      ['search', { upstream: 'one', name: 'search' }],
      ['a.b/c', { upstream: 'one', name: 'a.b/c' }],
    ]);
    expect(mergeCatalogs([{ upstream: 'one', catalog: one }], { separator: '__', prefixed: false }, unchanged)).toBe(one);
    // An alias that applies (one__search served before a second upstream was removed) still makes a merged catalogue.
    const renamed = mergeCatalogs(
      [{ upstream: 'one', catalog: one }],
      { separator: '__', prefixed: false },
      new Map([['one__search', { upstream: 'one', name: 'search' }]]),
    );
    expect(renamed).not.toBe(one);
    expect(renamed.aliases?.get('one__search')).toBe('search');
  });
});

describe('resourceOwner', () => {
  const listings = [
    { upstream: 'cpzai', resources: [{ uri: 'cpz://guides/quickstart' }], templates: [] },
    {
      upstream: 'everything',
      resources: [{ uri: 'demo://resource/static/document/a.md' }],
      templates: [{ uriTemplate: 'demo://resource/dynamic/text/{resourceId}' }],
    },
    { upstream: 'filesystem', resources: [], templates: [] },
  ];

  it('routes a listed URI, a URI matching a template, a template itself and a URI of an owned scheme', () => {
    expect(resourceOwner('cpz://guides/quickstart', listings)).toBe('cpzai');
    expect(resourceOwner('demo://resource/dynamic/text/7', listings)).toBe('everything');
    expect(resourceOwner('demo://resource/dynamic/text/{resourceId}', listings)).toBe('everything');
    expect(resourceOwner('cpz://guides/other', listings)).toBe('cpzai');
  });

  it('finds no owner for an unknown scheme', () => {
    expect(resourceOwner('file:///etc/passwd', listings)).toBeUndefined();
  });

  it("matches an upstream's template in time linear in the URI: six adjacent expressions against 3,000 characters", () => {
    // On V8's backtracking engine this never returned (about n^6 steps); two upstreams own the scheme, so only the template could decide.
    const adjacent = [
      { upstream: 'greedy', resources: [], templates: [{ uriTemplate: 'x://{a}{b}{c}{d}{e}{f}/z' }] },
      { upstream: 'other', resources: [{ uri: 'x://elsewhere' }], templates: [] },
    ];
    expect(resourceOwner(`x://${'a'.repeat(3000)}`, adjacent)).toBeUndefined();
    expect(resourceOwner('x://abc/z', adjacent)).toBe('greedy');
  });
});

describe('uriProblem', () => {
  it('names a control character or a space at either end, which a WHATWG URL parser would drop, and nothing else', () => {
    // What the SDK server's `new URL(uri)` reads: the same view as the clean spelling, so the gateway must not route it as another.
    for (const spelling of ['\tui://v/x', ' ui://v/x', 'u\ti://v/x', 'ui:\n//v/x', '\u0000ui://v/x', 'ui://v/x\r', 'ui://v/x ']) {
      expect(new URL(spelling).href).toBe('ui://v/x');
      expect(uriProblem(spelling)).toMatch(/^is not a URI: /);
    }
    expect(uriProblem('ui://v/x\u007f')).toBe('is not a URI: it holds the control character U+007F at 8 (RFC 3986 §2)');
    // A ui:// view must be spelt as the parser keeps it: the gateway checks the spelling against the views it may serve (review).
    for (const [spelling, read] of [
      ['ui://v/../x', 'ui://v/x'],
      ['ui://v/%2e%2e/x', 'ui://v/x'],
      ['ui://v:/x', 'ui://v/x'],
      ['UI://v/x', 'ui://v/x'],
      ['ui://v/a b', 'ui://v/a%20b'],
    ])
      expect(uriProblem(spelling)).toBe(`is a ui:// view spelt as no URL parser keeps it: read as ${read}`);
    expect(uriProblem('ui://Notes/View?x=1#f')).toBeUndefined();
    // Other URIs keep their spelling: a space inside (sloppy servers list such URIs), IRIs, dot segments routed by upstream.
    for (const fine of ['ui://v/x', 'file:///My Documents/a.txt', 'file:///home/ファイル.txt', 'cpz://guides/quickstart'])
      expect(uriProblem(fine)).toBeUndefined();
  });
});
