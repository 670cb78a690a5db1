import { SeededRandom } from './prng.ts';
import { ETF_SYMBOLS, SYMBOL_UNIVERSE, priceAt } from './market-data.ts';
import { computeRisk, revaluePosition, toCents } from './portfolio.ts';
import type { SealedSecret, SecretBox } from './secret-box.ts';
import type { Account, Backtest, Connection, DataFile, Order, OrderType, Position, Profile, RiskSnapshot, Strategy, Webhook } from './records.ts';

/** A connection as stored: the public record plus its sealed credential (never serialised to callers). */
export interface StoredConnection {
  record: Connection;
  sealed: SealedSecret;
}

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const isoDate = (ms: number) => iso(ms).slice(0, 10);

const STRATEGY_TEMPLATES: Array<[Strategy['strategy_type'], string, string[]]> = [
  ['momentum', 'Momentum 20/100 US large caps', ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'META']],
  ['mean_reversion', 'RSI mean reversion consumer staples', ['KO', 'PEP', 'PG', 'WMT']],
  ['pairs', 'Pairs trade KO/PEP', ['KO', 'PEP']],
  ['trend_following', 'Sector ETF trend following', ['XLF', 'XLE', 'XLK']],
  ['statistical_arbitrage', 'Semiconductor stat arb basket', ['NVDA', 'AMD', 'INTC', 'QCOM', 'TXN']],
  ['momentum', 'Dual momentum SPY/TLT rotation', ['SPY', 'TLT']],
  ['mean_reversion', 'Bollinger band reversion banks', ['JPM', 'BAC', 'GS']],
  ['trend_following', 'Breakout 55-day energy', ['XOM', 'CVX']],
];

const CODE_TEMPLATE = (type: string) =>
  `def on_bar(ctx, bars):\n    # ${type} signal on the latest daily bars\n    for symbol in ctx.symbols:\n        ctx.rebalance(symbol, ctx.signal(symbol, bars[symbol]))\n`;

export interface TradingSeed {
  profile: Profile;
  accounts: Account[];
  strategies: Strategy[];
  backtests: Backtest[];
  orders: Order[];
  positions: Position[];
  connections: StoredConnection[];
  files: DataFile[];
  webhooks: Webhook[];
  riskSnapshots: RiskSnapshot[];
}

/** Seeds the trading side of the store: 3 accounts, 24 strategies (3 overlays), 45 backtests, 120 positions, 250 orders. */
export function seedTrading(seed: number, nowMs: number, secretBox: SecretBox): TradingSeed {
  const rng = new SeededRandom(seed);
  const profile: Profile = {
    id: rng.uuid(),
    email: 'demo@cpz.ai',
    display_name: 'Demo Trader',
    plan: 'pro',
    organization: 'CPZ Demo Capital',
    base_currency: 'USD',
    timezone: 'America/New_York',
    created_at: iso(nowMs - 400 * DAY_MS),
  };

  const accountSpecs: Array<[string, Account['broker'], Account['environment'], boolean]> = [
    ['Alpaca paper', 'alpaca', 'paper', true],
    ['Alpaca live', 'alpaca', 'live', true],
    ['Interactive Brokers live (read-only)', 'interactive_brokers', 'live', false],
  ];
  const accounts: Account[] = accountSpecs.map(([name, broker, environment, tradable]) => ({
    id: rng.uuid(),
    name,
    broker,
    environment,
    tradable,
    status: tradable ? 'active' : 'restricted',
    account_number: `${environment === 'paper' ? 'PA' : 'LV'}${rng.int(10_000_000, 99_999_999)}`,
    currency: 'USD',
    cash: '0',
    equity: '0',
    buying_power: '0',
    last_synced_at: iso(nowMs - rng.int(1, 48) * 3_600_000),
    created_at: iso(nowMs - rng.int(100, 380) * DAY_MS),
  }));

  const strategies: Strategy[] = [];
  for (let i = 0; i < 24; i++) {
    const [type, title, symbols] = STRATEGY_TEMPLATES[i % STRATEGY_TEMPLATES.length]!;
    const created = nowMs - rng.int(30, 360) * DAY_MS;
    strategies.push({
      id: rng.uuid(),
      title: i < STRATEGY_TEMPLATES.length ? title : `${title} v${Math.floor(i / STRATEGY_TEMPLATES.length) + 1}`,
      description: `${title}: trades ${symbols.join(', ')} on daily bars.`,
      strategy_type: type,
      status: rng.pick(['draft', 'active', 'active', 'active', 'paused', 'archived'] as const),
      role: 'standalone',
      symbols,
      account_id: rng.pick(accounts).id,
      parameters: { lookback_days: rng.pick([20, 50, 100]), position_size: rng.pick([5, 10, 25]), max_positions: symbols.length },
      code: CODE_TEMPLATE(type),
      version: rng.int(1, 6),
      overlay: null,
      created_at: iso(created),
      updated_at: iso(created + rng.int(1, 25) * DAY_MS),
    });
  }
  for (const [index, objective, benchmark] of [
    [21, 'beta', 'SPY'],
    [22, 'beta', 'QQQ'],
    [23, 'dollar_neutral', null],
  ] as const) {
    const overlay = strategies[index]!;
    const account = accounts[index === 23 ? 1 : 0]!;
    Object.assign(overlay, {
      title: objective === 'beta' ? `${benchmark} beta hedge overlay` : 'Dollar-neutral hedge overlay',
      description: `Hedges its target strategies' ${objective === 'beta' ? `beta to ${benchmark}` : 'net dollar exposure'} in the ${account.name} account.`,
      strategy_type: 'hedging',
      status: 'active',
      role: 'overlay',
      symbols: [benchmark ?? 'SPY'],
      account_id: account.id,
    });
    overlay.overlay = {
      policy: { objective, hedge_ratio: objective === 'beta' ? 1 : 0.8, tolerance_band: 0.05, benchmark_symbol: benchmark },
      targets: [
        { strategy_id: strategies[index - 21]!.id, weight: 1 },
        { strategy_id: strategies[index - 18]!.id, weight: 0.5 },
      ],
      account_id: overlay.account_id!,
      account_environment: index === 23 ? 'live' : 'paper',
      updated_at: overlay.updated_at,
    };
  }

  const backtests: Backtest[] = Array.from({ length: 45 }, () => {
    const strategy = rng.pick(strategies.slice(0, 21));
    const failed = rng.chance(0.1);
    const years = rng.int(1, 5);
    const end = nowMs - rng.int(2, 60) * DAY_MS;
    const totalReturn = failed ? 0 : Math.round((rng.normal() * 0.25 + 0.12) * 10_000) / 10_000;
    const initial = 10_000_000;
    const curve = Array.from({ length: years * 4 + 1 }, (_, q) => ({
      date: isoDate(end - (years * 4 - q) * 91 * DAY_MS),
      equity: String(Math.round(initial * (1 + (totalReturn * q) / (years * 4) + (q && q < years * 4 ? rng.normal() * 0.03 : 0)))),
    }));
    return {
      id: rng.uuid(),
      strategy_id: strategy.id,
      title: `${strategy.title} ${years}y backtest`,
      status: failed ? 'failed' : 'completed',
      timeframe: rng.pick(['1Day', '1Hour']),
      start_date: isoDate(end - years * 365 * DAY_MS),
      end_date: isoDate(end),
      initial_capital: String(initial),
      final_equity: String(Math.round(initial * (1 + totalReturn))),
      total_return: totalReturn,
      annualized_return: Math.round(((1 + totalReturn) ** (1 / years) - 1) * 10_000) / 10_000,
      sharpe_ratio: failed ? 0 : Math.round((rng.normal() * 0.6 + 1) * 100) / 100,
      max_drawdown: failed ? 0 : Math.round(rng.next() * 0.35 * 10_000) / 10_000,
      win_rate: failed ? 0 : Math.round((0.4 + rng.next() * 0.25) * 100) / 100,
      trades_count: failed ? 0 : rng.int(20, 900),
      benchmark_symbol: 'SPY',
      benchmark_return: Math.round((0.09 * years + rng.normal() * 0.05) * 10_000) / 10_000,
      parameters: strategy.parameters,
      equity_curve: failed ? [] : curve,
      error: failed ? 'Strategy raised ZeroDivisionError in on_bar at bar 412' : null,
      created_at: iso(end + rng.int(1, 3600) * 1000),
    };
  });

  const positions: Position[] = [];
  accounts.forEach((account, a) => {
    for (let i = 0; i < 40; i++) {
      const symbol = SYMBOL_UNIVERSE[(i * 7 + a * 13) % SYMBOL_UNIVERSE.length]!;
      const price = priceAt(symbol, nowMs);
      const held = strategies.filter((s) => s.account_id === account.id && s.symbols.includes(symbol));
      const overlay = strategies.find((s) => s.role === 'overlay' && s.account_id === account.id && s.symbols.includes(symbol));
      const side = overlay ? 'short' : rng.chance(0.15) ? 'short' : 'long';
      positions.push(
        revaluePosition(
          {
            id: rng.uuid(),
            account_id: account.id,
            strategy_id: overlay?.id ?? held[0]?.id ?? null,
            symbol,
            asset_class: ETF_SYMBOLS.has(symbol) ? 'etf' : 'us_equity',
            side,
            quantity: String(rng.int(1, 60) * 5),
            avg_entry_price: String(toCents(price * (1 + rng.normal() * 0.08))),
            current_price: '0',
            market_value: '0',
            cost_basis: '0',
            unrealized_pl: '0',
            currency: 'USD',
            updated_at: iso(nowMs),
          },
          nowMs,
        ),
      );
    }
  });
  for (const account of accounts) {
    const value = positions.filter((p) => p.account_id === account.id).reduce((s, p) => s + Number(p.market_value), 0);
    const cash = rng.int(50_000, 400_000) * 100;
    Object.assign(account, { cash: String(cash), equity: String(cash + value), buying_power: String(account.tradable ? cash * 2 : 0) });
  }

  const orders: Order[] = Array.from({ length: 250 }, (_, i) => {
    const position = rng.pick(positions);
    const type = rng.pick(['market', 'market', 'limit', 'limit', 'stop', 'stop_limit'] as const satisfies readonly OrderType[]);
    const submitted = nowMs - (250 - i) * 3 * 3_600_000 - rng.int(0, 3_000_000);
    const status = rng.pick(['filled', 'filled', 'filled', 'canceled', 'accepted', 'partially_filled', 'rejected', 'expired'] as const);
    const quantity = rng.int(1, 40) * 5;
    const fill = toCents(priceAt(position.symbol, submitted));
    const filled = status === 'filled' ? quantity : status === 'partially_filled' ? Math.ceil(quantity / 2) : 0;
    return {
      id: rng.uuid(),
      broker_order_id: `${rng.int(100_000_000, 999_999_999)}`,
      client_order_id: rng.chance(0.5) ? `cpz-${i + 1}` : null,
      account_id: position.account_id,
      strategy_id: position.strategy_id,
      symbol: position.symbol,
      side: rng.pick(['buy', 'sell'] as const),
      type,
      time_in_force: 'day',
      quantity: String(quantity),
      filled_quantity: String(filled),
      price: type === 'limit' || type === 'stop_limit' ? String(Math.round(fill * 0.99)) : null,
      stop_price: type === 'stop' || type === 'stop_limit' ? String(Math.round(fill * 0.97)) : null,
      filled_avg_price: filled ? String(fill) : null,
      status,
      currency: 'USD',
      submitted_at: iso(submitted),
      filled_at: filled ? iso(submitted + rng.int(1, 600) * 1000) : null,
      updated_at: iso(submitted + rng.int(600, 3600) * 1000),
    };
  });

  const connectionSpecs: Array<[string, StoredConnectionType, string, string[]]> = [
    ['Alpaca paper keys', 'broker', 'alpaca', ['api_key', 'api_secret']],
    ['Alpaca live keys', 'broker', 'alpaca', ['api_key', 'api_secret']],
    ['IBKR gateway', 'broker', 'interactive_brokers', ['username', 'password']],
    ['Polygon market data', 'data_provider', 'polygon', ['api_key']],
    ['OpenAI for research notes', 'llm_provider', 'openai', ['api_key']],
  ];
  const connections: StoredConnection[] = connectionSpecs.map(([name, connectionType, provider, fields]) => {
    const id = rng.uuid();
    const secrets = Object.fromEntries(fields.map((f) => [f, `seeded-${provider}-${f}-${rng.int(1000, 9999)}`]));
    return {
      record: {
        id,
        name,
        connection_type: connectionType,
        provider,
        status: 'active',
        credential_fields: fields,
        created_at: iso(nowMs - rng.int(20, 300) * DAY_MS),
        last_used_at: iso(nowMs - rng.int(1, 90) * 3_600_000),
      },
      sealed: secretBox.seal(JSON.stringify(secrets), id),
    };
  });

  const files: DataFile[] = Array.from({ length: 30 }, (_, i) => {
    const symbol = SYMBOL_UNIVERSE[i % SYMBOL_UNIVERSE.length]!;
    const fileType = rng.pick(['csv', 'csv', 'parquet', 'json'] as const);
    const status = rng.pick(['ready', 'ready', 'ready', 'uploaded', 'processing', 'failed'] as const);
    const rows = rng.int(1_000, 2_000_000);
    return {
      id: rng.uuid(),
      name: `${symbol.toLowerCase()}_${rng.pick(['minute', 'daily', 'fundamentals', 'signals'])}_${2022 + (i % 4)}.${fileType}`,
      file_type: fileType,
      status,
      size_bytes: rows * rng.int(40, 90),
      row_count: status === 'ready' ? rows : null,
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'symbol', type: 'string' },
        { name: 'close', type: 'decimal' },
        { name: 'volume', type: 'integer' },
      ],
      sha256: Array.from({ length: 8 }, () => rng.int(0, 0xffffffff).toString(16).padStart(8, '0')).join(''),
      error: status === 'failed' ? 'Row 18 has 3 columns, expected 4' : null,
      created_at: iso(nowMs - rng.int(1, 200) * DAY_MS),
    };
  });

  const webhookEvents = ['order.filled', 'order.canceled', 'position.updated', 'strategy.updated', 'risk.snapshot_created', 'backtest.completed'];
  const webhooks: Webhook[] = Array.from({ length: 6 }, (_, i) => ({
    id: rng.uuid(),
    url: `https://hooks.example.com/cpz/${['fills', 'risk', 'research', 'ops', 'audit', 'legacy'][i]}`,
    events: webhookEvents
      .filter(() => rng.chance(0.5))
      .concat(webhookEvents[i]!)
      .filter((e, k, all) => all.indexOf(e) === k),
    description: rng.chance(0.7) ? `Notify the ${['trading desk', 'risk team', 'research', 'ops', 'audit log', 'old integration'][i]}` : null,
    active: i < 4,
    created_at: iso(nowMs - rng.int(10, 200) * DAY_MS),
    last_delivery_at: iso(nowMs - rng.int(1, 240) * 3_600_000),
    last_delivery_status: rng.pick([200, 200, 204, 500]),
  }));

  const riskSnapshots: RiskSnapshot[] = [];
  accounts.forEach((account) => {
    for (const [daysAgo, method, confidence] of [
      [14, 'historical', 0.95],
      [7, 'parametric', 0.99],
      [1, 'historical', 0.99],
    ] as const) {
      const held = positions.filter((p) => p.account_id === account.id);
      riskSnapshots.push({
        id: rng.uuid(),
        ...computeRisk(account, held, { method, confidence_level: confidence, horizon_days: 1 }, nowMs - daysAgo * DAY_MS),
      });
    }
  });

  return { profile, accounts, strategies, backtests, orders, positions, connections, files, webhooks, riskSnapshots };
}

type StoredConnectionType = StoredConnection['record']['connection_type'];
