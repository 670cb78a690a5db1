import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { buildToolIndex, EmptyQueryError, type SearchableTool } from '../../../search/index.ts';
import { readCatalog, TOOL_META_KEY } from '../../../upstream/replay/catalog-file.ts';
import { PROJECT_ROOT, searchableTools, DATA_DIR } from '../../fixtures/search-data.ts';

const livemcpbench = searchableTools(readCatalog(resolve(DATA_DIR, 'catalogs/livemcpbench-tools.json')));
const liveIndex = buildToolIndex(livemcpbench);

// CPZAI_CATALOG measures a catalogue being edited before tool-catalog.json is exported.
const cpzaiPath = resolve(process.env.CPZAI_CATALOG ?? resolve(PROJECT_ROOT, 'tool-catalog.json'));
const hasCpzai = existsSync(cpzaiPath);
const cpzaiEntries = hasCpzai ? readCatalog(cpzaiPath) : [];
const cpzai = searchableTools(cpzaiEntries);
const MIDDLE_OFFICE = ['list_deals', 'list_lifecycle_events', 'list_cash_flows', 'list_journal_entries', 'list_fund_periods'];
const DATA_KEY_SCOPES = new Set(['accounts:read', 'positions:read', 'orders:read', 'market-data:read', 'files:read', 'backtests:read']);

/** Tool names whose required scopes (from `_meta["ai.cpz/tool"]`) the data key holds. */
function dataKeyFilter(): (name: string) => boolean {
  const allowed = new Set(
    cpzaiEntries
      .filter(({ tool }) => {
        const meta = tool._meta?.[TOOL_META_KEY] as { requiredScopes?: string[] } | undefined;
        return (meta?.requiredScopes ?? []).every((s) => DATA_KEY_SCOPES.has(s));
      })
      .map(({ tool }) => tool.name),
  );
  return (name) => allowed.has(name);
}

describe.skipIf(!hasCpzai)('search over the CPZAI catalogue (tool-catalog.json)', () => {
  const index = buildToolIndex(cpzai);

  it('ranks list_cash_flows first for the bare parameter name "unsettled"', () => {
    expect(index.search('unsettled', { limit: 5 })[0]?.name).toBe('list_cash_flows');
  });

  it('finds "P&L" in the tools whose descriptions say it, without their keywords (letters joined by & are one word)', () => {
    const bare = buildToolIndex(cpzai.map(({ keywords: _k, ...tool }) => tool));
    expect(bare.search('P&L', { limit: 3 }).map((h) => h.name)).toEqual(['list_positions', 'get_overlay_exposure']);
  });

  it('returns all five middle-office tools in the top 5 for "entity_id"', () => {
    const top5 = index.search('entity_id', { limit: 5 }).map((h) => h.name);
    expect(new Set(top5)).toEqual(new Set(MIDDLE_OFFICE));
  });

  it("never returns a middle-office tool through the data key's filter", () => {
    const filter = dataKeyFilter();
    for (const query of ['entity_id', 'unsettled', 'deals in the book of a fund', 'cash flows', 'journal entries', 'list']) {
      const names = index.search(query, { limit: 20, filter }).map((h) => h.name);
      expect(names.filter((n) => MIDDLE_OFFICE.includes(n))).toEqual([]);
    }
    // The same queries do reach them without the filter: the filter, not the query, excludes them.
    expect(index.search('entity_id', { limit: 20 }).map((h) => h.name)).toEqual(expect.arrayContaining(MIDDLE_OFFICE));
  });

  it('answers the misspelt list_dels with list_deals among the nearest names', () => {
    expect(index.nearestNames('list_dels')).toContain('list_deals');
    expect(index.nearestNames('list_dels')[0]).toBe('list_deals');
  });

  it('lists the catalogue categories, and filters by one', () => {
    expect(index.categories).toContain('middle-office');
    const names = index.search('list', { category: 'middle-office', limit: 20 }).map((h) => h.name);
    expect(new Set(names)).toEqual(new Set(MIDDLE_OFFICE));
  });

  it('ranks a write asked for in words the intent cues do not know above the reads of the same thing', () => {
    // No cue either way ("quit" is no operation verb): a read bias (intentImplicit < 1) put list_webhooks first.
    const query = 'quit sending events to my webhook';
    expect(index.search(query, { limit: 1 })[0]?.name).toBe('delete_webhook');
    expect(buildToolIndex(cpzai, { intentImplicit: 0.7 }).search(query, { limit: 1 })[0]?.name).toBe('list_webhooks');
  });

  it('reads "stop" as a delete\'s verb: the webhook writes lead, place_order\'s stop orders are not asked for, keywords or not', () => {
    const bare = cpzai.map(({ keywords: _k, ...tool }) => tool);
    for (const tools of [cpzai, bare]) {
      const names = buildToolIndex(tools)
        .search('stop sending events to my webhook', { limit: 5 })
        .map((h) => h.name);
      expect(names.slice(0, 2).sort()).toEqual(['create_webhook', 'delete_webhook']);
      // The request's verb matches a delete, not place_order's "stop" orders.
      expect(names).not.toContain('place_order');
    }
    expect(index.search('stop sending events to my webhook', { limit: 1 })[0]?.name).toBe('delete_webhook');
  });
});

describe('search input handling', () => {
  it('throws EmptyQueryError for an empty or whitespace-only query', () => {
    expect(() => liveIndex.search('')).toThrow(EmptyQueryError);
    expect(() => liveIndex.search(' \t\n ')).toThrow(EmptyQueryError);
  });

  it('returns [] when nothing matches', () => {
    expect(liveIndex.search('qqxqzzv wvvkkj')).toEqual([]);
  });

  it('finds the word a short query misspells when no tool holds it (one edit up to 7 characters)', () => {
    const tools = [
      { name: 'list_orders', description: 'Orders of the account, with their fills.' },
      { name: 'get_balance', description: 'Cash balance of the account.' },
      { name: 'list_strategies', description: 'Trading strategies.' },
    ];
    const index = buildToolIndex(tools);
    expect(index.search('ordrs')[0]?.name).toBe('list_orders');
    expect(index.search('my ballance')[0]?.name).toBe('get_balance');
    expect(buildToolIndex(tools, { fuzzyUnknown: 0 }).search('ordrs')).toEqual([]);
  });

  it("leaves a long request's unknown words unmatched, in each of its steps too (no fuzzy walk)", () => {
    const tools = [
      { name: 'list_orders', description: 'Orders of the account, with their fills.' },
      { name: 'get_balance', description: 'Cash balance of the account.' },
    ];
    // Its last step alone is one short word list: still a long request's word, no typo of a tool's.
    // Without the word arm, whose general likeness of English words would match these tools weakly anyway.
    const index = buildToolIndex(tools, { wordWeight: 0 });
    expect(index.search('compile a thorough quarterly weather almanac for every coastal town near Lisbon, then ordrs')).toEqual([]);
    expect(index.search('then ordrs')[0]?.name).toBe('list_orders');
  });

  it('falls back to stop words when a query holds nothing else', () => {
    const index = buildToolIndex([
      { name: 'get_profile', description: 'Who am I: the authenticated user profile.' },
      { name: 'list_orders', description: 'Orders of the account.' },
    ]);
    expect(index.search('who am I')[0]?.name).toBe('get_profile');
  });
});

describe('search over livemcpbench (527 real tools, 70 servers)', () => {
  it('indexes every tool, Chinese descriptions included', () => {
    expect(liveIndex.size).toBe(527);
    expect(livemcpbench.filter((t) => /\p{Script=Han}/u.test(t.description ?? '')).length).toBeGreaterThan(50);
  });

  it('finds a tool by words of its Chinese description (CJK bigrams)', () => {
    // bing_search: "使用必应搜索指定的关键词，并返回搜索结果列表…"
    expect(liveIndex.search('必应搜索', { limit: 3 })[0]).toMatchObject({ name: 'bing_search', upstream: 'bing-cn-mcp' });
    // getChineseCalendar: "获取指定公历时间（默认今天）的黄历信息。"
    expect(liveIndex.search('黄历', { limit: 3 })[0]?.name).toBe('getChineseCalendar');
  });

  it('finds every tool that accepts a bare parameter name', () => {
    for (const param of ['repo_path', 'filename', 'solarDatetime']) {
      const accepting = livemcpbench.filter((t) => Object.keys((t.inputSchema as { properties?: object }).properties ?? {}).includes(param));
      expect(accepting.length).toBeGreaterThan(0);
      const found = liveIndex.search(param, { limit: accepting.length }).map((h) => `${h.upstream}/${h.name}`);
      expect(new Set(found)).toEqual(new Set(accepting.map((t) => `${t.upstream}/${t.name}`)));
    }
  });

  it('keeps tools that share a name apart by upstream', () => {
    const hits = liveIndex.search('write_file', { limit: 10 }).filter((h) => h.name === 'write_file');
    expect(new Set(hits.map((h) => h.upstream)).size).toBe(hits.length);
    expect(hits.length).toBeGreaterThan(1);
  });

  it('restricts results to one upstream or one category', () => {
    expect(liveIndex.search('search', { upstream: 'wikipedia', limit: 20 }).every((h) => h.upstream === 'wikipedia')).toBe(true);
    const finance = new Set(livemcpbench.filter((t) => t.category === 'Finance').map((t) => t.name));
    const hits = liveIndex.search('price', { category: 'finance', limit: 20 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => finance.has(h.name))).toBe(true);
  });

  it('never returns a tool the filter excludes, even one that would rank first', () => {
    const first = liveIndex.search('search the web', { limit: 1 })[0];
    const hits = liveIndex.search('search the web', { limit: 50, filter: (_name, upstream) => upstream !== first.upstream });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.some((h) => h.upstream === first.upstream)).toBe(false);
  });

  it('asks a keyed filter once per tool per key, and ranks exactly as without the key', () => {
    // Keys no other test uses: liveIndex has asked no filter for them yet.
    const index = liveIndex;
    const hidden = liveIndex.search('search the web', { limit: 1 })[0].upstream;
    let asked = 0;
    const filter = (_name: string, upstream?: string): boolean => {
      asked += 1;
      return upstream !== hidden;
    };
    const queries = ['search the web', 'read a pdf file and summarise it', 'weather in Beijing tomorrow'];
    for (const query of queries) {
      const keyed = index.search(query, { limit: 20, filter, filterKey: `no-${hidden}` });
      expect(keyed).toEqual(index.search(query, { limit: 20, filter: (_n, upstream) => upstream !== hidden }));
      expect(keyed.some((h) => h.upstream === hidden)).toBe(false);
    }
    expect(asked).toBe(livemcpbench.length);
    // Another key is another caller: its filter is asked, and its answers are its own.
    const everything = index.search('search the web', { limit: 50, filter: () => true, filterKey: 'all' });
    expect(everything.some((h) => h.upstream === hidden)).toBe(true);
  });
});

describe('nearestNames', () => {
  const tools: SearchableTool[] = MIDDLE_OFFICE.concat(['list_orders', 'get_order', 'place_order']).map((name) => ({
    name,
    description: `The ${name.replace(/_/g, ' ')} tool`,
  }));
  const index = buildToolIndex(tools);

  it('puts the closest spelling first: list_dels -> list_deals', () => {
    expect(index.nearestNames('list_dels')[0]).toBe('list_deals');
  });

  it('adds search matches after close spellings and honours the filter', () => {
    const names = index.nearestNames('order', { filter: (n) => n !== 'place_order' });
    expect(names).toEqual(expect.arrayContaining(['list_orders', 'get_order']));
    expect(names).not.toContain('place_order');
  });

  it('returns [] for an empty name', () => {
    expect(index.nearestNames('  ')).toEqual([]);
  });
});

// buildToolIndexAsync (which glosses Chinese text) against the synchronous build: in
// index-reuse-async.test.ts, on the same real tools.

describe('result limits', () => {
  it('returns at most `limit` results, best first, whatever number it is given', () => {
    // Only matches are answered (at least `matchFloor` x the best score): fewer than 100 here.
    const all = liveIndex.search('search the web for news', { limit: 100 });
    expect(all.length).toBeGreaterThan(10);
    expect(all.length).toBeLessThan(100);
    expect(all.map((h) => h.score)).toEqual([...all.map((h) => h.score)].sort((a, b) => b - a));
    expect(liveIndex.search('search the web for news', { limit: 3 })).toEqual(all.slice(0, 3));
    expect(liveIndex.search('search the web for news', { limit: 2.7 })).toEqual(all.slice(0, 2));
    expect(liveIndex.search('search the web for news', { limit: 0 })).toEqual([]);
    expect(liveIndex.search('search the web for news', { limit: -4 })).toEqual([]);
    expect(liveIndex.search('search the web for news')).toHaveLength(10);
  });
});

describe('malformed definitions', () => {
  it('indexes tools whose fields are missing or of the wrong type without throwing', () => {
    const odd = [
      { name: 'no_description' },
      { name: 'numeric_description', description: 42 as unknown as string, inputSchema: { properties: 'x' } },
      {
        name: 'deep_schema',
        inputSchema: { type: 'object', properties: { a: { type: 'object', properties: { inner_field: { type: 'string', description: '内部字段' } } } } },
      },
    ];
    const index = buildToolIndex(odd);
    expect(index.search('inner_field')[0]?.name).toBe('deep_schema');
    expect(index.search('内部字段')[0]?.name).toBe('deep_schema');
    expect(index.search('numeric')[0]?.name).toBe('numeric_description');
  });
});

describe('very long queries', () => {
  it('answers a pasted document (100 KB, thousands of clauses) with ranked results', () => {
    const words = livemcpbench.flatMap((t) => (t.description ?? '').split(/\s+/)).filter(Boolean);
    let text = '';
    for (let i = 0; text.length < 100_000; i += 1) text += `${words[i % words.length]}${i % 7 === 0 ? '. ' : ' '}`;
    const hits = liveIndex.search(text, { limit: 5 });
    expect(hits).toHaveLength(5);
  });
});

describe('tools exposed under <upstream>__<name> by a merging gateway', () => {
  const tools: SearchableTool[] = [
    { name: 'github__create_issue', upstream: 'github', description: 'Open a new issue in a repository.' },
    { name: 'jira__create_issue', upstream: 'jira', description: 'Open a new issue in a project.' },
    { name: 'playwright_navigate', upstream: 'playwright', description: 'Open a URL in the browser.' },
  ];
  const index = buildToolIndex(tools);

  it('finds a tool by its exposed name, and by its server and own name in words', () => {
    expect(index.search('github__create_issue')[0]).toMatchObject({ name: 'github__create_issue', upstream: 'github' });
    expect(index.search('create an issue in jira')[0]?.name).toBe('jira__create_issue');
    expect(index.search('playwright navigate')[0]?.name).toBe('playwright_navigate');
  });

  it('offers exposed names for a misspelt one', () => {
    expect(index.nearestNames('github__create_isue')[0]).toBe('github__create_issue');
  });
});

describe("a term's rarity is the catalogue's, not one field's", () => {
  // "deal" is in one name but in nearly every description: a common word, whichever field holds it.
  const tools: SearchableTool[] = [
    { name: 'deal_book', description: 'Books of the desk.' },
    { name: 'list_postings', description: 'Ledger postings of a deal.' },
    ...['price', 'approve', 'cancel', 'amend', 'settle', 'confirm', 'export', 'archive'].map((verb) => ({
      name: `${verb}_trade`,
      description: `${verb} a deal of the desk.`,
    })),
  ];
  const first = (tuning: Parameters<typeof buildToolIndex>[1]): string | undefined =>
    buildToolIndex(tools, tuning).search('deal ledger', { limit: 1 })[0]?.name;

  it('ranks the tool holding the rare word above the one whose name holds the common one', () => {
    expect(first({ wordWeight: 0 })).toBe('list_postings');
    expect(first({})).toBe('list_postings');
  });

  it("is overturned by a rarity per field (MiniSearch's), where the lone name made 'deal' look rare", () => {
    expect(first({ wordWeight: 0, bm25: { idf: 'field' } })).toBe('deal_book');
  });
});
