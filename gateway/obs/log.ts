import { pino, type DestinationStream, type Logger } from 'pino';
import type { GatewayConfig } from '../../config/types.ts';
import { withoutSecretSegments } from './redact.ts';

export type { Logger } from 'pino';

/**
 * The gateway's JSON logger (pino). Credentials never reach it by construction (handlers log digests
 * at most); the redaction list is the second line of defence for any header object that slips in.
 * @param destination - where lines go; default stdout. Tests pass a stream to read the lines back.
 */
export function createLogger(config: GatewayConfig, destination?: DestinationStream): Logger {
  const secretHeaders = ['authorization', 'cookie', config.credentials.keyHeader, config.credentials.secretHeader].map((h) => h.toLowerCase());
  const paths = secretHeaders.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`, `req.headers["${h}"]`]);
  return pino(
    {
      name: 'mcp-gateway',
      level: config.log.level,
      redact: { paths: [...paths, 'credential', '*.credential', 'token', '*.token', 'secret', '*.secret'], censor: '[redacted]' },
      base: { pid: process.pid },
    },
    destination ?? batchedStdout(),
  );
}

/** Longest a line waits in the batch before it is written (an idle gateway's lines still show up). */
const FLUSH_INTERVAL_MS = 250;
/** Characters gathered before a batch is handed to the writer: about 4 KiB of the mostly ASCII lines. */
const BATCH_CHARS = 4096;

/**
 * stdout written in batches of about 4 KiB, not one write(2) per line: measured, the per-line write was
 * 13% of the gateway's CPU on a tools/call (one access line each). A timer flushes what waits, so no line
 * is held longer than {@link FLUSH_INTERVAL_MS}; pino flushes synchronously after `fatal`, and so does the
 * process's exit.
 */
function batchedStdout(): DestinationStream {
  // minLength 1: each batch is written as it comes, and flush(cb) still waits for the write (0 would call back at once).
  const batches = new LineBatches(pino.destination({ sync: false, minLength: 1 }));
  setInterval(() => batches.pass(), FLUSH_INTERVAL_MS).unref();
  unflushed.add(batches);
  if (unflushed.size === 1)
    process.once('exit', () => {
      for (const waiting of unflushed) waiting.flushSync();
    });
  return batches;
}

/** Every batched stdout made, flushed at the process's exit (one listener, however many loggers a test makes). */
const unflushed = new Set<LineBatches>();

/**
 * Lines joined into one string per batch before sonic-boom (pino.destination) sees them. Why: given each
 * line, sonic-boom appends it to its pending string and re-measures that string's UTF-8 length per line
 * (`Buffer.byteLength`, which flattens the growing string): measured 1.1-1.3 µs and about 2.4 KB of heap
 * per access line, against 0.3-0.6 µs here; one join per batch instead.
 */
class LineBatches implements DestinationStream {
  private lines: string[] = [];
  private chars = 0;

  constructor(private readonly out: ReturnType<typeof pino.destination>) {}

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= BATCH_CHARS) this.pass();
  }

  /** Hands what waits to the writer and has it written (async); `done` once it is. */
  flush(done?: (error?: Error) => void): void {
    this.pass();
    this.out.flush(done);
  }

  /** The same, written before returning (after `fatal`, at exit). */
  flushSync(): void {
    this.pass();
    try {
      this.out.flushSync();
    } catch {
      // Closed already (or its descriptor not open yet): nothing can be written.
    }
  }

  /** Hands the waiting lines to the writer as one string (it writes it at once unless a write is under way). */
  pass(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    try {
      this.out.write(text);
    } catch {
      // Closed at shutdown: nothing left to write.
    }
  }
}

/**
 * A URL as it may be logged or audited: the user name and password (`https://user:pass@host`) become
 * `***`, and the query and fragment `?…` (a token in `?key=` must not reach a log line); scheme, host,
 * port and path stay, which is what tells an operator where a connection went. A string that is no
 * `scheme://` URL (an opaque OAuth client_id, `urn:x`, free text) is returned as it is.
 */
export function loggableUrl(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || !URL.canParse(url)) return url;
  const parsed = new URL(url);
  const userinfo = parsed.username || parsed.password ? '***@' : '';
  const rest = parsed.search || parsed.hash ? '?…' : '';
  // A path segment that is a token (a collector's or a hosted server's key in the path: security try-out) is masked as the console masks it.
  return `${parsed.protocol}//${userinfo}${parsed.host}${withoutSecretSegments(parsed.pathname)}${rest}`;
}

/** The least time between two warnings of one kind of upstream failure (ms); each says how many it stood for (`notLogged`). */
export const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * {@link throttled} per key (an upstream and a kind of failure): each key's lines at most once in
 * `intervalMs`. At most `maxKeys` keys are remembered (the oldest forgotten first), so keys that come
 * and go (upstreams renamed by reloads) do not grow it without bound.
 */
export function throttledBy(intervalMs: number, maxKeys = 256): (key: string, logLine: (notLogged: number) => void) => void {
  const byKey = new Map<string, ReturnType<typeof throttled>>();
  return (key, logLine) => {
    let log = byKey.get(key);
    if (!log) {
      if (byKey.size >= maxKeys) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, (log = throttled(intervalMs)));
    }
    log(logLine);
  };
}

/**
 * Runs a failure's log call at most once per `intervalMs` (the first at once): a failure that repeats on
 * every request (a full disk, a collector down) makes one line a minute, not one per request. The call
 * gets how many failures since the last line were not logged (0 for the first).
 */
export function throttled(intervalMs: number): (logLine: (notLogged: number) => void) => void {
  let last = Number.NEGATIVE_INFINITY;
  let skipped = 0;
  return (logLine) => {
    const now = performance.now();
    if (now - last < intervalMs) {
      skipped++;
      return;
    }
    last = now;
    logLine(skipped);
    skipped = 0;
  };
}

/**
 * What of `items` was not told before, remembered as told from now on: a warning about a set that is found again on
 * every refresh (a tool name an upstream lists twice) names each item once, not once per refresh. The `max` items
 * told last are remembered (an upstream inventing new ones forever does not grow it), in insertion order.
 */
export function untold(max = 1024): (items: readonly string[]) => string[] {
  const told = new Set<string>();
  return (items) =>
    items.filter((item) => {
      if (told.has(item)) return false;
      if (told.size >= max) told.delete(told.values().next().value!);
      told.add(item);
      return true;
    });
}

/**
 * Events of one kind told in few lines: the first at once (`tell(1)`), those that follow within `intervalMs` as one
 * line at the interval's end with their count (`tell(n)`), and so on while they keep coming; after a quiet interval
 * the next is told at once again. Unlike {@link throttled}, a burst's count is told when the burst ends, not with
 * the next event. The timer does not hold the process.
 */
export function coalesced(intervalMs: number, tell: (count: number) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let waiting = 0;
  const start = () => {
    timer = setTimeout(() => {
      timer = undefined;
      if (waiting === 0) return;
      const count = waiting;
      waiting = 0;
      tell(count);
      start();
    }, intervalMs);
    timer.unref();
  };
  return () => {
    if (timer) {
      waiting++;
      return;
    }
    tell(1);
    start();
  };
}

/**
 * The log of a shared store's outage (Redis behind the cache, the rate limits, the pins): a failure's warning
 * at most once in {@link FAILURE_LOG_INTERVAL_MS}, with how many it stood for (`notLogged`), and one info line
 * once the store answers again, with how long it failed (`downMs`) and how many failures that was (`failures`).
 * A Redis down for 30 s made 60 warnings and no line when it came back (SRE try-out). `recovered` is for an
 * operation the store itself answered: a caller whose library swallows errors (Keyv reports a store's error as
 * an event and resolves the operation anyway) must not call it after one: `count()`, every failure since the
 * log was made, taken before an operation and compared after it, tells the two apart.
 */
export function outageLog(
  log: Pick<Logger, 'warn' | 'info'>,
  messages: { failed: string; recovered: string },
): { failed(fields: Record<string, unknown>): void; recovered(fields?: Record<string, unknown>): void; count(): number } {
  let warn = throttled(FAILURE_LOG_INTERVAL_MS);
  let failingSince: number | undefined;
  let failures = 0;
  let total = 0;
  return {
    count: () => total,
    failed(fields) {
      failingSince ??= Date.now();
      failures++;
      total++;
      warn((notLogged) => log.warn({ ...fields, ...(notLogged ? { notLogged } : {}) }, messages.failed));
    },
    recovered(fields = {}) {
      if (failingSince === undefined) return;
      log.info({ ...fields, downMs: Date.now() - failingSince, failures }, messages.recovered);
      failingSince = undefined;
      failures = 0;
      // The next outage's first failure is told at once.
      warn = throttled(FAILURE_LOG_INTERVAL_MS);
    },
  };
}
