import { isDeepStrictEqual } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig, RateBudget } from '../../config/types.ts';
import type { BudgetCharge, RateLimiter } from '../store/rate-limiter.ts';
import { addressBucket } from './attempt-budgets.ts';
import { accountDigest } from './credentials.ts';

/**
 * Guessing a key pair's secret on the MCP endpoints, bounded (security try-out: 300 wrong secrets for one
 * key in 5.7 s from one address, each a scope lookup, while the sign-in page had locked that key after
 * 10): a key pair's check spends a point of `rateLimits.refusedCredentials.perKey`, counted per key id and
 * client address (its IPv6 /64; the counter keyed by a keyed digest of the key id, shared through Redis
 * with the other budgets), given back when the pair is accepted. The point is spent BEFORE the check (a
 * burst sent at once is bounded as a sequence is), except for a pair already verified (a configured key's
 * secret, a live cached answer): what a valid caller's request pays is a Map size check. The check over the
 * budget is answered 429 with Retry-After, and from then on, until the block ends, every request naming
 * that key from that address is answered 429 **before its secret is checked** (no scope lookup): the right
 * secret too, or a guesser would be told when it is right (auth/authenticate.ts asks this guard).
 *
 * Counted per key and address, not per key: a key id is no secret, and a budget per key would let anyone
 * lock its owner out everywhere (the sign-in page's lesson, auth/attempt-budgets.ts). What a lock still
 * costs an owner: that key from that address until the block ends (a client left running with a
 * rotated-out secret locks the new one there; behind a proxy the gateway does not trust,
 * `security.trustedProxies`, every caller shares the proxy's address, and anyone who knows a key id can
 * lock it for all). Not counted: a missing credential (the OAuth discovery flow starts with one), and
 * bearer tokens (an expired OAuth token's 401 is the refresh flow, not a guess; a token is the whole
 * secret, with no key to count against).
 *
 * Left as they are (review): another replica, or this one once 10,000 blocks are known,
 * learns of a block at its next check of that key from that address (the shared counter answers it is
 * spent): one more check each; each refused key id is a counter of its own for `durationMs`, so a flood of
 * made-up key ids costs memory (or Redis keys) in proportion.
 */
export class RefusedCredentials {
  /** `<address bucket>\0<key digest>` -> epoch ms the block ends, for the blocks this process has seen. */
  private readonly blocks = new LRUCache<string, number>({ max: 10_000 });
  /** Key id -> its keyed digest (an HMAC each time a block is looked up was the hot path's cost once one exists). */
  private readonly digests = new LRUCache<string, string>({ max: 10_000 });

  constructor(
    private readonly budget: RateBudget,
    private readonly limiter: RateLimiter,
    private readonly key: Buffer,
  ) {}

  /**
   * The guard of `config`, or undefined when `rateLimits.refusedCredentials.perKey` is not set or no key pair
   * is checked. `previous` (a live reload): the retired runtime's guard, kept with the blocks it knows when
   * it counts in the same limiter, by the same budget and digest key (review: a reload forgot them, one more
   * check each).
   */
  static of(
    config: Pick<GatewayConfig, 'rateLimits' | 'scopes' | 'credentials'>,
    limiter: RateLimiter | undefined,
    key: Buffer,
    previous?: RefusedCredentials,
  ): RefusedCredentials | undefined {
    const budget = config.rateLimits.refusedCredentials.perKey;
    if (!budget || !limiter || !checksKeyPairs(config)) return undefined;
    const same = previous && previous.limiter === limiter && previous.key.equals(key) && isDeepStrictEqual(previous.budget, budget);
    return same ? previous : new RefusedCredentials(budget, limiter, key);
  }

  /**
   * Milliseconds until `keyId` from `address` may be checked again (0: it may). Synchronous and free
   * while nothing is blocked: every key-pair request asks.
   */
  blockedFor(address: string, keyId: string): number {
    if (this.blocks.size === 0) return 0;
    const entry = this.entry(address, keyId);
    const until = this.blocks.get(entry);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left > 0) return left;
    this.blocks.delete(entry);
    return 0;
  }

  /**
   * Spends the point of one check of `keyId` from `address`, before it. Undefined while the budget holds;
   * else the refusal to answer (429): the budget, its limit and the milliseconds until the block ends,
   * remembered so later requests naming `keyId` from `address` are refused before their check.
   */
  async spend(address: string, keyId: string): Promise<{ budget: BudgetCharge['budget']; limit: RateBudget; retryAfterMs: number } | undefined> {
    const decision = await this.limiter.consume([this.charge(address, keyId)]);
    if (decision.ok) return undefined;
    this.blocks.set(this.entry(address, keyId), Date.now() + decision.retryAfterMs);
    return decision;
  }

  /** Gives back the point {@link spend} took for a check that accepted the pair (or could not tell). */
  async giveBack(address: string, keyId: string): Promise<void> {
    await this.limiter.refund([this.charge(address, keyId)]);
  }

  private charge(address: string, keyId: string): BudgetCharge {
    return { budget: 'refused_credentials_per_key', key: `refused-credentials:key:${this.digestOf(keyId)}:${addressBucket(address)}`, limit: this.budget };
  }

  private entry(address: string, keyId: string): string {
    return `${addressBucket(address)}\0${this.digestOf(keyId)}`;
  }

  private digestOf(keyId: string): string {
    let digest = this.digests.get(keyId);
    if (digest === undefined) this.digests.set(keyId, (digest = accountDigest(keyId, this.key)));
    return digest;
  }
}

/** Whether a key pair can be refused: configured keys (`credentials.apiKeys`) or a scope endpoint check them (else none is checked). */
export function checksKeyPairs(config: Pick<GatewayConfig, 'scopes' | 'credentials'>): boolean {
  return config.scopes.endpoint !== undefined || config.credentials.apiKeys.length > 0;
}
