/**
 * What of a tool's own text the index weighs as what the tool is about (search/tuning.ts): a parameter's
 * enum values with the parameter names (`enumsAsParams`), and not the description's shape notes, the
 * "Returns {data, count}" sentence every tool of a server repeats (`dropShapeNotes`).
 */
import { describe, expect, it } from 'vitest';

import { buildToolIndex, type SearchableTool, type TuningOverrides } from '../../../search/index.ts';
import { schemaText, withoutShapeNotes } from '../../../search/analysis/tool-fields.ts';

const first = (tools: SearchableTool[], query: string, tuning: TuningOverrides = {}): string | undefined =>
  buildToolIndex(tools, tuning).search(query, { limit: 3 })[0]?.name;

describe('shape notes', () => {
  it('leaves out the sentence that gives the answer in braces, and nothing else', () => {
    expect(withoutShapeNotes('List webhooks. Filter by active. Returns {data, count}; page with limit/offset.')).toBe('List webhooks. Filter by active. ');
    expect(withoutShapeNotes('Create a strategy. Returns {data} with the new id. Then run it.')).toBe('Create a strategy.  Then run it.');
    expect(withoutShapeNotes('Returns {message}.')).toBe('');
    // A return named in words, or braces elsewhere, stays.
    expect(withoutShapeNotes('Returns the annualized return. Parameters as JSON, e.g. {"days": 20}.')).toBe(
      'Returns the annualized return. Parameters as JSON, e.g. {"days": 20}.',
    );
  });

  it('no longer lets every tool of a server match "returns" through its notes', () => {
    const tools: SearchableTool[] = [
      { name: 'list_webhooks', description: 'List webhook subscriptions with the last delivery time. Returns {data, count}; page with limit/offset.' },
      { name: 'list_accounts', description: 'List broker accounts with cash and equity. Returns {data, count}; page with limit/offset.' },
      {
        name: 'list_backtests',
        description:
          'List saved backtest runs, newest first, with headline metrics: total and annualized return, Sharpe ratio, max drawdown, win rate and the number of trades, each with its period. Returns {data, count}.',
      },
    ];
    expect(first(tools, 'compare the returns of my last runs')).toBe('list_backtests');
    expect(first(tools, 'compare the returns of my last runs', { dropShapeNotes: false })).toBe('list_webhooks');
  });
});

describe('enum values', () => {
  const events = {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'Endpoint to call.' },
      events: { type: 'array', items: { type: 'string', enum: ['order.filled', 'backtest.completed'] }, description: 'Events to deliver.' },
    },
  };

  it('are collected apart, each once, and stay in the parameter text', () => {
    const nested = { type: 'object', properties: { a: { enum: ['x_y', 'z', 1] }, b: { anyOf: [{ enum: ['z', 'w'] }] } } };
    expect(schemaText(nested).enums).toEqual(['x_y', 'z', 'w']);
    expect(schemaText(events).paramText).toContain('backtest.completed');
    expect(schemaText(undefined).enums).toEqual([]);
  });

  it('weigh like parameter names: the subscription to an event rises above a tool that only names its subject', () => {
    const tools: SearchableTool[] = [
      { name: 'create_webhook', description: 'Subscribe an HTTPS endpoint to platform events. The platform calls the URL on each event.', inputSchema: events },
      {
        name: 'get_backtest_result',
        title: 'Get one backtest result',
        description: 'Open one saved backtest result by its id: period, returns and drawdown, completed or failed.',
        inputSchema: { type: 'object', properties: { backtest_id: { type: 'string', description: 'The backtest.' } } },
      },
      { name: 'list_backtests', description: 'List saved backtest runs, newest first.' },
      { name: 'list_orders', description: 'List orders, newest first, with their fills and status.' },
      { name: 'get_profile', description: 'Who am I: the user profile.' },
      { name: 'delete_webhook', description: 'Remove a webhook subscription by its id.' },
    ];
    const ranked = (tuning: TuningOverrides): string[] =>
      buildToolIndex(tools, tuning)
        .search('tell my relay when a backtest completes', { limit: 3 })
        .map((h) => h.name);
    expect(ranked({})).toEqual(['get_backtest_result', 'create_webhook', 'list_backtests']);
    expect(ranked({ enumsAsParams: false })).toEqual(['get_backtest_result', 'list_backtests', 'create_webhook']);
  });
});
