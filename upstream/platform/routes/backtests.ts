import { requireScope } from '../auth.ts';
import { page, parseListQuery } from '../list-query.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

/** Saved backtest runs (backtests:read): list without the equity curve, get with it. */
export function backtestRoutes({ router, store }: RouteContext): void {
  router.get('/v1/backtests', requireScope('backtests:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { strategy_id: 'uuid', status: ['completed', 'failed'] });
    const { strategy_id, status } = query.filters;
    const runs = newestFirst(store.backtests, 'created_at')
      .filter((b) => (strategy_id === undefined || b.strategy_id === strategy_id) && (status === undefined || b.status === status))
      .map(({ equity_curve: _curve, ...summary }) => summary);
    ctx.body = page(runs, query);
  });
  router.get('/v1/backtests/:id', requireScope('backtests:read'), (ctx) => {
    ctx.body = { data: recordById(store.backtests, ctx.params.id, 'backtest') };
  });
}
