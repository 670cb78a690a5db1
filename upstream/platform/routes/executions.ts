import { randomUUID } from 'node:crypto';
import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { HttpError } from '../http-errors.ts';
import { dailyReturns } from '../market-data.ts';
import { placeOrder, tradableAccount } from '../order-book.ts';
import type { Execution } from '../records.ts';
import { recordById, type RouteContext } from './route-context.ts';

const executionBody = bodyValidator<{ account_id?: string; dry_run: boolean; parameters?: Record<string, unknown> }>({
  type: 'object',
  properties: {
    account_id: { type: 'string', format: 'uuid' },
    dry_run: { type: 'boolean', default: false },
    parameters: { type: 'object' },
  },
  additionalProperties: false,
});

/**
 * POST /v1/strategies/:id/executions (trade): runs the strategy once on the latest daily bars. Its
 * signal is the sign of the last `lookback_days` return (reversed for mean-reversion types); unless
 * `dry_run`, each buy/sell signal becomes a market order of `position_size` shares.
 */
export function executionRoutes({ router, store, now }: RouteContext): void {
  router.post('/v1/strategies/:id/executions', requireScope('trade'), (ctx) => {
    const strategy = recordById(store.strategies, ctx.params.id, 'strategy');
    const input = executionBody(ctx.request.body ?? {});
    if (strategy.status === 'archived') throw new HttpError(409, 'strategy_archived', `Strategy ${strategy.title} is archived and cannot run`);
    const accountId = input.account_id ?? strategy.account_id;
    if (!accountId) throw new HttpError(400, 'invalid_body', 'account_id is required: the strategy has no default account', 'account_id');
    tradableAccount(store, accountId);
    const parameters = { ...strategy.parameters, ...input.parameters };
    const lookback = Math.min(250, Math.max(2, Number(parameters.lookback_days) || 20));
    const size = Math.max(1, Math.floor(Number(parameters.position_size) || 10));
    const contrarian = strategy.strategy_type === 'mean_reversion' || strategy.strategy_type === 'pairs';
    const startedAt = new Date(now()).toISOString();
    const signals = strategy.symbols.map((symbol) => {
      const change = dailyReturns(symbol, now(), lookback).reduce((growth, r) => growth * (1 + r), 1) - 1;
      const threshold = 0.01;
      const direction = Math.abs(change) < threshold ? 0 : Math.sign(change) * (contrarian ? -1 : 1);
      const action = direction > 0 ? ('buy' as const) : direction < 0 ? ('sell' as const) : ('hold' as const);
      return { symbol, action, reason: `${lookback}-day return ${(change * 100).toFixed(2)}% (${contrarian ? 'contrarian' : 'trend'} rule, threshold 1%)` };
    });
    const orders = input.dry_run
      ? []
      : signals
          .filter((s) => s.action !== 'hold')
          .map((s) =>
            placeOrder(
              store,
              {
                account_id: accountId,
                symbol: s.symbol,
                side: s.action as 'buy' | 'sell',
                type: 'market',
                quantity: size,
                time_in_force: 'day',
                strategy_id: strategy.id,
              },
              now(),
            ),
          );
    const execution: Execution = {
      id: randomUUID(),
      strategy_id: strategy.id,
      account_id: accountId,
      status: 'completed',
      dry_run: input.dry_run,
      signals,
      orders,
      logs: [`loaded ${strategy.symbols.length} symbols`, `${signals.filter((s) => s.action !== 'hold').length} signals`, `${orders.length} orders submitted`],
      started_at: startedAt,
      finished_at: new Date(now()).toISOString(),
    };
    store.executions.push(execution);
    ctx.status = 201;
    ctx.body = { data: execution };
  });
}
