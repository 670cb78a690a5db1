import type { GatewayConfig } from '../config/types.ts';
import type { CatalogCache } from './catalog-cache.ts';
import type { ListingCache } from './listing.ts';
import type { Logger } from './log.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { OutputValidator } from './output-check.ts';
import type { ScopeCache } from './scope-cache.ts';
import type { UpstreamClient } from './upstream-client.ts';

/** One configured upstream with its connection and list cache. */
export interface UpstreamRuntime {
  readonly client: UpstreamClient;
  readonly catalog: CatalogCache;
}

/**
 * The long-lived state of one gateway instance: caches and connections only. The per-request
 * factory closes over it and reads from it; nothing request-specific is ever stored here.
 */
export interface GatewayRuntime {
  readonly config: GatewayConfig;
  readonly log: Logger;
  readonly metrics: GatewayMetrics;
  /** In config order. One upstream is served today; issue 5 merges several. */
  readonly upstreams: readonly UpstreamRuntime[];
  readonly scopes: ScopeCache;
  readonly outputs: OutputValidator;
  readonly listings: ListingCache;
}
