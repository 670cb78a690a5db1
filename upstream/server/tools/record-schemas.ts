import { B, I, MONEY, N, NULLABLE_MONEY, NULLABLE_S, S, record } from './schema-fragments.ts';
import type { JsonSchema } from './tool-definition.ts';

/** Output record shapes of the platform API (money in cents as decimal strings, quantities as decimal strings). */

const strings = { type: 'array', items: S } as const;
const policy = record({ objective: S, hedge_ratio: N, tolerance_band: N, benchmark_symbol: NULLABLE_S });

export const STRATEGY = record({
  id: S,
  title: S,
  description: S,
  strategy_type: S,
  status: S,
  role: S,
  symbols: strings,
  account_id: NULLABLE_S,
  parameters: { type: 'object' },
  code: S,
  version: I,
  overlay: { type: ['object', 'null'] },
  created_at: S,
  updated_at: S,
});

export const OVERLAY = record(
  {
    strategy_id: S,
    title: S,
    status: S,
    policy,
    targets: { type: 'array', items: record({ strategy_id: S, weight: N, title: NULLABLE_S }) },
    account_id: S,
    account_environment: S,
    updated_at: S,
  },
  'A strategy in the overlay role: its hedge policy and the strategies it hedges.',
);

export const OVERLAY_EXPOSURE = record(
  {
    strategy_id: S,
    title: S,
    objective: S,
    benchmark_symbol: NULLABLE_S,
    hedge_symbol: S,
    hedge_ratio: N,
    tolerance_band: N,
    account_id: S,
    account_environment: S,
    targets: { type: 'array', items: record({ strategy_id: S, title: NULLABLE_S, weight: N, exposure: MONEY }) },
    target_exposure: MONEY,
    required_hedge: MONEY,
    current_hedge: MONEY,
    drift: { type: 'number', description: '(current_hedge - required_hedge) / |required_hedge|; 0.1 = 10% over.' },
    within_band: B,
    suggested_order: {
      type: ['object', 'null'],
      description: 'Market order restoring the hedge; null while within the tolerance band.',
      properties: { account_id: S, symbol: S, side: S, quantity: S, type: S, time_in_force: S },
    },
    pnl: record({ unrealized: MONEY, day: MONEY, currency: S }),
    as_of: S,
  },
  'Exposure of an overlay: amounts in cents; negative hedge values are short.',
);

const backtestFields = {
  id: S,
  strategy_id: S,
  title: S,
  status: S,
  timeframe: S,
  start_date: S,
  end_date: S,
  initial_capital: MONEY,
  final_equity: MONEY,
  total_return: N,
  annualized_return: N,
  sharpe_ratio: N,
  max_drawdown: N,
  win_rate: N,
  trades_count: I,
  benchmark_symbol: S,
  benchmark_return: N,
  error: NULLABLE_S,
  created_at: S,
};
export const BACKTEST_SUMMARY = record(backtestFields);
export const BACKTEST = record({
  ...backtestFields,
  parameters: { type: 'object' },
  equity_curve: { type: 'array', items: record({ date: S, equity: MONEY }) },
});

export const ORDER = record({
  id: S,
  broker_order_id: S,
  client_order_id: NULLABLE_S,
  account_id: S,
  strategy_id: NULLABLE_S,
  symbol: S,
  side: S,
  type: S,
  time_in_force: S,
  quantity: S,
  filled_quantity: S,
  price: NULLABLE_MONEY,
  stop_price: NULLABLE_MONEY,
  filled_avg_price: NULLABLE_MONEY,
  status: S,
  currency: S,
  submitted_at: S,
  filled_at: NULLABLE_S,
  updated_at: S,
});

export const POSITION = record({
  id: S,
  account_id: S,
  strategy_id: NULLABLE_S,
  symbol: S,
  asset_class: S,
  side: S,
  quantity: S,
  avg_entry_price: MONEY,
  current_price: MONEY,
  market_value: MONEY,
  cost_basis: MONEY,
  unrealized_pl: MONEY,
  currency: S,
  updated_at: S,
});

export const ACCOUNT = record({
  id: S,
  name: S,
  broker: S,
  environment: S,
  tradable: B,
  status: S,
  account_number: S,
  currency: S,
  cash: MONEY,
  equity: MONEY,
  buying_power: MONEY,
  last_synced_at: S,
  created_at: S,
});

export const CONNECTION = record({
  id: S,
  name: S,
  connection_type: S,
  provider: S,
  status: S,
  credential_fields: strings,
  created_at: S,
  last_used_at: NULLABLE_S,
});

export const DATA_FILE = record({
  id: S,
  name: S,
  file_type: S,
  status: S,
  size_bytes: I,
  row_count: { type: ['integer', 'null'] },
  columns: { type: 'array', items: record({ name: S, type: S }) },
  sha256: S,
  error: NULLABLE_S,
  created_at: S,
});

export const RISK_SNAPSHOT = record({
  id: S,
  account_id: S,
  method: S,
  confidence_level: N,
  horizon_days: I,
  value_at_risk: MONEY,
  expected_shortfall: MONEY,
  gross_exposure: MONEY,
  net_exposure: MONEY,
  equity: MONEY,
  positions_count: I,
  top_contributors: { type: 'array', items: record({ symbol: S, value_at_risk: MONEY }) },
  currency: S,
  computed_at: S,
});

export const DEAL = record({
  id: S,
  deal_id: S,
  entity_id: S,
  fund: S,
  book: S,
  product_kind: S,
  status: S,
  counterparty: S,
  direction: S,
  notional: MONEY,
  currency: S,
  trade_date: S,
  effective_date: S,
  maturity_date: S,
  created_at: S,
});

export const LIFECYCLE_EVENT = record({ id: S, deal_id: S, entity_id: S, kind: S, status: S, event_date: S, description: S });

export const CASH_FLOW = record({
  id: S,
  deal_id: S,
  entity_id: S,
  fund: S,
  book: S,
  flow_type: S,
  direction: S,
  amount: MONEY,
  currency: S,
  payment_date: S,
  status: S,
  settled_at: NULLABLE_S,
});

export const JOURNAL_ENTRY = record({
  id: S,
  entry_number: S,
  deal_id: S,
  entity_id: S,
  fund: S,
  posting_date: S,
  description: S,
  lines: { type: 'array', items: record({ account_code: S, account_name: S, debit: MONEY, credit: MONEY, currency: S }) },
});

export const FUND_PERIOD = record({
  id: S,
  fund: S,
  entity_id: S,
  period: S,
  period_start: S,
  period_end: S,
  status: S,
  nav: NULLABLE_MONEY,
  currency: S,
  closed_at: NULLABLE_S,
});

export const WEBHOOK = record({
  id: S,
  url: S,
  events: strings,
  description: NULLABLE_S,
  active: B,
  created_at: S,
  last_delivery_at: NULLABLE_S,
  last_delivery_status: { type: ['integer', 'null'] },
});

export const PROFILE: JsonSchema = record({
  id: S,
  email: S,
  display_name: S,
  plan: S,
  organization: S,
  base_currency: S,
  timezone: S,
  created_at: S,
});
