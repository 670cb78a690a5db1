import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { notFound } from '../http-errors.ts';
import { page, parseListQuery } from '../list-query.ts';
import { revaluePosition } from '../portfolio.ts';
import type { RouteContext } from './route-context.ts';

const syncBody = bodyValidator<{ account_id?: string }>({
  type: 'object',
  properties: { account_id: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
});

/** Positions: list (positions:read), sync with the brokers (positions:write). */
export function positionRoutes({ router, store, now }: RouteContext): void {
  router.get('/v1/positions', requireScope('positions:read'), (ctx) => {
    const query = parseListQuery(ctx.query, { account_id: 'uuid', symbol: 'string' });
    const { account_id, symbol } = query.filters;
    const held = store.positions
      .filter((p) => (account_id === undefined || p.account_id === account_id) && (symbol === undefined || p.symbol === String(symbol).toUpperCase()))
      .sort((a, b) => a.account_id.localeCompare(b.account_id) || a.symbol.localeCompare(b.symbol));
    ctx.body = page(held, query);
  });

  /** Re-marks every position of the chosen (or every) account at the current price and stamps the sync time. */
  router.post('/v1/positions/sync', requireScope('positions:write'), (ctx) => {
    const { account_id } = syncBody(ctx.request.body ?? {});
    if (account_id && !store.accounts.some((a) => a.id === account_id)) throw notFound('account', account_id);
    const at = now();
    const accounts = store.accounts.filter((a) => account_id === undefined || a.id === account_id);
    const synced = accounts.map((account) => {
      const held = store.positions.filter((p) => p.account_id === account.id).map((p) => revaluePosition(p, at));
      const value = held.reduce((sum, p) => sum + Number(p.market_value), 0);
      Object.assign(account, { equity: String(Number(account.cash) + value), last_synced_at: new Date(at).toISOString() });
      return { account_id: account.id, broker: account.broker, positions: held.length, equity: account.equity, last_synced_at: account.last_synced_at };
    });
    ctx.body = { data: { synced_accounts: synced, positions_updated: synced.reduce((sum, s) => sum + s.positions, 0), as_of: new Date(at).toISOString() } };
  });
}
