import type { Server, HandlerResultTypeMap, JSONRPCRequest, McpServerFactory, RequestTypeMap, ServerCapabilities } from '@modelcontextprotocol/server';
import { createCaller } from '../policy/caller.ts';
import { answeredAsJson, authenticatedOf, revisionOf } from '../auth/authenticated.ts';
import { GatewayError, RelayedUpstreamError } from '../errors.ts';
import { forward, forwardFailure } from '../upstream/forwarding.ts';
import { GatewayServer } from './gateway-server.ts';
import { callTargetOf } from './admission.ts';
import { requesterOf } from '../surfaces/tool-decision.ts';
import { decidedAccess, type Routed } from './access-decision.ts';
import {
  CACHE_HINTS,
  GATEWAY_SERVER_INFO,
  definesStructuredContent,
  modernToolsListFields,
  withoutOutputSchemas,
  withoutStructuredContent,
  type ProjectCallToolResult,
} from '../wire/server-codec.ts';
import { mergeExtensions } from '../catalog/extensions.ts';
import { cancelTask, getTask, listTasks, requireTasksDeclared, taskResult, updateTask } from '../surfaces/tasks.ts';
import * as z from 'zod/v4';
import { setLoggingLevel, subscription } from './session-methods.ts';
import type { Listing } from '../catalog/listing.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import type { DispatchContext, Surface } from '../ports.ts';
import type { Logger } from '../obs/log.ts';
import { requestLog } from '../obs/request-context.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import { LIST_ITEMS, MODERN_TASK_METHODS, TASKS_EXTENSION, type ListMethod, type TaskMethod, type UpstreamInfo } from '../upstream/types.ts';
import type { RoutedMethod } from '../catalog/upstream-set.ts';

type PassThroughList = Exclude<ListMethod, 'tools/list'>;

type GatewayMethod =
  | 'tools/list'
  | 'tools/call'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel'
  | 'resources/subscribe'
  | 'resources/unsubscribe';
type Arm<M extends GatewayMethod> = (request: RequestTypeMap[M], d: DispatchContext) => Promise<HandlerResultTypeMap[M]>;

/**
 * The dispatch: one arm per MCP method the gateway answers, each one line. The mapped type makes it
 * exhaustive; an arm is registered only when {@link SERVED} says so (its capability is advertised, which
 * the SDK requires; the 2025 session methods for 2025-era callers only).
 */
const ARMS: { [M in GatewayMethod]: Arm<M> } = {
  'tools/list': async (r, d) => {
    const { listing, ttlMs } = await toolsListing(d, r.params);
    // The per-answer hint goes on the result: the SDK's cacheHints is one table per Server. Never on the 2025 wire.
    const tools = d.withoutStructuredContent ? withoutOutputSchemas(listing.tools) : listing.tools;
    return { tools, ...(d.caller.era === 'modern' ? modernToolsListFields(ttlMs) : {}) };
  },
  // `task` is the 2025-11-25 augmentation; a 2026-07-28 caller's is tolerated and ignored (SEP-2663: the server decides).
  'tools/call': (r, d) =>
    d.surface.callTool(d, r.params.name, r.params.arguments, d.caller.era === 'legacy' ? (r.params as { task?: Record<string, unknown> }).task : undefined),
  'resources/list': (r, d) => passThroughList(d, r.params, 'resources/list'),
  'resources/templates/list': (r, d) => passThroughList(d, r.params, 'resources/templates/list'),
  'resources/read': (r, d) => forwardRouted(d, 'resources/read', r.params) as never,
  'prompts/list': (r, d) => passThroughList(d, r.params, 'prompts/list'),
  'prompts/get': (r, d) => forwardRouted(d, 'prompts/get', r.params) as never,
  'completion/complete': (r, d) => forwardRouted(d, 'completion/complete', r.params) as never,
  'logging/setLevel': (r, d) => setLoggingLevel(d, r.params),
  'resources/subscribe': (r, d) => subscription(d, 'resources/subscribe', r.params),
  'resources/unsubscribe': (r, d) => subscription(d, 'resources/unsubscribe', r.params),
};

/**
 * A prompt, resource or completion request sent to the upstream that owns it (upstream-set.ts routing),
 * its decision reported once (access-decision.ts); failures become JSON-RPC errors (these methods have no isError form), the upstream's own as the
 * caller's revision names them (forwardFailure: error-translation.ts).
 */
function forwardRouted(d: DispatchContext, method: RoutedMethod, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  return decidedAccess(d, method, params, (routed) => forwardRoutedArm(d, method, params, routed));
}

async function forwardRoutedArm(d: DispatchContext, method: RoutedMethod, params: Record<string, unknown>, routed: Routed): Promise<Record<string, unknown>> {
  const route = await d.caller.route(method, params);
  routed.upstream = route.upstream.client.name;
  try {
    const result = await forward(d, route.upstream.client, method, route.params);
    // An upstream reachable by scope only: what it answers is not for every caller, whatever it says
    // (SEP-2549: a shared cache may serve a `public` result to anyone). Its lists are private too (caller.ts).
    // Nor may a cache keep it longer than the caller's standing holds (a revoked key's client read it for the upstream's 5 minutes: try-out).
    if (route.upstream.client.config.scopes.required.length === 0) return result;
    // Only hints the answer carries (a 2025-era answer carries none).
    return {
      ...result,
      ...(result.cacheScope !== undefined ? { cacheScope: 'private' } : {}),
      ...(typeof result.ttlMs === 'number' ? { ttlMs: d.caller.ttlWithin(result.ttlMs) } : {}),
    };
  } catch (error) {
    // A prompt's name as the upstream knows it may differ from the caller's (several upstreams).
    const own = route.params.name;
    const name = typeof own === 'string' && typeof params.name === 'string' ? { own, exposed: params.name } : undefined;
    const failure = forwardFailure(d, method, error, route.upstream.client.name, name);
    if ('result' in failure) return failure.result as unknown as Record<string, unknown>;
    throw failure.error;
  }
}

type Served = (capabilities: ServerCapabilities, era: 'modern' | 'legacy') => boolean;
const has =
  (key: keyof ServerCapabilities): Served =>
  (capabilities) =>
    capabilities[key] !== undefined;
/** When each arm is registered: its capability is advertised to this caller. */
const SERVED: { [M in GatewayMethod]: Served } = {
  'tools/list': has('tools'),
  'tools/call': has('tools'),
  'resources/list': has('resources'),
  'resources/templates/list': has('resources'),
  'resources/read': has('resources'),
  'prompts/list': has('prompts'),
  'prompts/get': has('prompts'),
  'completion/complete': has('completions'),
  // Session methods of the 2025 wire; 2026-07-28 has none (-32601 there: logLevel travels per request).
  'logging/setLevel': (capabilities, era) => era === 'legacy' && capabilities.logging !== undefined,
  // 2025 wire only: 2026-07-28 subscribes on subscriptions/listen (resourceSubscriptions), relayed at the edge.
  'resources/subscribe': (capabilities, era) => era === 'legacy' && capabilities.resources?.subscribe === true,
  'resources/unsubscribe': (capabilities, era) => era === 'legacy' && capabilities.resources?.subscribe === true,
};

/**
 * The per-request factory for one surface, for `createMcpHandler(factory, { legacy: 'stateless' })`.
 * It builds a fresh low-level Server whose capabilities and instructions mirror the upstreams' (so
 * server/discover and initialize carry them), fed only from caches. The caller comes from `authInfo`
 * (set by the edge); handlers never read raw headers.
 */
export function createMcpServerFactory(runtime: GatewayRuntime, surface: Surface): McpServerFactory {
  return async ({ era, authInfo }) => {
    const authenticated = authenticatedOf(authInfo);
    if (!authenticated) throw new GatewayError('unauthorized', 'no credential');
    const caller = createCaller(runtime, authenticated, era);
    const info = await caller.describe();
    const capabilities = capabilitiesFor(info, era);
    const server = new GatewayServer(
      GATEWAY_SERVER_INFO,
      {
        capabilities,
        instructions: surface.instructions(info?.instructions),
        // The one table of cache hints (wire.ts); the fast path writes the same tools/list hint.
        cacheHints: CACHE_HINTS,
      },
      { outcomes: runtime.outcomes, labels: { endpoint: surface.name, era }, requester: requesterOf(authenticated, undefined) },
    );
    // The tools/call target the edge's admission resolved, for the arm to reuse (mcp/admission.ts).
    const target = callTargetOf(authInfo);
    // The SDK codec's own projection, as the fast path's (wire/server-codec.ts projectionFor); before 2025-06-18 without structuredContent.
    const sdkProjection: ProjectCallToolResult = (result, outputSchema) => server.projectCallToolResult(result, outputSchema);
    const structured = definesStructuredContent(era, revisionOf(authInfo));
    const project = structured ? sdkProjection : withoutStructuredContent(sdkProjection, revisionOf(authInfo));
    const revisionFields = structured ? {} : { withoutStructuredContent: true as const };
    // The stateless 2025 leg answers on the POST's SSE stream, unless the answer is collapsed to JSON (negotiated-answer.ts).
    const streamed = era === 'legacy' && !answeredAsJson(authInfo);
    for (const method of Object.keys(ARMS) as GatewayMethod[]) {
      if (SERVED[method](capabilities, era))
        register(
          server,
          method,
          { runtime, surface, caller, project, ...revisionFields, ...(target ? { target } : {}) },
          runtime.log,
          authenticated.requestId,
          streamed,
        );
    }
    // Registered only when served: unserved, a 2026-07-28 task method is the SDK's -32601 on HTTP 404, as any
    // unknown method there (SEP-2575; an in-band handler of its own made it 200: try-out), reported by the edge.
    for (const method of taskMethodsServed(capabilities, era))
      registerTaskMethod(server, method, { runtime, surface, caller, project, ...revisionFields }, runtime.log, authenticated.requestId);
    return server;
  };
}

function register<M extends GatewayMethod>(
  server: Server,
  method: M,
  base: Omit<DispatchContext, 'request' | 'log'>,
  log: Logger,
  requestId: string,
  streamed: boolean,
): void {
  // mcp_requests_total: every message is reported by the GatewayServer, not here.
  server.setRequestHandler(method, (request, ctx) =>
    dispatch(
      method,
      request,
      dispatchContext(
        {
          ...base,
          request: ctx.mcpReq,
          // A request related to this one goes on this request's own SSE stream (the transport's relatedRequestId routing).
          callerStream: streamed ? (message) => onStream(server, message, ctx.mcpReq.id) : undefined,
        },
        log,
        requestId,
      ),
    ),
  );
}

/** Writes a server-to-client request on the stream of request `id` of this exchange; rejects once the exchange is gone. */
async function onStream(server: Server, message: JSONRPCRequest, id: string | number): Promise<void> {
  if (!server.transport) throw new Error('the exchange is closed');
  await server.transport.send(message, { relatedRequestId: id });
}

/**
 * The task methods' arms (surfaces/tasks.ts). The SDK has no task runtime, so they are registered by
 * the schema-taking form (the SDK then lets them through on 2026-07-28, where tasks/get and tasks/cancel
 * are the extension's, and types their params loosely); a 2026-07-28 request that does not declare the
 * extension is answered -32021 first (SEP-2663).
 */
const TASK_ARMS: Record<TaskMethod, (d: DispatchContext, params: Record<string, unknown>) => Promise<Record<string, unknown>>> = {
  'tasks/get': getTask,
  'tasks/result': taskResult,
  'tasks/list': listTasks,
  'tasks/cancel': cancelTask,
  'tasks/update': updateTask,
};
const TASK_PARAMS = z.looseObject({ taskId: z.string().optional(), cursor: z.string().optional() });

/**
 * Whether a 2026-07-28 caller is served the tasks extension's methods (tasks/get, tasks/update,
 * tasks/cancel): its capabilities carry `io.modelcontextprotocol/tasks` ({@link capabilitiesFor}). When
 * not, they are unknown methods there: the edge answers them as such (http/mcp-endpoint.ts).
 */
export function modernTasksServed(info: UpstreamInfo | undefined): boolean {
  return taskMethodsServed(capabilitiesFor(info, 'modern'), 'modern').length > 0;
}

/** The task methods served to this caller: the form of its era, when an upstream serves that form (capabilitiesFor). */
function taskMethodsServed(capabilities: ServerCapabilities, era: 'modern' | 'legacy'): TaskMethod[] {
  if (era === 'legacy') {
    const tasks = (capabilities as { tasks?: { cancel?: unknown } }).tasks;
    return tasks ? ['tasks/get', 'tasks/result', 'tasks/list', ...(tasks.cancel ? (['tasks/cancel'] as const) : [])] : [];
  }
  return capabilities.extensions?.[TASKS_EXTENSION] !== undefined ? [...MODERN_TASK_METHODS] : [];
}

function registerTaskMethod(server: Server, method: TaskMethod, base: Omit<DispatchContext, 'request' | 'log'>, log: Logger, requestId: string): void {
  server.setRequestHandler(method, { params: TASK_PARAMS }, (params, ctx) => {
    const d = dispatchContext({ ...base, request: ctx.mcpReq }, log, requestId);
    return guarded(method, d, async () => {
      requireTasksDeclared(d);
      return TASK_ARMS[method](d, params as Record<string, unknown>);
    });
  });
}

/** A {@link DispatchContext} but its logger. */
export type DispatchFields = Omit<DispatchContext, 'log'>;

/**
 * The dispatch context of one request, its logger (`root`'s child carrying `requestId`, obs/request-context.ts)
 * made when something first logs: most requests log nothing. A class instance, not an object literal with a
 * `get log()`: V8 builds such a literal in dictionary mode, its getter (a new closure each time, holding the
 * request) in an accessor pair it allocates in the old generation, and that pointer kept the whole request
 * (caller, request view, the answer) alive through every young-generation collection until the next full
 * one: ~2.3 KB of each tools/call promoted (`--trace-gc-nvp`, docs/performance.md). A spread of it
 * (`{ ...d }`) leaves the logger behind: copy `log: d.log` with it.
 */
export function dispatchContext(fields: DispatchFields, root: Logger, requestId: string | undefined): DispatchContext {
  return new LazyLogContext(fields, root, requestId);
}

class LazyLogContext implements DispatchContext {
  readonly runtime: DispatchContext['runtime'];
  readonly surface: DispatchContext['surface'];
  readonly caller: DispatchContext['caller'];
  readonly request: DispatchContext['request'];
  readonly project: DispatchContext['project'];
  readonly withoutStructuredContent: DispatchContext['withoutStructuredContent'];
  readonly callerStream: DispatchContext['callerStream'];
  readonly target: DispatchContext['target'];
  readonly runId: DispatchContext['runId'];
  #log: Logger | undefined;
  readonly #root: Logger;
  readonly #requestId: string | undefined;

  constructor(fields: DispatchFields, root: Logger, requestId: string | undefined) {
    this.runtime = fields.runtime;
    this.surface = fields.surface;
    this.caller = fields.caller;
    this.request = fields.request;
    this.project = fields.project;
    this.withoutStructuredContent = fields.withoutStructuredContent;
    this.callerStream = fields.callerStream;
    this.target = fields.target;
    this.runId = fields.runId;
    this.#root = root;
    this.#requestId = requestId;
  }

  get log(): Logger {
    return (this.#log ??= requestLog(this.#root, this.#requestId));
  }
}

/** Answers one request with its arm, under {@link guarded}. Used by the SDK handlers and the fast path alike. */
export function dispatch<M extends GatewayMethod>(method: M, request: RequestTypeMap[M], d: DispatchContext): Promise<HandlerResultTypeMap[M]> {
  return guarded(method, d, () => (ARMS[method] as Arm<M>)(request, d));
}

/**
 * The arms' error rule: they throw only GatewayError or RelayedUpstreamError (whose code and data go
 * on the wire); anything else is a gateway bug: logged, and answered -32603 without its message.
 */
export async function guarded<T>(method: string, d: DispatchContext, answer: () => Promise<T>): Promise<T> {
  try {
    return await answer();
  } catch (error) {
    if (error instanceof GatewayError || error instanceof RelayedUpstreamError) throw error;
    d.log.error({ method, err: (error as Error)?.message }, 'handler failed');
    throw new GatewayError('internal', 'the gateway failed to answer this request');
  }
}

/**
 * The caller's tools/list of this surface (a cached {@link Listing}), observed in the listing metrics,
 * and the `ttlMs` a 2026-07-28 answer carries ({@link privateTtlMs}). Used by the SDK path and the fast path.
 */
export async function toolsListing(d: DispatchContext, params: { cursor?: string } | undefined): Promise<{ listing: Listing; ttlMs: number }> {
  noCursor(params);
  const visible = await d.caller.visible();
  const listing = d.surface.listTools(d, visible);
  d.runtime.metrics.advertisedTools.set({ endpoint: d.surface.name }, listing.tools.length);
  d.runtime.metrics.toolsListBytes.observe({ endpoint: d.surface.name }, listing.bytes);
  return { listing, ttlMs: privateTtlMs(visible) };
}

/**
 * The `ttlMs` of a private tools/list answer (both surfaces): how long the view it was built from still
 * holds, i.e. the shortest remaining validity of the caller's scope entry (or OAuth token) and of the
 * catalogue copy served ({@link VisibleCatalog.validUntil}), in whole milliseconds; 0 when either is
 * not known or already past (a stale catalogue served after a failed refresh, an upstream left out, a
 * scope lookup that failed). SEP-2549 (2026-07-28 server/utilities/caching, §Cache Scope Field):
 * `"private"`: "Cached responses MAY be reused for the same authorization context. Caches MUST NOT be
 * shared across authorization contexts"; §Time-to-Live: "how long, in milliseconds, the client MAY
 * consider the result fresh", and "Servers MUST provide a `ttlMs` value that is `>= 0`". The caller's
 * authorization context is its credential, whose scope entry bounds the answer; a catalogue change
 * before then (`list_changed`) is relayed on `subscriptions/listen`, which the spec says invalidates.
 */
export function privateTtlMs(visible: VisibleCatalog, now = Date.now()): number {
  const left = Math.floor(visible.validUntil - now);
  return Number.isSafeInteger(left) && left > 0 ? left : 0;
}

/**
 * A passed-through list: the items, plus for modern callers the upstream's cache scope and the TTL
 * left on the cached copy (these lists do not vary by scope, so the upstream's hint still holds).
 */
async function passThroughList<M extends PassThroughList>(
  d: DispatchContext,
  params: { cursor?: string } | undefined,
  method: M,
): Promise<HandlerResultTypeMap[M]> {
  noCursor(params);
  const list = await d.caller.list(method);
  const hints = d.caller.era === 'modern' ? { ttlMs: list.ttlMs, cacheScope: list.cacheScope } : {};
  return { [LIST_ITEMS[method]]: list.items, ...hints } as unknown as HandlerResultTypeMap[M];
}

/** The gateway answers every list in one page, so any cursor a client sends was not issued by it. */
function noCursor(params: { cursor?: string } | undefined): void {
  if (params?.cursor !== undefined) throw new GatewayError('invalid_arguments', 'Invalid cursor: this server returns complete lists and issues no cursors');
}

/**
 * The capabilities advertised to callers: tools always (the gateway's own surfaces), the upstreams'
 * resources, prompts, completions and logging (upstream log messages are relayed on the call's stream).
 * listChanged is advertised to modern callers only, where the gateway relays upstream changes on
 * subscriptions/listen; stateless legacy callers have no stream. `tools.listChanged` always: the
 * gateway's own tool list changes without any upstream saying so (a live reload that adds, removes or
 * renames tools, an approved definition change). `resources.subscribe` is advertised to
 * legacy callers when an upstream declares it (resources/subscribe is forwarded), and to 2026-07-28
 * callers when an upstream can also deliver the updates to the gateway (UpstreamInfo.resourceUpdates):
 * their `resourceSubscriptions` on subscriptions/listen are then relayed.
 * `extensions`: the upstreams' declared extensions merged (catalog/extensions.ts), minus those whose
 * methods the gateway does not route; the same on both eras (initialize and server/discover). Tasks:
 * each era's form when an upstream of that era serves it ({@link taskCapabilities}).
 */
function capabilitiesFor(info: UpstreamInfo | undefined, era: 'modern' | 'legacy'): ServerCapabilities {
  const up = info?.capabilities ?? {};
  const listChanged = (flag: boolean | undefined) => (era === 'modern' && flag === true ? { listChanged: true } : {});
  // Both eras: resources/subscribe is forwarded for 2025 callers; 2026-07-28 callers' resourceSubscriptions
  // on subscriptions/listen are held at the owning upstream (upstream/resource-subscriptions.ts).
  const subscribe = (era === 'legacy' ? up.resources?.subscribe === true : info?.resourceUpdates === true) ? { subscribe: true } : {};
  const { extensions } = mergeExtensions([{ upstream: 'upstreams', extensions: up.extensions }]);
  // The tasks extension is relayed to 2026-07-28 callers only (its 2025 form is the `tasks` capability).
  if (era === 'modern' && info?.tasks?.modern) extensions[TASKS_EXTENSION] = {};
  return {
    ...(Object.keys(extensions).length ? { extensions: extensions as ServerCapabilities['extensions'] } : {}),
    tools: listChanged(true),
    ...(up.resources ? { resources: { ...subscribe, ...listChanged(up.resources.listChanged) } } : {}),
    ...(up.prompts ? { prompts: listChanged(up.prompts.listChanged) } : {}),
    ...(up.completions ? { completions: {} } : {}),
    ...(up.logging ? { logging: {} } : {}),
    ...taskCapabilities(info, era),
  };
}

/**
 * What the tasks relay offers this caller (surfaces/tasks.ts): a 2025-era caller the 2025-11-25 `tasks`
 * capability when a 2025-era upstream serves that form (task-augmented tools/call; tasks/list, the
 * gateway's own; tasks/cancel when such an upstream has it), a 2026-07-28 caller the
 * `io.modelcontextprotocol/tasks` extension when a 2026-07-28 upstream declares it. Nothing across eras.
 */
function taskCapabilities(info: UpstreamInfo | undefined, era: 'modern' | 'legacy'): Partial<ServerCapabilities> {
  const tasks = info?.tasks;
  if (era === 'legacy' && tasks?.legacy)
    return { tasks: { list: {}, ...(tasks.legacy.cancel ? { cancel: {} } : {}), requests: { tools: { call: {} } } } } as Partial<ServerCapabilities>;
  return {};
}
