import type { ParsedUrlQuery } from 'node:querystring';
import { requireScope } from '../auth.ts';
import { HttpError } from '../http-errors.ts';
import { FEEDS, TIMEFRAMES, barsFor, quoteFor, type Feed, type Timeframe } from '../market-data.ts';
import type { RouteContext } from './route-context.ts';

const TICKER = /^[A-Z][A-Z0-9.]{0,9}$/;
const invalid = (field: string, message: string) => new HttpError(400, 'invalid_query', message, field);

function single(query: ParsedUrlQuery, field: string): string | undefined {
  const value = query[field];
  if (Array.isArray(value)) throw invalid(field, `${field} was given more than once`);
  return value;
}

function symbolsOf(query: ParsedUrlQuery, max: number): string[] {
  const raw = single(query, 'symbols');
  if (!raw) throw invalid('symbols', 'symbols is required: a comma-separated list such as AAPL,MSFT');
  const symbols = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter(Boolean),
    ),
  ];
  const bad = symbols.find((s) => !TICKER.test(s));
  if (bad) throw invalid('symbols', `"${bad}" is not a ticker symbol`);
  if (symbols.length === 0 || symbols.length > max) throw invalid('symbols', `symbols must list 1 to ${max} tickers`);
  return symbols;
}

function timestampOf(query: ParsedUrlQuery, field: string): number | undefined {
  const raw = single(query, field);
  if (raw === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw invalid(field, `${field} must be an RFC 3339 timestamp or a YYYY-MM-DD date, got "${raw}"`);
  return ms;
}

function rejectUnknown(query: ParsedUrlQuery, allowed: string[]): void {
  const unknown = Object.keys(query).find((k) => !allowed.includes(k));
  if (unknown) throw invalid(unknown, `Unknown query parameter ${unknown}; allowed: ${allowed.join(', ')}`);
}

/** Synthetic market data (market-data:read): latest quotes and historical bars. */
export function marketDataRoutes({ router, now }: RouteContext): void {
  router.get('/v1/market-data/quotes', requireScope('market-data:read'), (ctx) => {
    rejectUnknown(ctx.query, ['symbols']);
    const at = now();
    const data = symbolsOf(ctx.query, 100).map((symbol) => quoteFor(symbol, at));
    ctx.body = { data, count: data.length };
  });

  router.get('/v1/market-data/bars', requireScope('market-data:read'), (ctx) => {
    rejectUnknown(ctx.query, ['symbols', 'timeframe', 'start', 'end', 'limit', 'feed']);
    const symbols = symbolsOf(ctx.query, 20);
    const timeframe = (single(ctx.query, 'timeframe') ?? '1Day') as Timeframe;
    if (!TIMEFRAMES.includes(timeframe)) throw invalid('timeframe', `timeframe must be one of ${TIMEFRAMES.join(', ')}`);
    const feed = (single(ctx.query, 'feed') ?? 'iex') as Feed;
    if (!FEEDS.includes(feed)) throw invalid('feed', 'feed must be iex or sip');
    const rawLimit = single(ctx.query, 'limit') ?? '100';
    const limit = Number(rawLimit);
    if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > 10_000) throw invalid('limit', `limit must be an integer from 1 to 10000, got "${rawLimit}"`);
    const at = now();
    const startMs = timestampOf(ctx.query, 'start');
    const endMs = timestampOf(ctx.query, 'end') ?? at;
    if (startMs !== undefined && startMs > endMs) throw invalid('start', 'start must not be after end');
    const bars = Object.fromEntries(symbols.map((symbol) => [symbol, barsFor(symbol, { timeframe, startMs, endMs, limit, feed, nowMs: at })]));
    ctx.body = { data: bars, timeframe, feed, currency: 'USD' };
  });
}
