import { ORDER } from './record-schemas.ts';
import { flag, input, listOutput, oneOf, pagination, recordOutput, text, ticker, uuid } from './schema-fragments.ts';
import { READ_ONLY, getRequest, listRequest, pathWith, take, type ArgumentIssue, type ToolDefinition } from './tool-definition.ts';

const ORDER_STATUSES = ['accepted', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired'];
const MINOR_UNITS = { type: 'string', pattern: '^[1-9][0-9]{0,11}$' };

/** A price belongs only to the order types that use it (the schema already requires it where needed). */
function priceIssues(args: Record<string, unknown>): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  const type = String(args.type);
  if ('price' in args && type !== 'limit' && type !== 'stop_limit')
    issues.push({ path: '/price', message: `is only for limit and stop_limit orders, not ${type}` });
  if ('stop_price' in args && type !== 'stop' && type !== 'stop_limit')
    issues.push({ path: '/stop_price', message: `is only for stop and stop_limit orders, not ${type}` });
  return issues;
}

export const orderTools: ToolDefinition[] = [
  {
    name: 'list_orders',
    title: 'List orders',
    description:
      'List orders submitted through CPZ, newest first: symbol, side, type, quantity, limit/stop prices, fills and status. Filter ' +
      'by status, symbol, side (buy or sell) and strategy_id. For one order by its CPZ record id use get_order. Prices in cents. ' +
      'Returns {data, count}; page with limit/offset.',
    category: 'orders',
    requiredScopes: ['orders:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      status: oneOf(ORDER_STATUSES, 'Only orders in this status; accepted = working at the broker.'),
      symbol: ticker('Only orders in this ticker, e.g. AAPL.'),
      side: oneOf(['buy', 'sell'], 'Only buy orders or only sell orders.'),
      strategy_id: uuid('Only orders placed by this strategy (CPZ strategy UUID).'),
      ...pagination(),
    }),
    outputSchema: listOutput(ORDER),
    request: listRequest('/v1/orders'),
  },
  {
    name: 'get_order',
    title: 'Get an order',
    description:
      'Look up one order by its CPZ order record id (the UUID id field in list_orders, not the broker_order_id): status, fills, ' +
      'average fill price and timestamps. Returns {data}.',
    category: 'orders',
    requiredScopes: ['orders:read'],
    annotations: READ_ONLY,
    inputSchema: input({ order_id: uuid("CPZ order record UUID (not the broker's order id).") }, ['order_id']),
    outputSchema: recordOutput(ORDER),
    request: getRequest('/v1/orders', 'order_id'),
  },
  {
    name: 'place_order',
    title: 'Place an order',
    description:
      'Submit a buy or sell order for shares to a tradable broker account (from list_accounts): market, limit (with price), stop ' +
      '(with stop_price) or stop_limit (both), day orders only. Prices in cents as strings ("18750" = $187.50). Paper accounts fill ' +
      'market and marketable limit orders at once; live ones return accepted. Confirm with the user first. Never retried: if the ' +
      'outcome is unclear, check list_orders.',
    category: 'orders',
    requiredScopes: ['trade'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    inputSchema: input(
      {
        account_id: uuid('Tradable account to trade in.'),
        symbol: ticker('Ticker, e.g. AAPL.'),
        side: oneOf(['buy', 'sell'], 'buy or sell (selling more than held opens a short).'),
        type: oneOf(['market', 'limit', 'stop', 'stop_limit'], 'Order type.'),
        quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1000000, description: 'Shares, > 0 (fractions allowed).' },
        price: { ...MINOR_UNITS, description: 'Limit price in cents; only and always for limit and stop_limit.' },
        stop_price: { ...MINOR_UNITS, description: 'Stop price in cents; only and always for stop and stop_limit.' },
        time_in_force: { type: 'string', enum: ['day'], default: 'day', description: 'day only: expires at the close if unfilled.' },
        strategy_id: uuid('Attribute the order to this strategy.'),
        client_order_id: text('Your own reference, up to 64 characters.', 64),
      },
      ['account_id', 'symbol', 'side', 'type', 'quantity'],
      {
        allOf: [
          { if: { properties: { type: { enum: ['limit', 'stop_limit'] } }, required: ['type'] }, then: { properties: { price: true }, required: ['price'] } },
          {
            if: { properties: { type: { enum: ['stop', 'stop_limit'] } }, required: ['type'] },
            then: { properties: { stop_price: true }, required: ['stop_price'] },
          },
        ],
      },
    ),
    refine: priceIssues,
    request: (args) => ({ method: 'POST', path: '/v1/orders', body: args }),
  },
  {
    name: 'execute_strategy',
    title: 'Execute a strategy',
    description:
      "Run a strategy's code once now on the latest daily market data and return its signal per symbol. Unless dry_run is true, " +
      'each buy or sell signal becomes a market order in a tradable account: it may place real orders, so preview with dry_run ' +
      'first. Never retried; check list_orders with strategy_id afterwards.',
    category: 'orders',
    requiredScopes: ['trade'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    inputSchema: input(
      {
        strategy_id: uuid('CPZ strategy UUID of the strategy to run.'),
        account_id: uuid("Account to trade in; defaults to the strategy's account."),
        dry_run: { ...flag('true: compute signals only, place no orders.'), default: false },
        parameters: { type: 'object', description: 'Parameter overrides for this run only, e.g. {"position_size": 5}.' },
      },
      ['strategy_id'],
    ),
    request: (args) => {
      const [id, body] = take(args, 'strategy_id');
      return { method: 'POST', path: pathWith('/v1/strategies', id, '/executions'), body };
    },
  },
];
