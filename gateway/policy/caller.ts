import type { CachedList } from '../catalog/catalog-cache.ts';
import type { Catalog, CatalogTool } from '../catalog/catalog.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import type { Credential } from '../auth/credentials.ts';
import { GatewayError } from '../errors.ts';
import { visibilityKey, visibleTools, type CallerScopes } from './visibility.ts';
import { inSpan } from '../obs/tracing.ts';
import type { GatewayRuntime, UpstreamRuntime } from '../runtime-state.ts';
import type { ScopeResult } from '../auth/scope-cache.ts';
import type { ListMethod, OnBehalfOf } from '../upstream/client.ts';
import type { Route, RoutedMethod } from '../catalog/upstream-set.ts';

/** What policy lets the caller see: the tools, and the key all callers with the same view share. */
export interface VisibleCatalog {
  readonly catalog: Catalog;
  readonly tools: readonly CatalogTool[];
  readonly scopes: CallerScopes;
  /** `<catalogue version>|<effective scopes>`: the cache key of anything derived from this view. */
  readonly key: string;
}

/**
 * The per-request view of one caller. Everything is lazy and read from caches: the direct tools/call
 * path touches only `catalog()` and never triggers a scope lookup.
 */
export interface Caller {
  readonly credential: Credential;
  /** The HTTP request's id, forwarded to the upstreams with the credential. */
  readonly requestId: string;
  /** The request's trace id, when it has one (audit events carry it). */
  readonly traceId?: string;
  /** What the upstream client is given for every request made for this caller: `{ credential, requestId }`. */
  readonly onBehalfOf: OnBehalfOf;
  readonly era: 'modern' | 'legacy';
  /** The merged catalogue of every upstream, tools under their exposed names (before scope filtering). */
  catalog(): Promise<Catalog>;
  /** The caller's scope lookup (shared with the edge pre-check of the same request). */
  scopes(): Promise<ScopeResult>;
  /** @throws GatewayError `unauthorized` when the scope endpoint refused the credential. */
  visible(): Promise<VisibleCatalog>;
  /** The visible catalogue when the caller's scopes are already cached, else undefined: never a lookup. */
  visibleIfCached(): Promise<VisibleCatalog | undefined>;
  list(method: Exclude<ListMethod, 'tools/list'>): Promise<CachedList>;
  /** The upstream owning a prompt, resource or completion request, and its params in that upstream's names. */
  route(method: RoutedMethod, params: Record<string, unknown>): Promise<Route>;
  /** The upstream configured under `name` (a catalogue tool's `upstream`). */
  upstream(name: string): UpstreamRuntime;
}

/** The caller of one authenticated request (`request` from the edge, `era` from the SDK or the fast path). */
export function createCaller(runtime: GatewayRuntime, request: AuthenticatedRequest, era: 'modern' | 'legacy'): Caller {
  const upstreams = runtime.upstreamSet;
  const { credential, requestId, traceId } = request;
  const onBehalfOf: OnBehalfOf = Object.freeze({ credential, requestId });
  const caller: Caller = {
    credential,
    requestId,
    traceId,
    onBehalfOf,
    era,
    catalog: () => inSpan('catalog', {}, async (span) => {
      const catalog = await upstreams.catalog(onBehalfOf);
      span?.setAttributes({ 'ai.cpz.gateway.catalog.version': catalog.version, 'ai.cpz.gateway.catalog.tools': catalog.tools.length });
      return catalog;
    }),
    scopes: () => request.scopes(),
    list: (method) => upstreams.list(method, onBehalfOf),
    route: (method, params) => upstreams.route(method, params, onBehalfOf),
    upstream(name) {
      const found = upstreams.get(name);
      if (!found) throw new GatewayError('internal', `no upstream named ${name}`);
      return found;
    },
    async visible() {
      const [catalog, result] = await Promise.all([caller.catalog(), caller.scopes()]);
      if (result.kind === 'unauthorized') throw new GatewayError('unauthorized', 'the scope endpoint refused the credential');
      return visibleCatalog(catalog, result);
    },
    async visibleIfCached() {
      const result = await runtime.scopes.cached(credential);
      if (!result || result.kind === 'unauthorized') return undefined;
      return visibleCatalog(await caller.catalog(), result);
    },
  };
  return caller;
}

/** The caller's view; its tool list is filtered on first use only (a warm tools/list or search never needs it). */
function visibleCatalog(catalog: Catalog, result: Exclude<ScopeResult, { kind: 'unauthorized' }>): VisibleCatalog {
  const scopes: CallerScopes = result.kind === 'scopes' ? result.scopes : 'unknown';
  let tools: readonly CatalogTool[] | undefined;
  return {
    catalog,
    scopes,
    key: visibilityKey(catalog, scopes),
    get tools() {
      return (tools ??= visibleTools(catalog, scopes));
    },
  };
}
