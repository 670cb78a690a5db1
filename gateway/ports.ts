import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../config/types.ts';
import type { Catalog } from './catalog/catalog.ts';
import type { Listing, ListingCache } from './catalog/listing.ts';
import type { SearchIndexCache } from './catalog/search-index-cache.ts';
import type { UpstreamRuntime } from './catalog/upstream-set.ts';
import type { InputValidator } from './checks/input-check.ts';
import type { OutputValidator } from './checks/output-check.ts';
import type { AuditLog } from './obs/audit.ts';
import type { Logger, throttledBy } from './obs/log.ts';
import type { GatewayMetrics } from './obs/metrics.ts';
import type { Outcomes } from './obs/outcomes.ts';
import type { Caller, VisibleCatalog } from './policy/caller.ts';
import type { SurfaceName, ToolResolution } from './policy/tool-resolution.ts';
import type { Access } from './policy/visibility.ts';
import type { CodeSandbox } from './sandbox/sandbox.ts';
import type { RateLimiter } from './store/rate-limiter.ts';
import type { TaskIndex } from './store/task-index.ts';
import type { InflightCalls } from './upstream/inflight-calls.ts';
import type { InputBridge, StreamWriter } from './upstream/input-bridge.ts';
import type { ProjectCallToolResult } from './wire/server-codec.ts';
import type { RequestView } from './wire/requests.ts';

/**
 * What a dispatch arm (mcp/server.ts's table, surfaces/*) is given, and nothing more: small ports onto
 * the runtime (catalogue, upstream, checks, telemetry, tasks), the caller, its request and the surface
 * it came in on. A leaf of types: the runtime (runtime-state.ts `GatewayRuntime`) implements these
 * ports, the arms read them, and neither imports the other.
 */

/** What a tools/call answers: a result, or (2026-07-28) a request for input the caller must fulfil and retry. */
export type ToolCallAnswer = CallToolResult | InputRequiredResult;

/** The caller's catalogue as the arms serve it: listings and search indexes per catalogue version. */
export interface CatalogPort {
  readonly listings: ListingCache;
  /** The search index per catalogue version (compact surface). */
  readonly searchIndexes: SearchIndexCache;
}

/** The upstreams as the arms reach them beyond the caller's routing (policy/caller.ts). */
export interface UpstreamPort {
  /** In config order. */
  readonly upstreams: readonly UpstreamRuntime[];
  /** Forwarded 2025-era calls in flight, for `notifications/cancelled` arriving in a POST of its own. */
  readonly inflightCalls: InflightCalls;
  /** 2025-era upstream calls waiting for a 2026-07-28 caller's in-band answers (upstream/input-bridge.ts). */
  readonly inputBridge: InputBridge;
}

/** The checks a call passes: its arguments, its output, its rate budgets. */
export interface ChecksPort {
  /** Argument checks of the compact surface (search_tools, call_tool targets). */
  readonly inputs: InputValidator;
  readonly outputs: OutputValidator;
  /** The rate budgets' counters; undefined when no budget is configured. */
  readonly rateLimiter?: RateLimiter;
}

/** Where the arms report what they decided. */
export interface TelemetryPort {
  readonly metrics: GatewayMetrics;
  /** The audit trail of tool decisions and refused requests (off unless `audit.destination` is set). */
  readonly audit: AuditLog;
  /** Where every decision is reported once (obs/outcomes.ts): the metrics, the audit trail and the span subscribe. */
  readonly outcomes: Outcomes;
  /**
   * Warnings of a failure that repeats on every call (an upstream down), keyed by the failure: each at most
   * once in FAILURE_LOG_INTERVAL_MS, with how many it stands for (obs/log.ts throttledBy; surfaces/tool-call.ts).
   */
  readonly repeatedWarnings: ReturnType<typeof throttledBy>;
}

/** The tasks relay's state (surfaces/tasks.ts): the tasks each credential created, and the keys of their ids. */
export interface TaskPort {
  /** The HMAC key of every credential digest (`cache.key`, else random per process; credentials.ts). */
  readonly digestKey: Buffer;
  /** The digest key being rotated out (`cache.keyPrevious`): task ids minted under it still open. */
  readonly previousDigestKey?: Buffer;
  /** The tasks each credential created through the gateway, for tasks/list (surfaces/tasks.ts). */
  readonly taskIndex: TaskIndex;
}

/**
 * The part of the runtime the dispatch arms read: the configuration, run_code's sandbox and the ports.
 * Not the scope cache, the upstream set or the runtime's logger: the caller (policy/caller.ts) and the
 * edge hold those, and the request's logger is {@link DispatchContext.log}.
 */
export interface DispatchRuntime extends CatalogPort, UpstreamPort, ChecksPort, TelemetryPort, TaskPort {
  readonly config: GatewayConfig;
  /** run_code's sandbox (`compact.codeMode`): its worker threads and the runs in progress per credential. */
  readonly codeSandbox: CodeSandbox;
  /** A reload that changed the configuration replaced this runtime (runtime-state.ts): its scripts make no new call. */
  readonly replacedByReload?: boolean;
}

/**
 * What a POST's single tools/call names, resolved once by the admission step (mcp/admission.ts) for the
 * caller on its surface; the arm reuses it instead of resolving the name again.
 */
export interface CallTarget {
  /** `direct`, or through the compact surface's `call_tool` (then `name` is its target's). */
  readonly via: 'direct' | 'call_tool';
  readonly name: string;
  /** The catalogue and access it was resolved in: the arm reuses it only if it reads the same catalogue. */
  readonly catalog: Catalog;
  readonly access: Access;
  readonly resolution: ToolResolution;
}

/** Everything one dispatched request can read: what the arms need of the runtime, the caller, its request. */
export interface DispatchContext {
  readonly runtime: DispatchRuntime;
  readonly surface: Surface;
  readonly caller: Caller;
  readonly request: RequestView;
  readonly project: ProjectCallToolResult;
  /**
   * The caller's revision predates `structuredContent` and `outputSchema` (before 2025-06-18,
   * wire/server-codec.ts definesStructuredContent): tools/list drops outputSchema, and `project` drops
   * structuredContent. Only the SDK path serves such a caller (wire/requests.ts plainRequest).
   */
  readonly withoutStructuredContent?: true;
  readonly log: Logger;
  /**
   * A 2025-era request answered on an SSE stream the caller reads: writes a server-to-client request on
   * it (a 2025-era upstream's question during the call, upstream/input-bridge.ts). The SDK path writes
   * through its transport, the fast path opens its stream when first asked; absent for 2026-07-28
   * requests and answers collapsed to JSON (http/negotiated-answer.ts).
   */
  readonly callerStream?: StreamWriter;
  /** The request's tools/call target as admission resolved it (mcp/admission.ts), when it is one. */
  readonly target?: CallTarget;
  /** Set on a run_code script's inner calls (surfaces/run-code.ts): the run they belong to, in their audit events. */
  readonly runId?: string;
}

/**
 * What makes one endpoint differ from another: its tools/list and its tools/call. Everything else
 * (auth, eras, resources, prompts, completion, output checks) is shared. The full surface is
 * surfaces/full.ts; the compact surface (issue 8, surfaces/compact.ts) implements this same interface:
 * `listTools` returns search_tools + call_tool + the writes and anchors the caller may see, and
 * `callTool` answers those two itself and sends everything else to `callToolDirect`/`callCatalogTool`.
 */
export interface Surface {
  readonly name: SurfaceName;
  /** HTTP path, e.g. `/mcp`. */
  readonly path: string;
  /** The instructions this endpoint serves (initialize, server/discover), given the upstreams' own. */
  instructions(upstream: string | undefined): string | undefined;
  /** The caller's tools/list from its visible catalogue (cached per catalogue version and effective scopes). */
  listTools(d: DispatchContext, visible: VisibleCatalog): Listing;
  /**
   * tools/call on this surface; return the result already projected (see `callCatalogTool`). `task`: the
   * 2025-11-25 task augmentation of the call (surfaces/tasks.ts), if any.
   */
  callTool(d: DispatchContext, name: string, args: Record<string, unknown> | undefined, task?: Record<string, unknown>): Promise<ToolCallAnswer>;
}
