import { priceAt, quoteFor, symbolProfile } from './market-data.ts';
import { marketValueCents, toCents } from './portfolio.ts';
import type { Position, Strategy } from './records.ts';

/** An overlay as listed by `GET /cpz/overlays`: the strategy's role config with target titles resolved. */
export function overlayView(overlay: Strategy, strategies: readonly Strategy[]) {
  const config = overlay.overlay!;
  return {
    strategy_id: overlay.id,
    title: overlay.title,
    status: overlay.status,
    policy: config.policy,
    targets: config.targets.map((t) => ({ ...t, title: strategies.find((s) => s.id === t.strategy_id)?.title ?? null })),
    account_id: config.account_id,
    account_environment: config.account_environment,
    updated_at: config.updated_at,
  };
}

/**
 * The overlay's exposure: the weighted exposure of its targets (beta-weighted to the benchmark for a
 * `beta` objective, net dollars for `dollar_neutral`), the hedge that policy requires
 * (-hedge_ratio x exposure), the hedge it holds, the drift between them as a fraction of the required
 * hedge, and the market order that would bring the hedge back when the drift leaves the tolerance band.
 * Amounts in cents.
 */
export function overlayExposure(overlay: Strategy, strategies: readonly Strategy[], positions: readonly Position[], nowMs: number) {
  const config = overlay.overlay!;
  const { objective, hedge_ratio, tolerance_band, benchmark_symbol } = config.policy;
  const hedgeSymbol = benchmark_symbol ?? 'SPY';
  const benchmarkBeta = symbolProfile(hedgeSymbol).beta;
  const exposureOf = (p: Position) => marketValueCents(p) * (objective === 'beta' ? symbolProfile(p.symbol).beta / benchmarkBeta : 1);

  const targets = config.targets.map((target) => {
    const held = positions.filter((p) => p.strategy_id === target.strategy_id);
    const exposure = held.reduce((sum, p) => sum + exposureOf(p), 0) * target.weight;
    return {
      strategy_id: target.strategy_id,
      title: strategies.find((s) => s.id === target.strategy_id)?.title ?? null,
      weight: target.weight,
      exposure: String(Math.round(exposure)),
    };
  });
  const targetExposure = targets.reduce((sum, t) => sum + Number(t.exposure), 0);
  const hedges = positions.filter((p) => p.strategy_id === overlay.id && p.account_id === config.account_id && p.symbol === hedgeSymbol);
  const currentHedge = hedges.reduce((sum, p) => sum + marketValueCents(p), 0);
  const requiredHedge = Math.round(-hedge_ratio * targetExposure);
  const drift = requiredHedge === 0 ? (currentHedge === 0 ? 0 : 1) : (currentHedge - requiredHedge) / Math.abs(requiredHedge);
  const withinBand = Math.abs(drift) <= tolerance_band;
  const price = toCents(priceAt(hedgeSymbol, nowMs));
  const gap = requiredHedge - currentHedge;
  const quantity = Math.floor(Math.abs(gap) / price);
  const previousClose = Number(quoteFor(hedgeSymbol, nowMs).previous_close);
  const dayPnl = hedges.reduce((sum, p) => sum + (p.side === 'short' ? -1 : 1) * Number(p.quantity) * (price - previousClose), 0);

  return {
    strategy_id: overlay.id,
    title: overlay.title,
    objective,
    benchmark_symbol,
    hedge_symbol: hedgeSymbol,
    hedge_ratio,
    tolerance_band,
    account_id: config.account_id,
    account_environment: config.account_environment,
    targets,
    target_exposure: String(Math.round(targetExposure)),
    required_hedge: String(requiredHedge),
    current_hedge: String(currentHedge),
    drift: Math.round(drift * 10_000) / 10_000,
    within_band: withinBand,
    suggested_order:
      withinBand || quantity < 1
        ? null
        : {
            account_id: config.account_id,
            symbol: hedgeSymbol,
            side: gap > 0 ? 'buy' : 'sell',
            quantity: String(quantity),
            type: 'market',
            time_in_force: 'day',
          },
    pnl: {
      unrealized: String(hedges.reduce((sum, p) => sum + Number(p.unrealized_pl), 0)),
      day: String(Math.round(dayPnl)),
      currency: 'USD',
    },
    as_of: new Date(nowMs).toISOString(),
  };
}
