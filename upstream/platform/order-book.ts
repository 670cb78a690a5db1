import { randomUUID } from 'node:crypto';
import { ETF_SYMBOLS, priceAt } from './market-data.ts';
import { HttpError, notFound } from './http-errors.ts';
import { revaluePosition, toCents } from './portfolio.ts';
import type { Account, Order, OrderSide, OrderType, Position } from './records.ts';
import type { PlatformStore } from './store.ts';

export interface OrderRequest {
  account_id: string;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  quantity: number;
  price?: string;
  stop_price?: string;
  time_in_force: 'day';
  strategy_id?: string;
  client_order_id?: string;
}

/** The tradable account an order or execution targets: 404 when unknown, 409 when not tradable. */
export function tradableAccount(store: PlatformStore, accountId: string): Account {
  const account = store.accounts.find((a) => a.id === accountId);
  if (!account) throw notFound('account', accountId);
  if (!account.tradable) {
    throw new HttpError(409, 'account_not_tradable', `Account ${account.name} (${account.id}) is read-only and cannot take orders`, 'account_id');
  }
  return account;
}

/** Applies a fill to the account's position in the symbol: adds, reduces, flips or closes it. */
function applyFill(store: PlatformStore, order: Order, fillCents: number, nowMs: number): void {
  const quantity = Number(order.quantity);
  const delta = order.side === 'buy' ? quantity : -quantity;
  const index = store.positions.findIndex((p) => p.account_id === order.account_id && p.symbol === order.symbol);
  const existing = index >= 0 ? store.positions[index]! : undefined;
  const signed = existing ? (existing.side === 'short' ? -1 : 1) * Number(existing.quantity) : 0;
  const next = signed + delta;
  if (existing && next === 0) {
    store.positions.splice(index, 1);
    return;
  }
  const position: Position = existing ?? {
    id: randomUUID(),
    account_id: order.account_id,
    strategy_id: order.strategy_id,
    symbol: order.symbol,
    asset_class: ETF_SYMBOLS.has(order.symbol) ? 'etf' : 'us_equity',
    side: 'long',
    quantity: '0',
    avg_entry_price: String(fillCents),
    current_price: '0',
    market_value: '0',
    cost_basis: '0',
    unrealized_pl: '0',
    currency: 'USD',
    updated_at: '',
  };
  const growing = Math.sign(next) === Math.sign(signed) && Math.abs(next) > Math.abs(signed);
  if (growing) {
    position.avg_entry_price = String(Math.round((Math.abs(signed) * Number(position.avg_entry_price) + quantity * fillCents) / Math.abs(next)));
  } else if (Math.sign(next) !== Math.sign(signed)) {
    position.avg_entry_price = String(fillCents);
  }
  position.side = next < 0 ? 'short' : 'long';
  position.quantity = String(Math.abs(next));
  revaluePosition(position, nowMs);
  if (!existing) store.positions.push(position);
}

/**
 * Records an order. Paper accounts fill market orders and marketable limits at once at the synthetic
 * price (and update the position); everything else is `accepted` and rests with the broker. A
 * `client_order_id` is unique per account: the same one with the same terms answers the order already
 * placed (a retry after an unclear outcome places nothing twice, as an idempotency key does), with other
 * terms 409 `duplicate_client_order_id`.
 */
export function placeOrder(store: PlatformStore, request: OrderRequest, nowMs: number): Order {
  const account = tradableAccount(store, request.account_id);
  const reference = request.client_order_id;
  const earlier = reference === undefined ? undefined : store.orders.find((o) => o.account_id === account.id && o.client_order_id === reference);
  if (earlier) {
    if (sameTerms(earlier, request)) return earlier;
    throw new HttpError(
      409,
      'duplicate_client_order_id',
      `client_order_id ${reference} already names order ${earlier.id} (${earlier.side} ${earlier.quantity} ${earlier.symbol} ${earlier.type}) of this account; use another reference for another order`,
      'client_order_id',
    );
  }
  if (request.strategy_id && !store.strategies.some((s) => s.id === request.strategy_id)) throw notFound('strategy', request.strategy_id);
  const symbol = request.symbol.toUpperCase();
  const fill = toCents(priceAt(symbol, nowMs));
  const limit = request.price === undefined ? undefined : Number(request.price);
  const marketable = request.type === 'market' || (request.type === 'limit' && (request.side === 'buy' ? limit! >= fill : limit! <= fill));
  const fills = account.environment === 'paper' && marketable;
  const at = new Date(nowMs).toISOString();
  const order: Order = {
    id: randomUUID(),
    broker_order_id: String(100_000_000 + store.orders.length),
    client_order_id: request.client_order_id ?? null,
    account_id: account.id,
    strategy_id: request.strategy_id ?? null,
    symbol,
    side: request.side,
    type: request.type,
    time_in_force: 'day',
    quantity: String(request.quantity),
    filled_quantity: fills ? String(request.quantity) : '0',
    price: request.price ?? null,
    stop_price: request.stop_price ?? null,
    filled_avg_price: fills ? String(fill) : null,
    status: fills ? 'filled' : 'accepted',
    currency: account.currency,
    submitted_at: at,
    filled_at: fills ? at : null,
    updated_at: at,
  };
  store.orders.push(order);
  if (fills) applyFill(store, order, fill, nowMs);
  return order;
}

/** Whether `order` was placed with the terms `request` asks for (what a retry of the same order sends). */
function sameTerms(order: Order, request: OrderRequest): boolean {
  return (
    order.symbol === request.symbol.toUpperCase() &&
    order.side === request.side &&
    order.type === request.type &&
    order.quantity === String(request.quantity) &&
    order.price === (request.price ?? null) &&
    order.stop_price === (request.stop_price ?? null) &&
    order.strategy_id === (request.strategy_id ?? null)
  );
}
