/**
 * Record shapes of the platform API. Money and quantities travel as decimal strings:
 * money in minor currency units (cents for USD, signed, e.g. "-1250" = -12.50), quantities
 * in instrument units (shares, e.g. "10" or "0.5"). Timestamps are RFC 3339 UTC strings,
 * dates are YYYY-MM-DD.
 */

export interface Profile {
  id: string;
  email: string;
  display_name: string;
  plan: 'free' | 'pro' | 'enterprise';
  organization: string;
  base_currency: string;
  timezone: string;
  created_at: string;
}

export interface Account {
  id: string;
  name: string;
  broker: 'alpaca' | 'interactive_brokers' | 'tradier';
  environment: 'paper' | 'live';
  tradable: boolean;
  status: 'active' | 'restricted';
  account_number: string;
  currency: string;
  cash: string;
  equity: string;
  buying_power: string;
  last_synced_at: string;
  created_at: string;
}

export interface OverlayConfig {
  policy: { objective: 'beta' | 'dollar_neutral'; hedge_ratio: number; tolerance_band: number; benchmark_symbol: string | null };
  targets: Array<{ strategy_id: string; weight: number }>;
  account_id: string;
  account_environment: 'paper' | 'live';
  updated_at: string;
}

export interface Strategy {
  id: string;
  title: string;
  description: string;
  strategy_type: 'momentum' | 'mean_reversion' | 'pairs' | 'trend_following' | 'statistical_arbitrage' | 'hedging';
  status: 'draft' | 'active' | 'paused' | 'archived';
  role: 'standalone' | 'overlay';
  symbols: string[];
  account_id: string | null;
  parameters: Record<string, unknown>;
  code: string;
  version: number;
  overlay: OverlayConfig | null;
  created_at: string;
  updated_at: string;
}

export interface Backtest {
  id: string;
  strategy_id: string;
  title: string;
  status: 'completed' | 'failed';
  timeframe: string;
  start_date: string;
  end_date: string;
  initial_capital: string;
  final_equity: string;
  total_return: number;
  annualized_return: number;
  sharpe_ratio: number;
  max_drawdown: number;
  win_rate: number;
  trades_count: number;
  benchmark_symbol: string;
  benchmark_return: number;
  parameters: Record<string, unknown>;
  equity_curve: Array<{ date: string; equity: string }>;
  error: string | null;
  created_at: string;
}

export type OrderSide = 'buy' | 'sell';
export type OrderType = 'market' | 'limit' | 'stop' | 'stop_limit';

export interface Order {
  id: string;
  broker_order_id: string;
  client_order_id: string | null;
  account_id: string;
  strategy_id: string | null;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  time_in_force: 'day';
  quantity: string;
  filled_quantity: string;
  price: string | null;
  stop_price: string | null;
  filled_avg_price: string | null;
  status: 'accepted' | 'partially_filled' | 'filled' | 'canceled' | 'rejected' | 'expired';
  currency: string;
  submitted_at: string;
  filled_at: string | null;
  updated_at: string;
}

export interface Position {
  id: string;
  account_id: string;
  strategy_id: string | null;
  symbol: string;
  asset_class: 'us_equity' | 'etf';
  side: 'long' | 'short';
  quantity: string;
  avg_entry_price: string;
  current_price: string;
  market_value: string;
  cost_basis: string;
  unrealized_pl: string;
  currency: string;
  updated_at: string;
}

export interface Connection {
  id: string;
  name: string;
  connection_type: 'broker' | 'data_provider' | 'llm_provider';
  provider: string;
  status: 'active' | 'error';
  credential_fields: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface DataFile {
  id: string;
  name: string;
  file_type: 'csv' | 'parquet' | 'json';
  status: 'uploaded' | 'processing' | 'ready' | 'failed';
  size_bytes: number;
  row_count: number | null;
  columns: Array<{ name: string; type: string }>;
  sha256: string;
  error: string | null;
  created_at: string;
}

export interface RiskSnapshot {
  id: string;
  account_id: string;
  method: 'historical' | 'parametric';
  confidence_level: number;
  horizon_days: number;
  value_at_risk: string;
  expected_shortfall: string;
  gross_exposure: string;
  net_exposure: string;
  equity: string;
  positions_count: number;
  top_contributors: Array<{ symbol: string; value_at_risk: string }>;
  currency: string;
  computed_at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  created_at: string;
  last_delivery_at: string | null;
  last_delivery_status: number | null;
}

export interface Deal {
  id: string;
  deal_id: string;
  entity_id: string;
  fund: string;
  book: string;
  product_kind: 'interest_rate_swap' | 'fx_forward' | 'equity_swap' | 'bond' | 'credit_default_swap' | 'equity_option';
  status: 'pending' | 'active' | 'matured' | 'terminated';
  counterparty: string;
  direction: 'buy' | 'sell' | 'pay_fixed' | 'receive_fixed';
  notional: string;
  currency: string;
  trade_date: string;
  effective_date: string;
  maturity_date: string;
  created_at: string;
}

export interface LifecycleEvent {
  id: string;
  deal_id: string;
  entity_id: string;
  kind: 'trade' | 'confirmation' | 'fixing' | 'reset' | 'coupon' | 'exercise' | 'expiry' | 'maturity' | 'amendment' | 'termination';
  status: 'scheduled' | 'processed' | 'failed';
  event_date: string;
  description: string;
}

export interface CashFlow {
  id: string;
  deal_id: string;
  entity_id: string;
  fund: string;
  book: string;
  flow_type: 'coupon' | 'principal' | 'premium' | 'fee' | 'settlement' | 'margin';
  direction: 'pay' | 'receive';
  amount: string;
  currency: string;
  payment_date: string;
  status: 'scheduled' | 'pending_settlement' | 'settled' | 'failed';
  settled_at: string | null;
}

export interface JournalEntry {
  id: string;
  entry_number: string;
  deal_id: string;
  entity_id: string;
  fund: string;
  posting_date: string;
  description: string;
  lines: Array<{ account_code: string; account_name: string; debit: string; credit: string; currency: string }>;
}

export interface FundPeriod {
  id: string;
  fund: string;
  entity_id: string;
  period: string;
  period_start: string;
  period_end: string;
  status: 'open' | 'closing' | 'closed';
  nav: string | null;
  currency: string;
  closed_at: string | null;
}

export interface Execution {
  id: string;
  strategy_id: string;
  account_id: string;
  status: 'completed' | 'failed';
  dry_run: boolean;
  signals: Array<{ symbol: string; action: 'buy' | 'sell' | 'hold'; reason: string }>;
  orders: Order[];
  logs: string[];
  started_at: string;
  finished_at: string;
}
