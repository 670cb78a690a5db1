import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { Catalog } from '../catalog/catalog.ts';
import type { Listing } from '../catalog/listing.ts';
import type { Access } from '../policy/visibility.ts';
import type { Logger } from '../obs/log.ts';
import type { Caller, VisibleCatalog } from '../policy/caller.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import type { StreamWriter } from '../upstream/input-bridge.ts';

/** What a tools/call answers: a result, or (2026-07-28) a request for input the caller must fulfil and retry. */
export type ToolCallAnswer = CallToolResult | InputRequiredResult;

export type { SurfaceName } from '../policy/tool-resolution.ts';
import type { SurfaceName, ToolResolution } from '../policy/tool-resolution.ts';

/**
 * The parts of the SDK's per-request context (`ServerContext.mcpReq`) the arms read: the request's id
 * and abort signal, its `_meta` and 2026-07-28 envelope, multi-round-trip retry fields, and the
 * request-scoped notification channels. The SDK handler supplies its own; the fast path
 * (fast-path.ts) supplies one for the plain requests it answers without the SDK.
 */
export type RequestView = Pick<ServerContext['mcpReq'], 'id' | 'signal' | '_meta' | 'envelope' | 'inputResponses' | 'requestState' | 'notify' | 'log'> & {
  /** Aborts `signal`, when the gateway owns its controller (the fast path): a 2025-era cancellation then aborts it directly. */
  readonly abort?: (reason: unknown) => void;
};

export type { ProjectCallToolResult } from '../wire/server-codec.ts';
import type { ProjectCallToolResult } from '../wire/server-codec.ts';

/**
 * The part of the runtime the dispatch arms read: configuration, metrics, the upstreams (resources,
 * prompts, completion), output and input checks, listings, search indexes, the in-flight calls and the
 * input bridge (2025-era upstream calls waiting for a 2026-07-28 caller's answers), the digest key and
 * task index of the tasks relay (surfaces/tasks.ts).
 * Not the scope cache, the upstream set or the runtime's logger: the caller (policy/caller.ts) and the
 * edge hold those, and the request's logger is {@link DispatchContext.log}.
 */
const DISPATCH_FIELDS = [
  'config',
  'metrics',
  'upstreams',
  'outputs',
  'listings',
  'inputs',
  'searchIndexes',
  'inflightCalls',
  'codeSandbox',
  'inputBridge',
  'audit',
  'outcomes',
  'rateLimiter',
  'digestKey',
  'previousDigestKey',
  'taskIndex',
] as const satisfies readonly (keyof GatewayRuntime)[];

export type DispatchRuntime = Pick<GatewayRuntime, (typeof DISPATCH_FIELDS)[number]>;

const dispatchRuntimes = new WeakMap<GatewayRuntime, DispatchRuntime>();

/** The {@link DispatchRuntime} of `runtime`: built once per runtime, the same object for every request. */
export function dispatchRuntimeOf(runtime: GatewayRuntime): DispatchRuntime {
  let view = dispatchRuntimes.get(runtime);
  if (!view) {
    // previousDigestKey only when set (the optional field stays absent, as the runtime leaves it).
    const fields = DISPATCH_FIELDS.filter((field) => field !== 'previousDigestKey' || runtime.previousDigestKey);
    view = Object.fromEntries(fields.map((field) => [field, runtime[field]])) as DispatchRuntime;
    dispatchRuntimes.set(runtime, view);
  }
  return view;
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

/** The minimal view of a JSON-RPC message the edge has parsed. */
export interface RpcMessage {
  method?: unknown;
  params?: { name?: unknown } | unknown;
}

/**
 * What makes one endpoint differ from another: its tools/list and its tools/call. Everything else
 * (auth, eras, resources, prompts, completion, output checks) is shared. The full surface is in
 * `surface-full.ts`; the compact surface (issue 8) implements this same interface:
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

const ANSWERED_AS_JSON = 'answeredAsJson';

/**
 * `authInfo` marked as that of an exchange answered with JSON (http/negotiated-answer.ts collapses a 2025-era
 * SSE answer to its response), so nothing but the response reaches the caller: the handler must not
 * ask it anything on the stream ({@link answeredAsJson}). Carried in the SDK's pass-through `extra`.
 */
export function markedAnsweredAsJson<T extends { extra?: Record<string, unknown> }>(authInfo: T): T {
  return { ...authInfo, extra: { ...authInfo.extra, [ANSWERED_AS_JSON]: true } };
}

/** Whether {@link markedAnsweredAsJson} marked `authInfo`. */
export function answeredAsJson(authInfo: { extra?: Record<string, unknown> } | undefined): boolean {
  return authInfo?.extra?.[ANSWERED_AS_JSON] === true;
}
