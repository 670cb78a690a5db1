import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL, connectLegacy, connectModern, startReferenceStack, textOf, type ReferenceStack } from '../../helpers/reference-stack.ts';

let stack: ReferenceStack;
let client: Client;
const outputSchemas = new Map<string, Record<string, unknown>>();
const called = new Set<string>();
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);

beforeAll(async () => {
  stack = await startReferenceStack();
  client = await connectModern(stack.mcpUrl, FULL);
  for (const tool of (await client.listTools()).tools) {
    if (tool.outputSchema) outputSchemas.set(tool.name, tool.outputSchema as Record<string, unknown>);
  }
});
afterAll(async () => {
  await client.close();
  await stack.close();
});

/** Calls a tool with the full key; asserts success and, when declared, that structuredContent matches its outputSchema. */
async function use(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  const schema = outputSchemas.get(name);
  if (schema) {
    const validate = ajv.compile(schema);
    expect(validate(result.structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  called.add(name);
  return result.structuredContent;
}

describe('every tool with the full-scope key (v2 client, 2026-07-28)', () => {
  it('calls all 34 tools against the platform and every structuredContent validates against its outputSchema', async () => {
    expect((await use('get_profile')).data.email).toBe('demo@cpz.ai');

    const accounts = (await use('list_accounts', { tradable: true })).data;
    const paper = accounts.find((a: { environment: string }) => a.environment === 'paper');
    expect(accounts).toHaveLength(2);
    await use('list_connections', { connection_type: 'broker' });
    const connection = (
      await use('create_connection', {
        name: 'Polygon',
        connection_type: 'data_provider',
        provider: 'polygon',
        credentials: { api_key: 'pk-test-secret' },
      })
    ).data;
    expect(JSON.stringify(connection)).not.toContain('pk-test-secret');

    const strategies = (await use('list_strategies', { status: 'active', limit: 100 })).data;
    const target = strategies.find((s: { role: string }) => s.role === 'standalone');
    expect((await use('get_strategy', { strategy_id: target.id })).data.id).toBe(target.id);
    const created = (
      await use('create_strategy', {
        title: 'Test momentum',
        strategy_type: 'momentum',
        symbols: ['AAPL', 'MSFT'],
        account_id: paper.id,
        parameters: { position_size: 2 },
      })
    ).data;
    expect((await use('update_strategy', { strategy_id: created.id, status: 'active' })).data).toMatchObject({ status: 'active', version: 2 });

    const overlays = (await use('list_overlays')).data;
    expect(overlays).toHaveLength(3);
    // The seeded SPY overlay holds no hedge yet: fully under-hedged, so a sell of SPY is suggested.
    const exposure = (await use('get_overlay_exposure', { strategy_id: overlays[0].strategy_id })).data;
    expect(exposure).toMatchObject({ hedge_symbol: 'SPY', drift: 1, within_band: false, suggested_order: { symbol: 'SPY', side: 'sell' } });
    const configured = await use('configure_overlay', {
      strategy_id: created.id,
      role: 'overlay',
      policy: { objective: 'beta', hedge_ratio: 1, tolerance_band: 0.05, benchmark_symbol: 'SPY' },
      targets: [{ strategy_id: target.id, weight: 1 }],
      account_environment: 'paper',
    });
    expect(configured.data.policy.benchmark_symbol).toBe('SPY');

    const runs = (await use('get_backtest_results', { status: 'completed' })).data;
    expect((await use('get_backtest_result', { backtest_id: runs[0].id })).data.equity_curve.length).toBeGreaterThan(0);

    const orders = (await use('list_orders', { side: 'buy', limit: 5 })).data;
    expect(orders.every((o: { side: string }) => o.side === 'buy')).toBe(true);
    await use('get_order', { order_id: orders[0].id });
    const ordersBefore = stack.store.orders.length;
    const placed = (await use('place_order', { account_id: paper.id, symbol: 'AAPL', side: 'buy', type: 'limit', quantity: 10, price: '1' })).data;
    expect(placed.status).toBe('accepted');
    expect(stack.store.orders.length).toBe(ordersBefore + 1);
    const execution = (await use('execute_strategy', { strategy_id: created.id, dry_run: true })).data;
    expect(execution.signals).toHaveLength(2);
    expect(stack.store.orders.length).toBe(ordersBefore + 1);

    expect((await use('list_positions', { account_id: paper.id, limit: 100 })).count).toBeGreaterThanOrEqual(40);
    expect((await use('sync_portfolio', { account_id: paper.id })).data.positions_updated).toBeGreaterThanOrEqual(40);

    const files = (await use('list_data_files', { file_type: 'csv' })).data;
    await use('get_data_file', { file_id: files[0].id });

    expect((await use('get_market_data', { symbols: ['TSLA', 'AAPL'] })).data).toHaveLength(2);
    expect((await use('get_bars', { symbols: ['MSFT'], timeframe: '1Hour', limit: 7, feed: 'iex' })).data.MSFT).toHaveLength(7);

    const snapshot = (await use('compute_risk', { account_id: paper.id, method: 'parametric', confidence_level: 0.99 })).data;
    expect(Number(snapshot.value_at_risk)).toBeGreaterThan(0);
    expect((await use('list_risk_snapshots', { account_id: paper.id })).data[0].id).toBe(snapshot.id);
    await use('get_risk_snapshot', { snapshot_id: snapshot.id });

    const deals = (await use('list_deals', { fund: 'GMF' })).data;
    await use('list_lifecycle_events', { deal_id: deals[0].deal_id });
    const unsettled = (await use('list_cash_flows', { unsettled: true, from: '2025-01-01', to: '2027-12-31' })).data;
    expect(unsettled.every((flow: { status: string }) => flow.status !== 'settled')).toBe(true);
    await use('list_journal_entries', { entity_id: 'ENT-US-01' });
    expect((await use('list_fund_periods', { status: 'open' })).data.every((p: { status: string }) => p.status === 'open')).toBe(true);

    await use('list_webhooks', { active: true });
    const webhook = (await use('create_webhook', { url: 'https://example.com/hook', events: ['order.filled'] })).data;
    expect((await use('delete_webhook', { webhook_id: webhook.id })).message).toContain(webhook.id);

    expect(called.size).toBe(34);
  });

  it('returns the same result to the v1 client (legacy era) as to the v2 client', async () => {
    const legacy = await connectLegacy(stack.mcpUrl, FULL);
    const args = { name: 'list_accounts', arguments: { environment: 'paper' } };
    const [fromLegacy, fromModern] = [await legacy.callTool(args), await client.callTool(args)];
    expect(fromLegacy.structuredContent).toEqual(fromModern.structuredContent);
    expect(fromLegacy.content).toEqual(fromModern.content);
    await legacy.close();
  });

  it('expands both prompts with their arguments, and refuses a missing required one', async () => {
    const strategyId = stack.store.strategies[0]!.id;
    const analysis = await client.getPrompt({ name: 'analyze_strategy', arguments: { strategy_id: strategyId } });
    expect(JSON.stringify(analysis.messages)).toContain(strategyId);
    const review = await client.getPrompt({ name: 'review_portfolio', arguments: {} });
    expect(JSON.stringify(review.messages)).toContain('list_positions');
    await expect(client.getPrompt({ name: 'analyze_strategy', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});
