import type { Logger } from './obs/log.ts';
import type { ScopeCache } from './auth/scope-cache.ts';
import type { Authenticator } from './auth/authenticate.ts';
import type { RefusedCredentials } from './auth/refused-credentials.ts';
import type { UpstreamSet } from './catalog/upstream-set.ts';
import type { OAuth } from './auth/oauth/index.ts';
import type { ResourceSubscriptionRelay } from './upstream/resource-subscriptions.ts';
import type { ListenStreams } from './store/listen-streams.ts';
import type { AuthDecisions } from './auth/decisions.ts';
import type { Tracing } from './obs/tracing.ts';
import type { PinGuard } from './catalog/pin-guard.ts';
import type { DispatchRuntime } from './ports.ts';

export type { UpstreamRuntime } from './catalog/upstream-set.ts';

/**
 * The long-lived state of one gateway instance: caches and connections only. The per-request
 * factory closes over it and reads from it; nothing request-specific is ever stored here, except an
 * abort handle per forwarded 2025-era call for exactly as long as it runs (`inflightCalls`). It
 * implements the dispatch arms' ports (ports.ts {@link DispatchRuntime}) and holds what only the edge,
 * the caller and the console read.
 */
export interface GatewayRuntime extends DispatchRuntime {
  readonly log: Logger;
  /** The same upstreams as one server: merged catalogue and lists, routing (upstream-set.ts). */
  readonly upstreamSet: UpstreamSet;
  readonly scopes: ScopeCache;
  /** Every MCP request's authentication (credential sources: config API keys, then the scope cache). */
  readonly authenticator: Authenticator;
  /** The budget of refused key pairs per key and address (`rateLimits.refusedCredentials`); undefined when not set. */
  readonly refusedCredentials?: RefusedCredentials;
  /** MCP authorization (`oauth.mode` builtin or external), set by Runtime.startOAuth once the issuer URL is known. */
  oauth?: OAuth;
  /** While Runtime.startOAuth waits (the built-in authorization server for its Redis store): `/readyz` answers 503. */
  oauthStarting?: boolean;
  /** Upstream resource subscriptions held for 2026-07-28 callers' `subscriptions/listen` streams. */
  readonly resourceSubscriptions: ResourceSubscriptionRelay;
  /** The subscriptions/listen streams open per account (`limits.listenStreamsPerAccount`, mcp/admission.ts). */
  readonly listenStreams: ListenStreams;
  /** How many of this runtime's requests in flight are subscriptions/listen streams (a reload's retire waits longer for the others). */
  readonly streamsOpen: { count: number };
  /** OpenTelemetry spans (off unless configured). */
  readonly tracing: Tracing;
  /** Records a sign-in or authorization server decision: audit line and OAuth counters (auth/decisions.ts). */
  readonly authDecisions: AuthDecisions;
  /** Set when a graceful shutdown begins its drain (gateway.ts): `/readyz` answers 503 `draining` from then on. */
  draining: boolean;
  /** Set when the gateway closes the connections still open at the end of a shutdown's grace (gateway.ts): what ends a call then is the gateway, not its caller. */
  closingConnections?: boolean;
  /**
   * Set when a reload that changed the configuration replaced this runtime (gateway.ts): its requests in flight
   * finish, but a run_code script still running on it makes no new tool call (surfaces/run-code.ts), since what
   * the caller may call was decided by the configuration the reload replaced (security try-out: a key's access
   * revoked by SIGHUP, its script called a read 2.5 s later).
   */
  replacedByReload?: boolean;
  /** Tool definition pins and the description lint: what each upstream catalogue is served as (catalog/pin-guard.ts). */
  readonly pins: PinGuard;
}
