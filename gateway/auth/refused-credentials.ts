import { LRUCache } from 'lru-cache';
import type { GatewayConfig, RateBudget } from '../../config/types.ts';
import type { BudgetCharge, RateLimiter } from '../store/rate-limiter.ts';
import { addressBucket } from './attempt-budgets.ts';
import { accountDigest } from './credentials.ts';

/**
 * Guessing a key pair's secret on the MCP endpoints, bounded (security try-out: 300 wrong secrets for one
 * key in 5.7 s from one address, each a scope lookup, while the sign-in page had locked that key after
 * 10). A refused key pair (a wrong secret, a key no source knows, one the scope endpoint refuses) spends a
 * point of `rateLimits.refusedCredentials.perKey`, counted per key id and client address (its IPv6 /64;
 * the counter keyed by a keyed digest of the key id, shared through Redis with the other budgets). The
 * attempt over it is answered 429 with Retry-After, and from then on, until the block ends, every request
 * naming that key from that address is answered 429 **before its secret is checked** (no scope lookup):
 * the right secret too, or a guesser would be told when it is right.
 *
 * Counted per key and address, not per key alone: a key id is no secret, and a budget per key would let
 * anyone lock its owner out everywhere (the sign-in page's lesson, auth/attempt-budgets.ts). What a lock
 * still costs an owner: that key from that address (a client left running with a rotated-out secret
 * locks the new one there until the block ends; behind a proxy the gateway does not trust,
 * `security.trustedProxies`, every caller shares the proxy's address). Not counted: a missing credential
 * (the OAuth discovery flow starts with one), and bearer tokens (an expired OAuth token's 401 is the
 * refresh flow, not a guess; a token is the whole secret, with no key to count against).
 *
 * Another replica learns of a block at its own first refusal from that key and address (the shared
 * counter answers it is spent): up to one more check per replica.
 */
export class RefusedCredentials {
  /** `<address bucket>\0<key digest>` -> epoch ms the block ends, for the blocks this process has seen. */
  private readonly blocks = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly budget: RateBudget,
    private readonly limiter: RateLimiter,
    private readonly key: Buffer,
  ) {}

  /** The guard of `config`, or undefined when `rateLimits.refusedCredentials.perKey` is not set or no key pair is checked. */
  static of(
    config: Pick<GatewayConfig, 'rateLimits' | 'scopes' | 'credentials'>,
    limiter: RateLimiter | undefined,
    key: Buffer,
  ): RefusedCredentials | undefined {
    const budget = config.rateLimits.refusedCredentials.perKey;
    return budget && limiter && checksKeyPairs(config) ? new RefusedCredentials(budget, limiter, key) : undefined;
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
   * Spends the refusal's point. Undefined while the budget holds; else the refusal to answer (429): the
   * budget, its limit and the milliseconds until the block ends, remembered so later requests from
   * `address` naming `keyId` are refused before their check.
   */
  async refused(address: string, keyId: string): Promise<{ budget: BudgetCharge['budget']; limit: RateBudget; retryAfterMs: number } | undefined> {
    const digest = accountDigest(keyId, this.key);
    const bucket = addressBucket(address);
    const decision = await this.limiter.consume([
      { budget: 'refused_credentials_per_key', key: `refused-credentials:key:${digest}:${bucket}`, limit: this.budget },
    ]);
    if (decision.ok) return undefined;
    this.blocks.set(`${bucket}\0${digest}`, Date.now() + decision.retryAfterMs);
    return decision;
  }

  private entry(address: string, keyId: string): string {
    return `${addressBucket(address)}\0${accountDigest(keyId, this.key)}`;
  }
}

/** Whether a key pair can be refused: configured keys (`credentials.apiKeys`) or a scope endpoint check them (else none is checked). */
export function checksKeyPairs(config: Pick<GatewayConfig, 'scopes' | 'credentials'>): boolean {
  return config.scopes.endpoint !== undefined || config.credentials.apiKeys.length > 0;
}
