import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { GatewayConfig, RateBudget } from '../../config/types.ts';
import { outageLog, type Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { closeRedisConnection, createRedisConnection } from './redis-connection.ts';

/** How long charges count in memory at once after Redis left one unanswered for cache.operationTimeoutMs (ms). */
const UNANSWERED_PAUSE_MS = 5_000;

/**
 * The rate budgets (policy/rate-limits.ts says which a request, a tool call, a registration or a
 * sign-in attempt spends): the MCP budgets per account, and the ones that bound registration and guessing.
 */
export type BudgetName =
  | 'requests'
  | 'reads'
  | 'writes'
  | 'tool'
  | 'registrations_per_address'
  | 'registrations_total'
  | 'sign_ins_per_key'
  | 'sign_ins_per_client'
  | 'sign_ins_per_address'
  | 'sign_ins_per_page'
  | 'console_sign_ins_per_address'
  | 'refused_credentials_per_key';

/** One budget a request spends: its name (metric label), its counter key, its limit and how many points (default 1). */
export interface BudgetCharge {
  readonly budget: BudgetName;
  /** The counter: `<budget>[:<upstream>[:<tool>]]:<account digest>`, or the budget and what it counts (an address, a client, a key's digest). */
  readonly key: string;
  readonly limit: RateBudget;
  /** Points spent: 1, or one per message of a JSON-RPC batch. */
  readonly points?: number;
}

/** The outcome of spending a request's budgets: allowed, or refused by the first budget that ran out. */
export type RateDecision =
  /** `remaining`: the fewest points any of the charges has left in its window (Infinity for none). */
  | { ok: true; remaining: number }
  | { ok: false; budget: BudgetName; limit: RateBudget /** Until the refusing budget has a point again. */; retryAfterMs: number };

/**
 * The counters behind gateway/policy/rate-limits.ts, with rate-limiter-flexible: fixed windows per
 * counter key, in memory, or in Redis (`rateLimits.store: redis`, at `cache.redisUrl`) so that every
 * replica spends the same budget (one atomic Lua INCR + PTTL per budget). When Redis fails or is
 * unreachable, each replica falls back to its own in-memory counters (rate-limiter-flexible's
 * insurance limiter): limits hold per replica, requests never fail because of the store (logged, and
 * counted in `mcp_cache_store_errors_total{cache="rate_limits"}`).
 */
export interface RateLimiter {
  /**
   * Spends the points of every charge (one unless it says), in order, atomically per counter (an
   * increment in Redis, so replicas racing spend one budget); at the first one over its limit the
   * points already spent (and a refused batch's own) are given back and the request is refused (counted
   * in `mcp_rate_limited_total{budget}`).
   */
  consume(charges: readonly BudgetCharge[]): Promise<RateDecision>;
  /** Gives back what {@link consume} spent for these charges (a sign-in that was right does not count against guessing). */
  refund(charges: readonly BudgetCharge[]): Promise<void>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  store: 'memory' | 'redis';
  /** `cache.redisUrl` and `cache.redis`: where a `redis` store connects (redis-connection.ts). */
  cache: GatewayConfig['cache'];
  metrics: GatewayMetrics;
  log: Logger;
  /** Redis key prefix; default `mcp-gateway:rl`. Tests use their own to share one Redis. */
  keyPrefix?: string;
}

/** How long requests wait for the first Redis connection before counting in memory. */
const FIRST_CONNECT_WAIT_MS = 1000;

/** Builds the limiter; a Redis store connects in the background (requests wait for it up to {@link FIRST_CONNECT_WAIT_MS}). */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const prefix = options.keyPrefix ?? 'mcp-gateway:rl';
  const outage = outageLog(options.log, {
    failed: 'rate limit store failed; counting in memory on this replica',
    recovered: 'rate limit store answering again',
  });
  const storeFailed = (error: unknown) => {
    options.metrics.cacheStoreErrors.inc({ cache: 'rate_limits', op: 'consume' });
    outage.failed({ err: (error as Error)?.message });
  };
  const redis =
    options.store === 'redis' ? createRedisConnection(options.cache, { role: 'rate-limits', connectTimeoutMs: 1000, disableOfflineQueue: true }) : undefined;
  // The first connection, awaited (bounded) by the first requests, so a replica that just started
  // counts in the shared store rather than alone in memory.
  let connecting: Promise<unknown> | undefined;
  if (redis) {
    redis.on('error', storeFailed);
    redis.on('ready', () => outage.recovered());
    // connect() resolves only once Redis answers (node-redis retries for ever): requests wait for the
    // first attempt only, so while Redis is down each counts in memory at once instead of waiting.
    connecting = new Promise((resolve) => {
      redis.once('error', resolve);
      redis.connect().then(resolve, (error: unknown) => resolve(storeFailed(error)));
    }).finally(() => (connecting = undefined));
  }
  // One limiter per budget and limit: rate-limiter-flexible fixes points and duration per instance.
  const limiters = new Map<string, RateLimiterAbstract>();
  /** Each Redis limiter's in-memory insurance, for a store that answers nothing at all. */
  const insurance = new Map<RateLimiterAbstract, RateLimiterMemory>();
  const limiterFor = (charge: BudgetCharge): RateLimiterAbstract => {
    const id = `${charge.budget}:${charge.limit.points}/${charge.limit.durationMs}${charge.limit.blockMs ? `+${charge.limit.blockMs}` : ''}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      const shape = {
        points: charge.limit.points,
        duration: charge.limit.durationMs / 1000,
        blockDuration: (charge.limit.blockMs ?? 0) / 1000,
        keyPrefix: `${prefix}:${id}`,
      };
      const memory = new RateLimiterMemory(shape);
      limiter = redis
        ? new RateLimiterRedis({
            ...shape,
            storeClient: redis,
            useRedisPackage: true,
            rejectIfRedisNotReady: true,
            insuranceLimiter: insured(memory, storeFailed),
          })
        : memory;
      if (limiter !== memory) insurance.set(limiter, memory);
      limiters.set(id, limiter);
    }
    return limiter;
  };
  /** Until when (performance.now(), ms) charges skip a Redis that left one unanswered. */
  let quietUntil = 0;
  /**
   * A charge against `limiter`, within `cache.operationTimeoutMs` when it is Redis's: a Redis that keeps the connection
   * and answers nothing (a frozen process) held every request until it woke, 40 s and more (robustness try-out);
   * past the budget the charge counts in the insurance, as when Redis is down.
   */
  const bounded = async (limiter: RateLimiterAbstract, key: string, points: number): Promise<RateLimiterRes> => {
    const memory = insurance.get(limiter);
    if (!memory) return limiter.consume(key, points);
    // Past a charge Redis left unanswered, charges count in the insurance at once for a while: a Redis that holds
    // the connection and answers nothing cost every request operationTimeoutMs (multi-replica try-out: 0.5 s a
    // call for as long as it hung); one charge a window tries Redis again.
    if (performance.now() < quietUntil) return memory.consume(key, points);
    let timer: NodeJS.Timeout | undefined;
    const late = Symbol('late');
    // A charge Redis answered itself is one during which no failure was reported (the insurance reports its own).
    const before = outage.count();
    const attempt = limiter.consume(key, points);
    // A refusal or failure that comes after the budget is spent is answered already (by the insurance).
    attempt.catch(() => undefined);
    // Redis answered (a count or a refusal) with no failure reported meanwhile: a frozen Redis that woke has no 'ready' event (review).
    const answered = () => void (outage.count() === before && outage.recovered());
    const first = await Promise.race([
      attempt,
      new Promise<typeof late>((resolve) => (timer = setTimeout(() => resolve(late), options.cache.operationTimeoutMs))),
    ])
      .catch((refusal: unknown) => {
        if (refusal instanceof RateLimiterRes) answered();
        throw refusal;
      })
      .finally(() => clearTimeout(timer));
    if (first !== late) {
      answered();
      return first;
    }
    storeFailed(new Error(`the rate limit store did not answer within cache.operationTimeoutMs (${options.cache.operationTimeoutMs} ms)`));
    quietUntil = performance.now() + UNANSWERED_PAUSE_MS;
    return memory.consume(key, points);
  };
  return {
    async consume(charges) {
      if (connecting) await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, FIRST_CONNECT_WAIT_MS).unref())]);
      const spent: BudgetCharge[] = [];
      let remaining = Infinity;
      for (const charge of charges) {
        try {
          const res = await bounded(limiterFor(charge), charge.key, charge.points ?? 1);
          remaining = Math.min(remaining, res.remainingPoints);
          spent.push(charge);
        } catch (error) {
          if (!(error instanceof RateLimiterRes)) {
            // Neither the store nor its insurance answered: never refuse because of our own failure.
            storeFailed(error);
            spent.push(charge);
            continue;
          }
          // A refused batch spends nothing of its own either (a one-point charge stays counted: that is what a block counts).
          const givenBack = (charge.points ?? 1) > 1 ? [...spent, charge] : spent;
          await Promise.allSettled(givenBack.map((s) => limiterFor(s).reward(s.key, s.points ?? 1)));
          options.metrics.rateLimited.inc({ budget: charge.budget });
          return { ok: false, budget: charge.budget, limit: charge.limit, retryAfterMs: Math.max(error.msBeforeNext, 1) };
        }
      }
      return { ok: true, remaining };
    },
    async refund(charges) {
      await Promise.allSettled(charges.map((c) => limiterFor(c).reward(c.key, c.points ?? 1)));
    },
    async close() {
      if (redis) await closeRedisConnection(redis, options.cache.operationTimeoutMs);
    },
  };
}

/** The in-memory insurance, noting each time it has to stand in for Redis. */
function insured(memory: RateLimiterMemory, noted: (error: unknown) => void): RateLimiterMemory {
  const consume = memory.consume.bind(memory);
  memory.consume = (key, points, options) => {
    noted(new Error('the Redis store did not answer'));
    return consume(key, points, options);
  };
  return memory;
}
