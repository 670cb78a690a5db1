import { input, oneOf, ticker } from './schema-fragments.ts';
import { READ_ONLY, type ToolDefinition } from './tool-definition.ts';

const TIMEFRAMES = ['1Min', '5Min', '15Min', '30Min', '1Hour', '2Hour', '4Hour', '1Day', '1Week', '1Month'];
const WHEN = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2}))?$' };

export const marketDataTools: ToolDefinition[] = [
  {
    name: 'get_market_data',
    title: 'Get current quotes',
    description:
      'Current quotes for up to 100 symbols: last price, bid and ask with sizes, previous close, change and change percent, and ' +
      'whether the market is open. Prices in cents. For historical OHLCV bars (candles) use get_bars.',
    category: 'market-data',
    requiredScopes: ['market-data:read'],
    annotations: READ_ONLY,
    inputSchema: input(
      {
        symbols: { type: 'array', items: ticker('Ticker, e.g. TSLA.'), minItems: 1, maxItems: 100, description: 'Tickers to quote, e.g. ["AAPL", "TSLA"].' },
      },
      ['symbols'],
    ),
    request: (args) => ({ method: 'GET', path: '/v1/market-data/quotes', query: args }),
  },
  {
    name: 'get_bars',
    title: 'Get historical bars',
    description:
      'Historical OHLCV bars (candles: open, high, low, close, volume, VWAP) for up to 20 symbols, oldest first. timeframe from ' +
      '1Min to 1Month (default 1Day); start and end as dates or RFC 3339 times; without start, the latest bars up to end (default ' +
      'now). limit 1-10,000 bars per symbol (default 100). feed iex (default) or sip (all US exchanges; higher volume). Prices in ' +
      'cents. For the current price use get_market_data.',
    category: 'market-data',
    requiredScopes: ['market-data:read'],
    annotations: READ_ONLY,
    inputSchema: input(
      {
        symbols: { type: 'array', items: ticker('Ticker, e.g. MSFT.'), minItems: 1, maxItems: 20, description: 'Tickers, e.g. ["MSFT"].' },
        timeframe: { ...oneOf(TIMEFRAMES, 'Bar size, e.g. 1Day for daily candles or 1Hour for hourly.'), default: '1Day' },
        start: { ...WHEN, description: 'First bar time, e.g. 2026-01-02 or 2026-01-02T14:30:00Z.' },
        end: { ...WHEN, description: 'Last bar time (default now).' },
        limit: { type: 'integer', minimum: 1, maximum: 10000, default: 100, description: 'Maximum bars per symbol, 1-10,000 (default 100).' },
        feed: { ...oneOf(['iex', 'sip'], 'Data feed: iex (IEX exchange only) or sip (consolidated tape).'), default: 'iex' },
      },
      ['symbols'],
    ),
    request: (args) => ({ method: 'GET', path: '/v1/market-data/bars', query: args }),
  },
];
