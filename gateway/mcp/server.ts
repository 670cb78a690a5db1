import type { Server, HandlerResultTypeMap, McpServerFactory, RequestTypeMap, ServerCapabilities } from '@modelcontextprotocol/server';
import { createCaller } from '../policy/caller.ts';
import { authenticatedOf } from '../auth/authenticated.ts';
import { GatewayError, RelayedUpstreamError } from '../errors.ts';
import { forward, forwardFailure } from '../upstream/forwarding.ts';
import { GatewayServer } from './gateway-server.ts';
import { CACHE_HINTS, GATEWAY_SERVER_INFO } from './wire.ts';
import { dispatchRecordOf } from './message-metrics.ts';
import { mergeExtensions } from '../catalog/extensions.ts';
import { setLoggingLevel, subscription } from './session-methods.ts';
import type { Listing } from '../catalog/listing.ts';
import { dispatchRuntimeOf, type DispatchContext, type ProjectCallToolResult, type Surface } from './types.ts';
import type { Logger } from '../obs/log.ts';
import { requestLogger } from '../obs/request-context.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import { LIST_ITEMS, type ListMethod, type UpstreamInfo } from '../upstream/client.ts';
import type { RoutedMethod } from '../catalog/upstream-set.ts';

type PassThroughList = Exclude<ListMethod, 'tools/list'>;

export type { DispatchContext, ProjectCallToolResult, RequestView, RpcMessage, Surface, SurfaceName } from './types.ts';

export { GATEWAY_SERVER_INFO } from './wire.ts';

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
  'tools/list': async (r, d) => ({ tools: (await toolsListing(d, r.params)).tools }),
  'tools/call': (r, d) => d.surface.callTool(d, r.params.name, r.params.arguments),
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
 * A prompt, resource or completion request sent to the upstream that owns it (upstream-set.ts routing);
 * failures become JSON-RPC errors (these methods have no isError form), the upstream's own as the
 * caller's revision names them (forwardFailure: error-translation.ts).
 */
async function forwardRouted(d: DispatchContext, method: RoutedMethod, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const route = await d.caller.route(method, params);
  try {
    return await forward(d, route.upstream.client, method, route.params);
  } catch (error) {
    const failure = forwardFailure(d, method, error, route.upstream.client.name);
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
  const arms = dispatchRuntimeOf(runtime);
  return async ({ era, authInfo }) => {
    const authenticated = authenticatedOf(authInfo);
    if (!authenticated) throw new GatewayError('unauthorized', 'no credential');
    const info = await runtime.upstreamSet.describe({ credential: authenticated.credential, requestId: authenticated.requestId });
    const capabilities = capabilitiesFor(info, era);
    const server = new GatewayServer(
      GATEWAY_SERVER_INFO,
      {
        capabilities,
        instructions: surface.instructions(info?.instructions),
        // The one table of cache hints (wire.ts); the fast path writes the same tools/list hint.
        cacheHints: CACHE_HINTS,
      },
      runtime.metrics,
      { endpoint: surface.name, era },
      dispatchRecordOf(authInfo),
    );
    const caller = createCaller(runtime, authenticated, era);
    // The SDK codec's own projection; the fast path's mirror of it (wire.ts projectionFor) is held to it byte for byte.
    const project: ProjectCallToolResult = (result, outputSchema) => server.projectCallToolResult(result, outputSchema);
    for (const method of Object.keys(ARMS) as GatewayMethod[]) {
      if (SERVED[method](capabilities, era)) register(server, method, { runtime: arms, surface, caller, project }, runtime.log);
    }
    return server;
  };
}

function register<M extends GatewayMethod>(server: Server, method: M, base: Omit<DispatchContext, 'request' | 'log'>, log: Logger): void {
  // mcp_requests_total is counted for every message by the MeteredServer, not here.
  server.setRequestHandler(method, (request, ctx) => dispatch(method, request, { ...base, request: ctx.mcpReq, log: requestLogger(log) }));
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

/** The caller's tools/list of this surface (a cached {@link Listing}), observed in the listing metrics. */
export async function toolsListing(d: DispatchContext, params: { cursor?: string } | undefined): Promise<Listing> {
  noCursor(params);
  const listing = await d.surface.listTools(d);
  d.runtime.metrics.advertisedTools.set({ endpoint: d.surface.name }, listing.tools.length);
  d.runtime.metrics.toolsListBytes.observe({ endpoint: d.surface.name }, listing.bytes);
  return listing;
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
 * subscriptions/listen; stateless legacy callers have no stream. `resources.subscribe` is advertised to
 * legacy callers when an upstream declares it (resources/subscribe is forwarded), and to 2026-07-28
 * callers when an upstream can also deliver the updates to the gateway (UpstreamInfo.resourceUpdates):
 * their `resourceSubscriptions` on subscriptions/listen are then relayed.
 * `extensions`: the upstreams' declared extensions merged (catalog/extensions.ts), minus those whose
 * methods the gateway does not route; the same on both eras (initialize and server/discover).
 */
function capabilitiesFor(info: UpstreamInfo | undefined, era: 'modern' | 'legacy'): ServerCapabilities {
  const up = info?.capabilities ?? {};
  const listChanged = (flag: boolean | undefined) => (era === 'modern' && flag === true ? { listChanged: true } : {});
  // Both eras: resources/subscribe is forwarded for 2025 callers; 2026-07-28 callers' resourceSubscriptions
  // on subscriptions/listen are held at the owning upstream (upstream/resource-subscriptions.ts).
  const subscribe = (era === 'legacy' ? up.resources?.subscribe === true : info?.resourceUpdates === true) ? { subscribe: true } : {};
  const { extensions } = mergeExtensions([{ upstream: 'upstreams', extensions: up.extensions }]);
  return {
    ...(Object.keys(extensions).length ? { extensions: extensions as ServerCapabilities['extensions'] } : {}),
    tools: listChanged(up.tools?.listChanged),
    ...(up.resources ? { resources: { ...subscribe, ...listChanged(up.resources.listChanged) } } : {}),
    ...(up.prompts ? { prompts: listChanged(up.prompts.listChanged) } : {}),
    ...(up.completions ? { completions: {} } : {}),
    ...(up.logging ? { logging: {} } : {}),
  };
}
