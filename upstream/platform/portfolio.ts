import { dailyReturns, priceAt } from './market-data.ts';
import type { Account, Position, RiskSnapshot } from './records.ts';

/** Minor units (cents) of a USD price, as an integer. */
export const toCents = (price: number): number => Math.round(price * 100);

/** Signed market value in cents: quantity x price, negative for shorts. */
export function marketValueCents(position: Pick<Position, 'quantity' | 'side' | 'current_price'>): number {
  const sign = position.side === 'short' ? -1 : 1;
  return Math.round(sign * Number(position.quantity) * Number(position.current_price));
}

/** Marks `position` to the price at `nowMs` (mutates and returns it). */
export function revaluePosition(position: Position, nowMs: number): Position {
  const sign = position.side === 'short' ? -1 : 1;
  const quantity = Number(position.quantity);
  position.current_price = String(toCents(priceAt(position.symbol, nowMs)));
  position.market_value = String(marketValueCents(position));
  position.cost_basis = String(Math.round(sign * quantity * Number(position.avg_entry_price)));
  position.unrealized_pl = String(Number(position.market_value) - Number(position.cost_basis));
  position.updated_at = new Date(nowMs).toISOString();
  return position;
}

export interface RiskRequest {
  method: 'historical' | 'parametric';
  confidence_level: number;
  horizon_days: number;
}

const LOOKBACK_DAYS = 250;

/** Inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [-39.6968302866538, 220.946098424521, -275.928510446969, 138.357751867269, -30.6647980661472, 2.50662827745924];
  const b = [-54.4760987982241, 161.585836858041, -155.698979859887, 66.8013118877197, -13.2806815528857];
  const c = [-0.00778489400243029, -0.322396458041136, -2.40075827716184, -2.54973253934373, 4.37466414146497, 2.93816398269878];
  const d = [0.00778469570904146, 0.32246712907004, 2.445134137143, 3.75440866190742];
  const q = p < 0.5 ? Math.sqrt(-2 * Math.log(p)) : Math.sqrt(-2 * Math.log(1 - p));
  const tail = (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail;
  if (p > 1 - 0.02425) return -tail;
  const r = (p - 0.5) * (p - 0.5);
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * (p - 0.5)) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/**
 * Value at risk and expected shortfall of an account's positions over `horizon_days`, from 250 daily
 * returns of the synthetic market data: historical simulation or the variance-covariance (parametric)
 * method, scaled by the square root of the horizon. Amounts in cents, reported as positive losses.
 */
export function computeRisk(account: Account, positions: Position[], request: RiskRequest, nowMs: number): Omit<RiskSnapshot, 'id'> {
  const values = positions.map((p) => marketValueCents(p));
  const returns = positions.map((p) => dailyReturns(p.symbol, nowMs, LOOKBACK_DAYS));
  const days = Math.min(LOOKBACK_DAYS, ...returns.map((r) => r.length));
  const pnl = Array.from({ length: days }, (_, t) => values.reduce((sum, value, i) => sum + value * returns[i]![returns[i]!.length - days + t]!, 0));
  const scale = Math.sqrt(request.horizon_days);
  const alpha = 1 - request.confidence_level;
  let valueAtRisk: number;
  let shortfall: number;
  if (request.method === 'parametric' || days === 0) {
    const mean = days ? pnl.reduce((s, x) => s + x, 0) / days : 0;
    const sd = days ? Math.sqrt(pnl.reduce((s, x) => s + (x - mean) ** 2, 0) / Math.max(1, days - 1)) : 0;
    const z = normalQuantile(request.confidence_level);
    valueAtRisk = sd * z * scale;
    shortfall = ((sd * Math.exp((-z * z) / 2)) / (Math.sqrt(2 * Math.PI) * alpha)) * scale;
  } else {
    const sorted = [...pnl].sort((x, y) => x - y);
    const cut = Math.max(1, Math.floor(alpha * days));
    valueAtRisk = -sorted[cut - 1]! * scale;
    shortfall = (-sorted.slice(0, cut).reduce((s, x) => s + x, 0) / cut) * scale;
  }
  const contributors = positions
    .map((p, i) => {
      const r = returns[i]!.slice(-days);
      const sd = Math.sqrt(r.reduce((s, x) => s + x * x, 0) / Math.max(1, r.length));
      return { symbol: p.symbol, loss: Math.abs(values[i]!) * sd * normalQuantile(request.confidence_level) * scale };
    })
    .sort((x, y) => y.loss - x.loss)
    .slice(0, 5)
    .map((c) => ({ symbol: c.symbol, value_at_risk: String(Math.round(c.loss)) }));
  return {
    account_id: account.id,
    method: request.method,
    confidence_level: request.confidence_level,
    horizon_days: request.horizon_days,
    value_at_risk: String(Math.max(0, Math.round(valueAtRisk))),
    expected_shortfall: String(Math.max(0, Math.round(shortfall))),
    gross_exposure: String(values.reduce((s, v) => s + Math.abs(v), 0)),
    net_exposure: String(values.reduce((s, v) => s + v, 0)),
    equity: account.equity,
    positions_count: positions.length,
    top_contributors: contributors,
    currency: account.currency,
    computed_at: new Date(nowMs).toISOString(),
  };
}
