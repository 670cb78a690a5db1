/**
 * Search keywords of each CPZAI tool: the trading and fund-operations words a user says for what the
 * tool does, where they differ from the words of its title and description (market jargon, everyday
 * phrasings, spelled-out units). Advertised in each tool's `_meta["ai.cpz/tool"].keywords` (index.ts);
 * a gateway's tool search indexes them as a field of their own. Written from the domain (brokerage,
 * portfolio and middle-office terms), one list per tool.
 */
export const SEARCH_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  // Strategies
  list_strategies: ['my strategies', 'trading algorithms', 'bots', 'algos', 'systematic models', 'strategy catalogue'],
  get_strategy: ['strategy details', 'strategy code', 'algorithm settings', 'strategy parameters', 'bot configuration'],
  create_strategy: ['new strategy', 'new algorithm', 'new bot', 'set up a strategy', 'add a strategy', 'write a trading algorithm'],
  update_strategy: ['edit strategy', 'change strategy', 'pause strategy', 'activate strategy', 'deactivate', 'rename strategy', 'modify algorithm'],
  list_overlays: ['hedge overlays', 'hedging strategies', 'overlay configuration', 'hedge ratios', 'protective hedges'],
  get_overlay_exposure: ['hedge status', 'hedge drift', 'net exposure', 'beta exposure', 'hedge imbalance', 'rebalance suggestion', 'how hedged am I'],
  configure_overlay: ['set up a hedge', 'hedge my portfolio', 'hedge ratio', 'make a strategy an overlay', 'hedge targets', 'tolerance band'],
  // Backtests
  get_backtest_results: ['past backtests', 'simulation runs', 'historical simulations', 'backtest history', 'strategy performance tests'],
  get_backtest_result: ['backtest report', 'simulation result', 'sharpe ratio', 'max drawdown', 'returns of a backtest', 'equity curve'],
  // Orders and execution
  list_orders: ['open orders', 'working orders', 'pending orders', 'order history', 'my orders', 'order blotter', 'fills', 'trades I made'],
  get_order: ['order status', 'order details', 'was my order filled', 'one order', 'order fill price'],
  place_order: [
    'buy',
    'sell',
    'buy shares',
    'sell shares',
    'trade',
    'submit order',
    'market order',
    'limit order',
    'stop order',
    'go long',
    'go short',
    'short sell',
  ],
  execute_strategy: ['run strategy', 'run my algorithm now', 'trigger strategy', 'run bot once', 'live run', 'generate signals'],
  // Positions and accounts
  list_positions: ['holdings', 'my portfolio', 'what do I own', 'open positions', 'stocks I hold', 'shares held', 'unrealized profit and loss'],
  sync_portfolio: ['refresh holdings', 'reconcile positions', 'pull positions from broker', 'update portfolio', 'resync account'],
  list_accounts: ['brokerage accounts', 'paper account', 'live account', 'trading accounts', 'account balances', 'buying power'],
  list_connections: ['linked brokers', 'connected providers', 'API keys I have connected', 'integrations', 'data provider credentials'],
  create_connection: ['connect broker', 'link brokerage', 'add API key', 'store credentials', 'integrate data provider', 'connect exchange'],
  // Research data
  list_data_files: ['uploaded datasets', 'my files', 'CSV uploads', 'research data', 'custom data'],
  get_data_file: ['file details', 'dataset metadata', 'upload status', 'file size and format'],
  // Market data
  get_market_data: ['quote', 'stock price', 'current price', 'last price', 'bid ask spread', 'live price', 'ticker price', 'how much is a share'],
  get_bars: [
    'candles',
    'candlesticks',
    'price history',
    'historical prices',
    'chart data',
    'OHLC',
    'intraday bars',
    'daily bars',
    'minute bars',
    'hourly bars',
    'time series',
  ],
  // Risk
  compute_risk: ['calculate VaR', 'value at risk', 'expected shortfall', 'CVaR', 'tail risk', 'run a risk calculation', 'stress the portfolio'],
  list_risk_snapshots: ['past risk reports', 'VaR history', 'risk history', 'saved risk calculations'],
  get_risk_snapshot: ['risk report', 'one VaR result', 'risk figures', 'saved VaR'],
  // Middle office
  list_deals: ['trades booked', 'OTC trades', 'deal blotter', 'bookings', 'transactions of a legal entity', 'swaps', 'bonds'],
  list_lifecycle_events: ['trade events', 'confirmations', 'settlements', 'amendments', 'deal history', 'fixings', 'corporate actions'],
  list_cash_flows: ['payments', 'receipts', 'coupons', 'dividends', 'interest payments', 'unsettled payments', 'settlement schedule', 'money in and out'],
  list_journal_entries: ['general ledger', 'accounting entries', 'bookkeeping', 'debits and credits', 'postings', 'ledger'],
  list_fund_periods: ['accounting periods', 'month end close', 'NAV periods', 'closed months', 'fund calendar', 'period close'],
  // Webhooks
  list_webhooks: ['notifications', 'event subscriptions', 'callbacks', 'alerts I set up', 'my webhooks'],
  create_webhook: ['subscribe to events', 'notify me', 'add callback URL', 'set up alerts', 'push notifications', 'new webhook'],
  delete_webhook: ['unsubscribe', 'stop notifications', 'remove callback', 'remove webhook', 'cancel alerts'],
  // Profile
  get_profile: ['who am I', 'my account', 'my user', 'logged in user', 'my plan', 'my email'],
};
