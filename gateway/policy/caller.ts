import type { CachedList } from '../catalog/catalog-cache.ts';
import type { Catalog, CatalogTool } from '../catalog/catalog.ts';
import { uiResourceUri, viewOwner } from '../catalog/extensions.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import type { Credential } from '../auth/credentials.ts';
import { GatewayError } from '../errors.ts';
import { accessFor, hiddenToolCallsFor, mayReach, visibilityKey, visibleTools, type Access, type HiddenToolCallsRule } from './visibility.ts';
import { inSpan } from '../obs/tracing.ts';
import type { GatewayConfig } from '../../config/types.ts';
import type { OnBehalfOf } from '../upstream/forward-scope.ts';
import type { ListMethod, UpstreamInfo } from '../upstream/types.ts';
import type { Route, RoutedMethod, UpstreamRuntime, UpstreamSet } from '../catalog/upstream-set.ts';

/** What policy lets the caller see: the tools, and the key all callers with the same view share. */
export interface VisibleCatalog {
  readonly catalog: Catalog;
  readonly tools: readonly CatalogTool[];
  readonly access: Access;
  /** `<catalogue version>|<effective access>`: the cache key of anything derived from this view. */
  readonly key: string;
  /**
   * Until when this view holds (epoch ms): the sooner of the catalogue copy's expiry (catalog-cache.ts
   * `ServedCatalog`) and the caller's standing's (authenticate.ts `Standing.validUntil`; not known: 0).
   * What a private tools/list may say its `ttlMs` is (mcp/server.ts `privateTtlMs`).
   */
  readonly validUntil: number;
}

/**
 * The per-request view of one caller, authenticated at the edge (gateway/auth/authenticate.ts): its
 * credential and its access to each upstream (policy/visibility.ts). Everything is lazy and read from
 * caches; nothing here contacts the scope endpoint.
 */
export interface Caller {
  readonly credential: Credential;
  /** The HTTP request's id, forwarded to the upstreams with the credential. */
  readonly requestId: string;
  /** The request's trace id, when it has one (audit events carry it). */
  readonly traceId?: string;
  /** The client address (audit events carry it). */
  readonly address?: string;
  /** What the upstream client is given for every request made for this caller: `{ credential, requestId }`. */
  readonly onBehalfOf: OnBehalfOf;
  readonly era: 'modern' | 'legacy';
  /** What the caller may reach of each upstream. */
  readonly access: Access;
  /** What a direct call of a tool this caller cannot see does, per upstream (`policy.hiddenToolCalls`: `forward` only
   *  where the upstream receives the caller's credential; always `refuse` for an OAuth grant). */
  readonly hiddenToolCalls: HiddenToolCallsRule;
  /** The merged catalogue of every upstream, tools under their exposed names (before visibility). */
  catalog(): Promise<Catalog>;
  /** The caller's visible catalogue. */
  visible(): Promise<VisibleCatalog>;
  /** A pass-through list, without the items of upstreams the caller may not reach, nor the `ui://` views
   *  (MCP Apps) of tools it may not use; `private`, with a `ttlMs` no longer than the caller's standing,
   *  when some upstream needs scopes to reach or a tool links a listed view. */
  list(method: Exclude<ListMethod, 'tools/list'>): Promise<CachedList>;
  /**
   * The upstream owning a prompt, resource or completion request, and its params in that upstream's names.
   * @throws GatewayError `invalid_arguments` (-32602) for one no upstream owns, or one the caller may not
   *   reach: the same answer, so a hidden prompt or resource looks exactly like a missing one.
   */
  route(method: RoutedMethod, params: Record<string, unknown>): Promise<Route>;
  /** The upstream configured under `name` (a catalogue tool's `upstream`). */
  upstream(name: string): UpstreamRuntime;
  /** Whether the caller may reach the upstream configured under `name` (its `scopes.required`: policy/visibility.ts `mayReach`). */
  reaches(name: string): boolean;
  /** `ttlMs` (a cache lifetime, ms) cut to what is left of the caller's standing (its scopes): no answer that depends on it outlives it; 0 when not known. */
  ttlWithin(ttlMs: number): number;
  /** What initialize and server/discover advertise to this caller: the upstreams' union, instructions of the upstreams it may use (reach, or see tools of) only. */
  describe(): Promise<UpstreamInfo | undefined>;
}

/** What a caller is built from (a GatewayRuntime has both): the configuration and the upstreams as one server. */
export interface CallerSources {
  readonly config: Pick<GatewayConfig, 'upstreams' | 'policy'>;
  readonly upstreamSet: UpstreamSet;
}

/** The caller of one authenticated request (`request` from the edge, `era` from the SDK or the fast path). */
export function createCaller(runtime: CallerSources, request: AuthenticatedRequest, era: 'modern' | 'legacy'): Caller {
  const upstreams = runtime.upstreamSet;
  const { credential, requestId, traceId, address } = request;
  const onBehalfOf: OnBehalfOf = Object.freeze({ credential, requestId });
  const access = accessFor(request.standing, runtime.config.upstreams);
  const reachable = (name: string) => {
    const config = runtime.config.upstreams.find((u) => u.name === name);
    return config !== undefined && mayReach(config, access);
  };
  /** Until when the caller's standing holds (epoch ms; not known: 0). */
  const standingUntil = (): number => (access.standing.kind === 'unverified' ? 0 : (access.standing.validUntil ?? 0));
  // Pass-through lists vary by caller only when some upstream is reachable by scope (`scopes.required`).
  const gated = runtime.config.upstreams.some((u) => u.scopes.required.length > 0);
  const served = () =>
    inSpan('catalog', {}, async (span) => {
      const found = await upstreams.served(onBehalfOf);
      span?.setAttributes({ 'ai.cpz.gateway.catalog.version': found.catalog.version, 'ai.cpz.gateway.catalog.tools': found.catalog.tools.length });
      return found;
    });
  const caller: Caller = {
    credential,
    requestId,
    traceId,
    address,
    onBehalfOf,
    era,
    access,
    hiddenToolCalls: hiddenToolCallsFor(
      runtime.config.policy.hiddenToolCalls,
      credential.granted !== undefined || credential.apiKey !== undefined,
      runtime.config.upstreams,
    ),
    catalog: async () => (await served()).catalog,
    async list(method) {
      const listed = await upstreams.list(method, onBehalfOf, reachable);
      const list = method === 'resources/list' ? await withoutHiddenViews(listed, caller) : listed;
      if (!gated && list === listed) return list;
      // Which items are in it depends on the caller: never one to share (SEP-2549 "private"), and no fresher
      // than the caller's standing.
      return { ...list, cacheScope: 'private', ttlMs: caller.ttlWithin(list.ttlMs) };
    },
    async route(method, params) {
      const route = await upstreams.route(method, params, onBehalfOf, reachable, async () => (await caller.visible()).tools);
      if (reachable(route.upstream.client.name)) return route;
      throw unknownRouted(method, params);
    },
    ttlWithin(ttlMs) {
      const left = Math.floor(Math.min(Date.now() + ttlMs, standingUntil()) - Date.now());
      return Number.isSafeInteger(left) && left > 0 ? left : 0;
    },
    async describe() {
      // Every upstream reachable (the common case): nothing to leave out, no catalogue pass per request (review).
      if (!gated || runtime.config.upstreams.every((u) => reachable(u.name))) return upstreams.describe(onBehalfOf);
      // An upstream closed to the caller by `scopes.required` may still lend it tools (`scopeRules`): its instructions are about them too.
      // No catalogue at hand (every upstream down): the reachable ones only; initialize never fails for it.
      const visible = await caller.visible().catch(() => undefined);
      const lending = new Set(visible?.tools.map((tool) => tool.upstream));
      return upstreams.describe(onBehalfOf, (name) => reachable(name) || lending.has(name));
    },
    reaches: reachable,
    upstream(name) {
      const found = upstreams.get(name);
      if (!found) throw new GatewayError('internal', `no upstream named ${name}`);
      return found;
    },
    async visible() {
      const { catalog, expiresAt } = await served();
      return visibleCatalog(catalog, access, Math.min(expiresAt, standingUntil()));
    },
  };
  return caller;
}

/** The answer for a prompt, resource or completion nobody owns (upstream-set.ts gives the same). */
function unknownRouted(method: RoutedMethod, params: Record<string, unknown>): GatewayError {
  const ref = (params.ref ?? {}) as Record<string, unknown>;
  if (method === 'prompts/get' || (method === 'completion/complete' && ref.type === 'ref/prompt')) {
    return new GatewayError('invalid_arguments', `Unknown prompt: ${String(method === 'prompts/get' ? params.name : ref.name)}`);
  }
  const uri = method === 'resources/read' ? params.uri : ref.uri;
  // -32002 is resources/read's (2025-11-25 server/resources); a completion's unknown reference is its invalid params.
  return new GatewayError(
    method === 'resources/read' ? 'resource_not_found' : 'invalid_arguments',
    `Resource not found: ${String(uri).slice(0, 200)}`,
    typeof uri === 'string' ? { uri } : {},
  );
}

/** The caller's view; its tool list is filtered on first use only (a warm tools/list or search never needs it). */
function visibleCatalog(catalog: Catalog, access: Access, validUntil: number): VisibleCatalog {
  return new LazyVisibleCatalog(catalog, access, validUntil);
}

/** {@link visibleCatalog}'s view. A class, not an object literal with getters: V8 builds such a literal on its slow path. */
class LazyVisibleCatalog implements VisibleCatalog {
  #tools: readonly CatalogTool[] | undefined;
  #key: string | undefined;

  constructor(
    readonly catalog: Catalog,
    readonly access: Access,
    readonly validUntil: number,
  ) {}

  // Lazy, like the tools: a direct tools/call reads neither.
  get key(): string {
    return (this.#key ??= visibilityKey(this.catalog, this.access));
  }

  get tools(): readonly CatalogTool[] {
    return (this.#tools ??= visibleTools(this.catalog, this.access));
  }
}

/**
 * `list` (a resources/list) without the `ui://` views the caller may not read: a view some catalogue tool
 * links is listed only to a caller that may use a tool linking it (catalog/extensions.ts `viewOwner`, the
 * rule its read follows), so a hidden tool's view is as absent from the list as from a read (try-out: it
 * was listed, name and URI, and its read answered not found). The same list when no tool links a listed
 * URI; else a new one, whether or not it left anything out (its answer depends on the caller).
 */
async function withoutHiddenViews(list: CachedList, caller: Caller): Promise<CachedList> {
  const uriOf = (item: unknown) => (item as { uri?: unknown } | null)?.uri;
  if (
    !list.items.some((item) => {
      const uri = uriOf(item);
      return typeof uri === 'string' && /^ui:/i.test(uri);
    })
  )
    return list;
  const tools = (await caller.catalog()).tools;
  const linked = new Set(tools.map((tool) => uiResourceUri(tool.definition)).filter((uri) => uri !== undefined));
  if (!list.items.some((item) => linked.has(uriOf(item) as string))) return list;
  const usable = (await caller.visible()).tools;
  return {
    ...list,
    items: list.items.filter((item) => {
      const uri = uriOf(item);
      return typeof uri !== 'string' || !linked.has(uri) || viewOwner(uri, tools, usable) !== undefined;
    }),
  };
}
