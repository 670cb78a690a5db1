/**
 * Read/write intent (search/analysis/intent.ts) over the reference CPZAI catalogue (tool-catalog.json, 34 tools):
 * a request to see something ranks a read tool first, a request to change something ranks that write
 * first. The cue words come from the catalogue's annotations and lead words, never from these queries.
 */
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { buildToolIndex, metaKeywords, type SearchableTool } from '../../../search/index.ts';
import { learnIntent, queryIntent, READ, WRITE } from '../../../search/analysis/intent.ts';

type Listed = SearchableTool & { annotations: { readOnlyHint: boolean; destructiveHint: boolean } };
// As the gateway passes them: the `_meta` keywords as their own field.
const tools = (
  JSON.parse(readFileSync(new URL('../../../tool-catalog.json', import.meta.url), 'utf8')) as { tools: (Listed & { _meta?: Record<string, unknown> })[] }
).tools.map((t) => ({ ...t, keywords: metaKeywords(t._meta) }));
const index = buildToolIndex(tools);
const isRead = new Map(tools.map((t) => [t.name, t.annotations.readOnlyHint]));
/** `get_backtest_result` -> verb "get", thing "backtest result". */
const parts = (name: string): { verb: string; thing: string } => {
  const [verb, ...rest] = name.split('_');
  return { verb, thing: rest.join(' ') };
};

describe('read/write intent', () => {
  const reads = tools.filter((t) => t.annotations.readOnlyHint);
  const writes = tools.filter((t) => !t.annotations.readOnlyHint);

  it('the catalogue has both kinds', () => {
    expect(reads.length).toBeGreaterThan(10);
    expect(writes.length).toBeGreaterThan(5);
  });

  it.each(reads.map((t) => t.name))('"show/list my <thing>" ranks a read tool first: %s', (name) => {
    const { thing } = parts(name);
    for (const query of [`show my ${thing}`, `list my ${thing}`]) {
      const first = index.search(query, { limit: 3 })[0];
      expect(first, query).toBeDefined();
      expect(isRead.get(first.name), `${query} -> ${first.name}`).toBe(true);
    }
  });

  it.each(writes.map((t) => t.name))('"<verb> <thing>" ranks that write first: %s', (name) => {
    const { verb, thing } = parts(name);
    expect(index.search(`${verb} ${thing}`, { limit: 3 })[0]?.name).toBe(name);
  });

  it('ranks the reads of the issue first ("show my open orders", "what webhooks do I have", "price of AAPL now")', () => {
    expect(index.search('show my open orders')[0].name).toBe('list_orders');
    expect(index.search('what webhooks do I have')[0].name).toBe('list_webhooks');
    expect(index.search('price of AAPL now')[0].name).toBe('get_market_data');
  });

  it('ranks writes first when asked to change something', () => {
    expect(index.search('place an order to buy 10 AAPL')[0].name).toBe('place_order');
    expect(index.search('delete my webhook')[0].name).toBe('delete_webhook');
    expect(index.search('create a new strategy')[0].name).toBe('create_strategy');
  });

  it('reads a cue only in its base form: an inflected word names a thing ("buying power", "swaps")', () => {
    const { cues } = learnIntent(tools, true);
    expect(queryIntent('buy 10 shares', cues, true)).toEqual({ intent: WRITE, explicit: true });
    expect(queryIntent('trade 10 shares', cues, true)).toEqual({ intent: WRITE, explicit: true });
    // The query's participles and gerunds are not its verb.
    for (const query of ['buying power', 'trading accounts', 'connected providers']) {
      expect(queryIntent(query, cues, true), query).toEqual({ intent: 0, explicit: false });
    }
    expect(index.search('buying power')[0].name).toBe('list_accounts');
    expect(index.search('trading accounts')[0].name).toBe('list_accounts');
    // Plural one-word keywords (list_deals' "swaps", list_orders' "fills") teach no cue: "swap the
    // tickers" asks to change something, not to read swaps.
    expect(cues.read.has('swap')).toBe(false);
    expect(cues.read.has('fill')).toBe(false);
    expect(queryIntent('swap the symbols of my strategy', cues, true).intent).not.toBe(READ);
  });

  it('reads the everyday verbs of an operation as cues of its class ("rename", "swap" an update)', () => {
    const { cues } = learnIntent(tools, true);
    expect(cues.write.has('updat')).toBe(true);
    for (const query of ['rename my breakout strategy', 'swap the symbols of my strategy', 'tweak the parameters of my bot']) {
      expect(queryIntent(query, cues, true), query).toEqual({ intent: WRITE, explicit: true });
    }
    expect(queryIntent('fetch my orders', cues, true)).toEqual({ intent: READ, explicit: true });
    // Stopping, cancelling a thing is a delete; spinning one up a create: writes.
    for (const query of ['stop sending events to my webhook', 'cancel my webhook', 'spin up a mean reversion bot']) {
      expect(queryIntent(query, cues, true), query).toEqual({ intent: WRITE, explicit: true });
    }
    // A write first, not list_deals (its "swaps") or another read.
    const first = index.search('swap the symbols of my strategy')[0].name;
    expect(isRead.get(first), first).toBe(false);
  });

  it('learns its cues from the annotations and lead words of the tools', () => {
    const { cues } = learnIntent(tools, true);
    expect(cues.read.has('list')).toBe(true);
    expect(cues.write.has('delet')).toBe(true);
    expect(queryIntent('delete it', cues, true)).toEqual({ intent: WRITE, explicit: true });
    expect(queryIntent('what do I hold?', cues, true)).toEqual({ intent: READ, explicit: true });
    // Without annotations there is nothing to learn, and intent changes nothing.
    const bare = learnIntent(
      tools.map(({ annotations: _, ...t }) => t),
      true,
    );
    expect(bare.cues.read.size + bare.cues.write.size).toBe(0);
    expect(queryIntent('delete it', bare.cues, true).intent).toBe(0);
  });
});
