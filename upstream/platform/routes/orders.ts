import { requireScope } from '../auth.ts';
import { bodyValidator } from '../body-schema.ts';
import { page, parseListQuery } from '../list-query.ts';
import { placeOrder, type OrderRequest } from '../order-book.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

const MONEY = { type: 'string', pattern: '^[1-9][0-9]{0,11}$' };

const orderBody = bodyValidator<OrderRequest>({
  type: 'object',
  properties: {
    account_id: { type: 'string', format: 'uuid' },
    symbol: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9.]{0,9}$' },
    side: { enum: ['buy', 'sell'] },
    type: { enum: ['market', 'limit', 'stop', 'stop_limit'] },
    quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000 },
    price: MONEY,
    stop_price: MONEY,
    time_in_force: { const: 'day', default: 'day' },
    strategy_id: { type: 'string', format: 'uuid' },
    client_order_id: { type: 'string', minLength: 1, maxLength: 64 },
  },
  required: ['account_id', 'symbol', 'side', 'type', 'quantity'],
  additionalProperties: false,
  allOf: [
    { if: { properties: { type: { enum: ['limit', 'stop_limit'] } } }, then: { required: ['price'] }, else: { not: { required: ['price'] } } },
    { if: { properties: { type: { enum: ['stop', 'stop_limit'] } } }, then: { required: ['stop_price'] }, else: { not: { required: ['stop_price'] } } },
  ],
});

/** Orders: list/get (orders:read), place (trade). */
export function orderRoutes({ router, store, now }: RouteContext): void {
  router.get('/v1/orders', requireScope('orders:read'), (ctx) => {
    const query = parseListQuery(ctx.query, {
      status: ['accepted', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired'],
      symbol: 'string',
      side: ['buy', 'sell'],
      strategy_id: 'uuid',
    });
    const { status, symbol, side, strategy_id } = query.filters;
    ctx.body = page(
      newestFirst(store.orders, 'submitted_at').filter(
        (o) =>
          (status === undefined || o.status === status) &&
          (symbol === undefined || o.symbol === String(symbol).toUpperCase()) &&
          (side === undefined || o.side === side) &&
          (strategy_id === undefined || o.strategy_id === strategy_id),
      ),
      query,
    );
  });

  router.get('/v1/orders/:id', requireScope('orders:read'), (ctx) => {
    ctx.body = { data: recordById(store.orders, ctx.params.id, 'order') };
  });

  router.post('/v1/orders', requireScope('trade'), (ctx) => {
    const order = placeOrder(store, orderBody(ctx.request.body), now());
    ctx.status = 201;
    ctx.body = { data: order };
  });
}
