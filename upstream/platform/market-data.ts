import { SeededRandom, hashSeed } from './prng.ts';

/**
 * Synthetic, deterministic market data: a seeded geometric random walk of daily closes per symbol
 * (anchored 2020-01-01, weekdays only), and inside each day a seeded Brownian bridge from open to
 * close over the 390-minute session (14:30-21:00 UTC, holidays and DST ignored), clamped to the
 * day's high/low so every timeframe agrees. Prices are returned in minor units (cents).
 */

export const TIMEFRAMES = ['1Min', '5Min', '15Min', '30Min', '1Hour', '2Hour', '4Hour', '1Day', '1Week', '1Month'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];
export const FEEDS = ['iex', 'sip'] as const;
export type Feed = (typeof FEEDS)[number];

const DAY_MS = 86_400_000;
const ANCHOR_DAY = Date.UTC(2020, 0, 1) / DAY_MS;
const SESSION_OPEN_MS = (14 * 60 + 30) * 60_000;
const SESSION_MINUTES = 390;
const INTRADAY_MINUTES: Partial<Record<Timeframe, number>> = {
  '1Min': 1,
  '5Min': 5,
  '15Min': 15,
  '30Min': 30,
  '1Hour': 60,
  '2Hour': 120,
  '4Hour': 240,
};
/** IEX prints a small share of consolidated (SIP) volume. */
const IEX_VOLUME_SHARE = 0.025;

/** Reference prices (USD) for the demo universe; other valid tickers get a hashed base price. */
const BASE_PRICES: Record<string, number> = {
  AAPL: 190,
  MSFT: 420,
  NVDA: 120,
  AMZN: 180,
  GOOGL: 170,
  META: 500,
  TSLA: 240,
  AMD: 150,
  NFLX: 650,
  AVGO: 160,
  JPM: 200,
  BAC: 40,
  GS: 470,
  V: 280,
  MA: 460,
  XOM: 115,
  CVX: 155,
  KO: 62,
  PEP: 170,
  PG: 165,
  JNJ: 155,
  UNH: 520,
  PFE: 28,
  MRK: 125,
  WMT: 68,
  COST: 850,
  HD: 360,
  MCD: 290,
  DIS: 100,
  NKE: 90,
  INTC: 30,
  CSCO: 50,
  ORCL: 140,
  CRM: 270,
  ADBE: 520,
  IBM: 190,
  QCOM: 170,
  TXN: 195,
  CAT: 340,
  DE: 380,
  BA: 180,
  GE: 165,
  HON: 210,
  LMT: 460,
  UPS: 130,
  T: 18,
  VZ: 40,
  TMUS: 190,
  SBUX: 85,
  LOW: 240,
  SPY: 560,
  QQQ: 480,
  IWM: 210,
  DIA: 400,
  TLT: 95,
  GLD: 220,
  XLF: 44,
  XLE: 92,
  XLK: 225,
  EEM: 43,
};
export const ETF_SYMBOLS = new Set(['SPY', 'QQQ', 'IWM', 'DIA', 'TLT', 'GLD', 'XLF', 'XLE', 'XLK', 'EEM']);
export const SYMBOL_UNIVERSE = Object.keys(BASE_PRICES);

export interface Bar {
  t: string;
  o: string;
  h: string;
  l: string;
  c: string;
  v: string;
  vw: string;
  n: number;
}

interface DayPrices {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

interface SymbolProfile {
  base: number;
  vol: number;
  beta: number;
  volume: number;
}

const cents = (price: number): string => String(Math.round(price * 100));
const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);
const isWeekday = (day: number): boolean => {
  const weekday = new Date(day * DAY_MS).getUTCDay();
  return weekday !== 0 && weekday !== 6;
};

export function symbolProfile(symbol: string): SymbolProfile {
  const rng = new SeededRandom(hashSeed('profile', symbol));
  const base = BASE_PRICES[symbol] ?? rng.int(15, 400);
  const etf = ETF_SYMBOLS.has(symbol);
  return {
    base,
    vol: etf ? 0.008 + rng.next() * 0.006 : 0.012 + rng.next() * 0.018,
    beta: symbol === 'SPY' ? 1 : etf ? 0.6 + rng.next() * 0.6 : 0.5 + rng.next() * 1.3,
    volume: rng.int(2, 80) * 1_000_000,
  };
}

const closeCache = new Map<string, number[]>();

/** Daily close (USD) of `symbol` on UTC day number `day`; weekends repeat Friday's close. */
function dailyClose(symbol: string, day: number): number {
  const index = Math.max(0, day - ANCHOR_DAY);
  let closes = closeCache.get(symbol);
  if (!closes) closeCache.set(symbol, (closes = [symbolProfile(symbol).base]));
  const { vol } = symbolProfile(symbol);
  while (closes.length <= index) {
    const previous = closes[closes.length - 1]!;
    const d = ANCHOR_DAY + closes.length;
    if (!isWeekday(d)) {
      closes.push(previous);
      continue;
    }
    const shock = new SeededRandom(hashSeed('close', symbol, d)).normal();
    closes.push(Math.max(1, previous * Math.exp(vol * shock - 0.5 * vol * vol + 0.0003)));
  }
  return closes[index]!;
}

function dayPrices(symbol: string, day: number): DayPrices {
  const profile = symbolProfile(symbol);
  const rng = new SeededRandom(hashSeed('day', symbol, day));
  const open = dailyClose(symbol, day - 1) * (1 + rng.normal() * profile.vol * 0.25);
  const close = dailyClose(symbol, day);
  return {
    open,
    close,
    high: Math.max(open, close) * (1 + Math.abs(rng.normal()) * profile.vol * 0.4),
    low: Math.min(open, close) * (1 - Math.abs(rng.normal()) * profile.vol * 0.4),
    volume: profile.volume * (0.6 + rng.next()),
  };
}

const pathCache = new Map<string, number[]>();

/** 391 prices: the session path from open (index 0) to close (index 390). */
function sessionPath(symbol: string, day: number): number[] {
  const key = `${symbol}:${day}`;
  const cached = pathCache.get(key);
  if (cached) return cached;
  const { open, close, high, low } = dayPrices(symbol, day);
  const rng = new SeededRandom(hashSeed('path', symbol, day));
  const sigma = symbolProfile(symbol).vol / Math.sqrt(SESSION_MINUTES);
  const walk = [0];
  for (let m = 1; m <= SESSION_MINUTES; m++) walk.push(walk[m - 1]! + sigma * rng.normal());
  const drift = Math.log(close / open);
  const path = walk.map((w, m) => {
    const bridge = w - (m / SESSION_MINUTES) * walk[SESSION_MINUTES]!;
    return Math.min(high, Math.max(low, open * Math.exp(drift * (m / SESSION_MINUTES) + bridge)));
  });
  if (pathCache.size > 4000) pathCache.clear();
  pathCache.set(key, path);
  return path;
}

function makeBar(t: number, prices: number[], volume: number, feed: Feed): Bar {
  const o = prices[0]!;
  const c = prices[prices.length - 1]!;
  const h = Math.max(...prices);
  const l = Math.min(...prices);
  const v = Math.max(1, Math.round(volume * (feed === 'iex' ? IEX_VOLUME_SHARE : 1)));
  return {
    t: new Date(t).toISOString(),
    o: cents(o),
    h: cents(h),
    l: cents(l),
    c: cents(c),
    v: String(v),
    vw: cents((o + h + l + c) / 4),
    n: Math.max(1, Math.round(v / 90)),
  };
}

/** The intraday bars of one trading day for a bucket size in minutes, only those already started at `nowMs`. */
function intradayBars(symbol: string, day: number, minutes: number, feed: Feed, nowMs: number): Bar[] {
  const path = sessionPath(symbol, day);
  const { volume } = dayPrices(symbol, day);
  const sessionStart = day * DAY_MS + SESSION_OPEN_MS;
  const bars: Bar[] = [];
  for (let start = 0; start < SESSION_MINUTES; start += minutes) {
    const t = sessionStart + start * 60_000;
    if (t > nowMs) break;
    const end = Math.min(start + minutes, SESSION_MINUTES);
    // U-shaped intraday volume: busier near the open and the close.
    const share = ((end - start) / SESSION_MINUTES) * (0.7 + 0.9 * Math.abs((start + end) / SESSION_MINUTES - 1));
    bars.push(makeBar(t, path.slice(start, end + 1), volume * share, feed));
  }
  return bars;
}

function dailyBar(symbol: string, day: number, feed: Feed): Bar {
  const p = dayPrices(symbol, day);
  return makeBar(day * DAY_MS, [p.open, p.high, p.low, p.close], p.volume, feed);
}

/** The last completed trading day at `nowMs` (a day completes at the 21:00 UTC close). */
function lastCompletedDay(nowMs: number): number {
  let day = dayOf(nowMs);
  if (nowMs < day * DAY_MS + SESSION_OPEN_MS + SESSION_MINUTES * 60_000) day -= 1;
  while (!isWeekday(day)) day -= 1;
  return day;
}

function previousTradingDay(day: number): number {
  let previous = day - 1;
  while (!isWeekday(previous)) previous -= 1;
  return previous;
}

function periodKey(timeframe: '1Week' | '1Month', day: number): number {
  const date = new Date(day * DAY_MS);
  if (timeframe === '1Month') return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS;
  return day - ((date.getUTCDay() + 6) % 7);
}

function mergeBars(bars: Bar[]): Bar {
  const num = (s: string) => Number(s);
  const volume = bars.reduce((sum, b) => sum + num(b.v), 0);
  const merged = {
    t: bars[0]!.t,
    o: bars[0]!.o,
    h: String(Math.max(...bars.map((b) => num(b.h)))),
    l: String(Math.min(...bars.map((b) => num(b.l)))),
    c: bars[bars.length - 1]!.c,
    v: String(volume),
    vw: '0',
    n: bars.reduce((sum, b) => sum + b.n, 0),
  };
  merged.vw = String(Math.round((num(merged.o) + num(merged.h) + num(merged.l) + num(merged.c)) / 4));
  return merged;
}

export interface BarsQuery {
  timeframe: Timeframe;
  startMs?: number;
  endMs: number;
  limit: number;
  feed: Feed;
  nowMs: number;
}

/**
 * Bars for one symbol within [start, end], oldest first, at most `limit`. Without a start, the latest
 * `limit` bars ending at `end`. Bars never extend past `now`.
 */
export function barsFor(symbol: string, query: BarsQuery): Bar[] {
  const end = Math.min(query.endMs, query.nowMs);
  const inRange = (bar: Bar) => {
    const t = Date.parse(bar.t);
    return t <= end && (query.startMs === undefined || t >= query.startMs);
  };
  const minutes = INTRADAY_MINUTES[query.timeframe];
  const barsOfDay = (day: number): Bar[] => {
    if (!isWeekday(day) || day <= ANCHOR_DAY) return [];
    if (minutes) return intradayBars(symbol, day, minutes, query.feed, query.nowMs);
    return day <= lastCompletedDay(query.nowMs) ? [dailyBar(symbol, day, query.feed)] : [];
  };
  const collected: Bar[] = [];
  if (query.timeframe === '1Week' || query.timeframe === '1Month') {
    const timeframe = query.timeframe;
    const groups = new Map<number, Bar[]>();
    const firstDay = query.startMs !== undefined ? dayOf(query.startMs) : ANCHOR_DAY + 1;
    for (let day = dayOf(end); day >= Math.max(firstDay, ANCHOR_DAY + 1); day--) {
      const key = periodKey(timeframe, day);
      if (query.startMs === undefined && !groups.has(key) && groups.size >= query.limit) break;
      const bars = barsOfDay(day).filter(inRange);
      if (bars.length) groups.set(key, [...bars, ...(groups.get(key) ?? [])]);
    }
    for (const bars of groups.values()) collected.push(mergeBars(bars));
    collected.reverse();
    return query.startMs === undefined ? collected.slice(-query.limit) : collected.slice(0, query.limit);
  }
  if (query.startMs !== undefined) {
    for (let day = Math.max(dayOf(query.startMs), ANCHOR_DAY + 1); day <= dayOf(end) && collected.length < query.limit; day++) {
      collected.push(...barsOfDay(day).filter(inRange));
    }
    return collected.slice(0, query.limit);
  }
  for (let day = dayOf(end); day > ANCHOR_DAY && collected.length < query.limit; day--) {
    collected.unshift(...barsOfDay(day).filter(inRange));
  }
  return collected.slice(-query.limit);
}

/** Price (USD) of `symbol` at `nowMs`: the session path during market hours, else the last close. */
export function priceAt(symbol: string, nowMs: number): number {
  const day = dayOf(nowMs);
  const minute = Math.floor((nowMs - day * DAY_MS - SESSION_OPEN_MS) / 60_000);
  if (isWeekday(day) && minute >= 0 && minute < SESSION_MINUTES) return sessionPath(symbol, day)[minute]!;
  return dailyClose(symbol, lastCompletedDay(nowMs));
}

/** Whether the synthetic US equity session is open at `nowMs`. */
export function marketOpen(nowMs: number): boolean {
  const day = dayOf(nowMs);
  const offset = nowMs - day * DAY_MS - SESSION_OPEN_MS;
  return isWeekday(day) && offset >= 0 && offset < SESSION_MINUTES * 60_000;
}

/** The latest quote (minor units) for `symbol` at `nowMs`. */
export function quoteFor(symbol: string, nowMs: number) {
  const last = priceAt(symbol, nowMs);
  // The reference close is the session before the one that printed `last`.
  const lastSession = lastCompletedDay(nowMs);
  const previousClose = dailyClose(symbol, marketOpen(nowMs) ? lastSession : previousTradingDay(lastSession));
  const rng = new SeededRandom(hashSeed('quote', symbol, Math.floor(nowMs / 1000)));
  const halfSpread = Math.max(0.005, last * 0.0001 * (1 + rng.next()));
  return {
    symbol,
    bid_price: cents(last - halfSpread),
    ask_price: cents(last + halfSpread),
    last_price: cents(last),
    bid_size: String(rng.int(1, 30) * 100),
    ask_size: String(rng.int(1, 30) * 100),
    previous_close: cents(previousClose),
    change: String(Math.round(last * 100) - Math.round(previousClose * 100)),
    change_percent: Math.round(((last - previousClose) / previousClose) * 10_000) / 100,
    market_open: marketOpen(nowMs),
    currency: 'USD',
    timestamp: new Date(nowMs).toISOString(),
  };
}

/** Daily simple returns of `symbol` for the `count` trading days ending at the last completed day. */
export function dailyReturns(symbol: string, nowMs: number, count: number): number[] {
  const returns: number[] = [];
  let day = lastCompletedDay(nowMs);
  while (returns.length < count && day > ANCHOR_DAY + 1) {
    if (isWeekday(day)) returns.unshift(dailyClose(symbol, day) / dailyClose(symbol, previousTradingDay(day)) - 1);
    day -= 1;
  }
  return returns;
}
