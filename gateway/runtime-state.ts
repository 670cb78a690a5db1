import type { GatewayConfig } from '../config/types.ts';
import type { InputValidator } from './checks/input-check.ts';
import type { ListingCache } from './catalog/listing.ts';
import type { Logger } from './obs/log.ts';
import type { InflightCalls } from './upstream/inflight-calls.ts';
import type { GatewayMetrics } from './obs/metrics.ts';
import type { OutputValidator } from './checks/output-check.ts';
import type { ScopeCache } from './auth/scope-cache.ts';
import type { Authenticator } from './auth/authenticate.ts';
import type { SearchIndexCache } from './catalog/search-index-cache.ts';
import type { UpstreamRuntime, UpstreamSet } from './catalog/upstream-set.ts';
import type { OAuth } from './auth/oauth/index.ts';
import type { ResourceSubscriptionRelay } from './upstream/resource-subscriptions.ts';
import type { InputBridge } from './upstream/input-bridge.ts';
import type { TaskIndex } from './store/task-index.ts';
import type { AuditLog } from './obs/audit.ts';
import type { AuthDecisions } from './auth/decisions.ts';
import type { Outcomes } from './obs/outcomes.ts';
import type { Tracing } from './obs/tracing.ts';
import type { RateLimiter } from './store/rate-limiter.ts';
import type { PinGuard } from './catalog/pin-guard.ts';
import type { CodeSandbox } from './sandbox/sandbox.ts';

export type { UpstreamRuntime } from './catalog/upstream-set.ts';

/**
 * The long-lived state of one gateway instance: caches and connections only. The per-request
 * factory closes over it and reads from it; nothing request-specific is ever stored here, except an
 * abort handle per forwarded 2025-era call for exactly as long as it runs (`inflightCalls`).
 */
export interface GatewayRuntime {
  readonly config: GatewayConfig;
  readonly log: Logger;
  readonly metrics: GatewayMetrics;
  /** In config order. */
  readonly upstreams: readonly UpstreamRuntime[];
  /** The same upstreams as one server: merged catalogue and lists, routing (upstream-set.ts). */
  readonly upstreamSet: UpstreamSet;
  readonly scopes: ScopeCache;
  /** Every MCP request's authentication (credential sources: config API keys, then the scope cache). */
  readonly authenticator: Authenticator;
  /** The HMAC key of every credential digest (`cache.key`, else random per process; credentials.ts). */
  readonly digestKey: Buffer;
  /** The digest key being rotated out (`cache.keyPrevious`): task ids minted under it still open. */
  readonly previousDigestKey?: Buffer;
  readonly outputs: OutputValidator;
  readonly listings: ListingCache;
  /** Argument checks of the compact surface (search_tools, call_tool targets). */
  readonly inputs: InputValidator;
  /** The search index per catalogue version (compact surface). */
  readonly searchIndexes: SearchIndexCache;
  /** run_code's sandbox (`compact.codeMode`): its worker threads and the runs in progress per credential. */
  readonly codeSandbox: CodeSandbox;
  /** Forwarded 2025-era calls in flight, for `notifications/cancelled` arriving in a POST of its own. */
  readonly inflightCalls: InflightCalls;
  /** MCP authorization (`oauth.mode` builtin or external), set by Runtime.startOAuth once the issuer URL is known. */
  oauth?: OAuth;
  /** 2025-era upstream calls waiting for a 2026-07-28 caller's in-band answers (upstream/input-bridge.ts). */
  readonly inputBridge: InputBridge;
  /** Upstream resource subscriptions held for 2026-07-28 callers' `subscriptions/listen` streams. */
  readonly resourceSubscriptions: ResourceSubscriptionRelay;
  /** The tasks each credential created through the gateway, for tasks/list (surfaces/tasks.ts). */
  readonly taskIndex: TaskIndex;
  /** OpenTelemetry spans (off unless configured). */
  readonly tracing: Tracing;
  /** The audit trail of tool decisions and refused requests (off unless `audit.destination` is set). */
  readonly audit: AuditLog;
  /** Records a sign-in or authorization server decision: audit line and OAuth counters (auth/decisions.ts). */
  readonly authDecisions: AuthDecisions;
  /** Where every decision is reported once (obs/outcomes.ts): the metrics, the audit trail and the span subscribe. */
  readonly outcomes: Outcomes;
  /** The rate budgets' counters; undefined when no budget is configured. */
  readonly rateLimiter?: RateLimiter;
  /** Set when a graceful shutdown begins its drain (gateway.ts): `/readyz` answers 503 `draining` from then on. */
  draining: boolean;
  /** Tool definition pins and the description lint: what each upstream catalogue is served as (catalog/pin-guard.ts). */
  readonly pins: PinGuard;
}
