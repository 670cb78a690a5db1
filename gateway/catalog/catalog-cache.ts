import { LRUCache } from 'lru-cache';
import type { Tool } from '@modelcontextprotocol/client';
import type { GatewayConfig, UpstreamConfig } from '../../config/types.ts';
import { buildCatalog, CatalogBuilder, sourceOf, type Catalog } from './catalog.ts';
import { GatewayError, failureOf } from '../errors.ts';
import type { KvStore } from '../store/kv-store.ts';
import { FAILURE_LOG_INTERVAL_MS, throttled, untold, type Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { requestLog } from '../obs/request-context.ts';
import type { OnBehalfOf } from '../upstream/forward-scope.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { LIST_ITEMS, type ListMethod, type ListResult } from '../upstream/types.ts';
import type { PinGuard } from './pin-guard.ts';

/** The key of the one tools catalogue of an upstream that lists them `public` (CatalogCache.key). */
const PUBLIC_TOOLS_KEY = 'tools/list|public';
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** A tool's bytes when its catalogue does not say (one of the shared catalogues' tools averages about 850). */
const ESTIMATED_TOOL_BYTES = 1024;

interface Entry {
  value: Catalog | unknown[];
  /** What the entry counts against `cache.catalogBytes`: the catalogue's {@link Catalog.bytes}, a list's JSON length. */
  bytes: number;
  fetchedAt: number;
  expiresAt: number;
  cacheScope: 'public' | 'private';
  /** The partition the list was fetched for: a `private` list belongs to that credential digest only. */
  fetchedFor: string;
  /** When a refresh of this (expired) entry last failed (performance.now(), ms: monotonic, unlike the lifetimes): it is what is served until one succeeds (see {@link CatalogCache.entry}). */
  refreshFailedAt?: number;
}

/** What tells two lists apart: a catalogue's content version, any other list's JSON. */
function listIdentity(list: Entry['value']): string {
  return Array.isArray(list) ? JSON.stringify(list) : list.version;
}

/** Raw list as kept in the shared (Redis) store: plain JSON, rebuilt into a catalogue locally. */
interface SharedEntry {
  items: unknown[];
  fetchedAt: number;
  expiresAt: number;
  cacheScope: 'public' | 'private';
}

/** A cached non-tool list with the freshness left: what a modern caller's cache hints say. */
export interface CachedList {
  items: unknown[];
  cacheScope: 'public' | 'private';
  ttlMs: number;
}

/**
 * A tools catalogue as served to one caller, and when that copy stops being fresh (epoch ms): the
 * entry's expiry (the upstream's `ttlMs`, the config override, else `cache.ttlMs`); already past when a
 * stale copy is served because the refresh failed, or the upstream reconnected (`expireAll`).
 */
export interface ServedCatalog {
  catalog: Catalog;
  expiresAt: number;
}

/** Whether the tools catalogue is fresh enough to serve (for /readyz). */
export interface Readiness {
  ready: boolean;
  reason?: string;
}

/**
 * Caches an upstream's lists (tools as a policy-annotated {@link Catalog}; resources, templates,
 * prompts as items). Freshness follows the upstream: its `ttlMs` (capped at 24 h) and `cacheScope`
 * (`public`: one entry for everyone; `private`: one per credential digest), the config override in
 * `upstreams[].catalog`, else `cache.ttlMs` and `private` (legacy upstreams send no hints; `public` for
 * an upstream that never sees the caller's credential: stdio, or `forwardCredentials: false`). Concurrent
 * misses share one upstream fetch, and a shared fetch whose answer turns out `private` is served only to
 * the credential it was sent with (the others fetch their own); `list_changed` invalidates; a reconnection after a loss (the upstream
 * restarted) expires every entry and refetches the catalogue; a failed refresh serves the stale entry
 * when there is one (logged, counted as `stale_served`). A merged read of several upstreams may take an
 * expired entry at once while its refresh runs (`stale`, see {@link CatalogCache.entry}), one expired by a
 * reconnection included.
 */
/** Per method, how many resources (or templates) {@link CatalogCache} remembers an upstream listed to anyone. */
const EVER_LISTED_LIMIT = 10_000;

export class CatalogCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly scopeSeen = new Map<ListMethod, 'public' | 'private'>();
  private readonly generations = new Map<ListMethod, number>();
  private readonly changeListeners = new Set<(method: ListMethod) => void>();
  /** The list (listIdentity) each method's announcing partitions last stored: a refresh that stores another is a change to announce. */
  private readonly announcedLists = new Map<ListMethod, string>();
  /** Lists of the cache this one replaced on a live reload, not yet made its own ({@link adopted}). */
  private inherited?: Map<string, Entry>;
  /** The last tools catalogue built: the next one takes over its unchanged tools (buildCatalog). */
  private lastBuilt?: Catalog;
  /** Sets of unmatched config entries already warned about (keys, joined): per-caller lists differ, and each set is told once. */
  private readonly warnedUnmatched = new Set<string>();
  /** Sets of MCP Apps tools past `maxAnchors` already warned about (names, joined), told once each like the above. */
  private readonly warnedOverBudget = new Set<string>();
  /** The duplicated tool names already warned about (each once, while remembered). */
  private readonly untoldDuplicates = untold();
  private lastSuccessAt?: number;
  private lastError?: string;
  /** The catalogue's own time to live when it was last fetched (the upstream's `ttlMs`, the config override, else `cache.ttlMs`). */
  private lastTtlMs: number;
  private readonly warmer?: NodeJS.Timeout;
  /** The upstream's policy keys this cache builds catalogues with (a reload may change them, not the connection). */
  private readonly policy: UpstreamConfig;
  private readonly unsubscribe: (() => void)[];
  private pins?: PinGuard;

  /**
   * @param options.policy - the upstream's configuration for building catalogues; default the client's.
   * @param options.inherit - a cache of the same connection under an earlier configuration (live reload):
   *   its readiness record carries over, so /readyz does not flap while the new catalogue is fetched.
   * @param options.pins - the pin guard: every catalogue handed out is its view of the fetched one
   *   (held tools withheld or pinned, catalog/pin-guard.ts); without it, the fetched catalogue.
   */
  constructor(
    private readonly upstream: UpstreamClient,
    private readonly cache: GatewayConfig['cache'],
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
    private readonly shared?: KvStore,
    options: { policy?: UpstreamConfig; inherit?: CatalogCache; pins?: PinGuard } = {},
  ) {
    this.pins = options.pins;
    // Bounded by bytes as well as entries: at 10,000 tools a private catalogue per credential is megabytes.
    // An entry larger than the whole bound counts as the bound (it is kept alone), never refused: a
    // catalogue that is not kept would be fetched again by every request.
    this.entries = new LRUCache({
      max: cache.maxEntries,
      maxSize: cache.catalogBytes,
      sizeCalculation: (entry) => Math.max(1, Math.min(entry.bytes, cache.catalogBytes)),
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') metrics.catalogCacheEvictions.inc({ upstream: upstream.name });
      },
    });
    this.lastTtlMs = cache.ttlMs;
    this.policy = options.policy ?? upstream.config;
    if (options.inherit) {
      this.lastSuccessAt = options.inherit.lastSuccessAt;
      this.lastTtlMs = options.inherit.lastTtlMs;
      this.lastError = options.inherit.lastError;
      this.inheritLists(options.inherit);
    }
    this.unsubscribe = [
      upstream.onListChanged((method) => this.invalidate(method)),
      upstream.onReconnect(() => {
        this.expireAll();
        void this.warm();
      }),
    ];
    const warmEveryMs = Math.min(Math.max(cache.ttlMs / 2, 1000), 30_000);
    this.warmer = setInterval(() => void this.warm(), warmEveryMs);
    this.warmer.unref();
  }

  /**
   * The lists `from` (this connection's cache under the earlier configuration) holds, taken over as expired
   * copies ({@link adopted}): a read refetches under this cache's policy and serves the copy if that fails,
   * so a reload during an outage keeps what the upstream last listed (README, Readiness).
   */
  private inheritLists(from: CatalogCache): void {
    this.inherited = new Map(from.entries.entries());
    for (const [method, scope] of from.scopeSeen) this.scopeSeen.set(method, scope);
  }

  /**
   * The inherited copy of `key` ({@link inheritLists}), made this cache's own on first need, expired: a tools
   * catalogue is built again from the definitions it was built from, under this cache's policy (one at a
   * time, as asked: a reload does not rebuild every credential's catalogue at once).
   */
  private adopted(key: string): Entry | undefined {
    const entry = this.inherited?.get(key);
    if (!entry) return undefined;
    this.inherited!.delete(key);
    const value = key.startsWith('tools/list|') ? buildCatalog(this.policy, (entry.value as Catalog).tools.map(sourceOf), this.lastBuilt) : entry.value;
    // Expired, and with no lifetime under this policy (expiresAt = fetchedAt): a merged read waits for the
    // refresh rather than take it at once (entry's `stale`), since the new policy may make the list private
    // (a `public` copy fetched with one caller's credential went to every caller: review); a failed refresh still serves it.
    const own = { ...entry, value, expiresAt: entry.fetchedAt, refreshFailedAt: undefined };
    this.entries.set(key, own);
    return own;
  }

  /**
   * The tools catalogue as `onBehalfOf.credential` sees it upstream (before any scope filtering),
   * fetched with that credential when not cached; `{}` (background work): as a caller without one.
   */
  async catalog(onBehalfOf: OnBehalfOf = {}): Promise<Catalog> {
    return (await this.served(onBehalfOf)).catalog;
  }

  /**
   * {@link catalog} with the expiry of the copy served ({@link ServedCatalog}).
   * @param options.stale - an expired copy this caller may be served is served at once (its expiry past)
   *   while the refresh runs on in the background, rather than awaited: for a merged catalogue, whose
   *   callers may need none of this upstream's tools (catalog/upstream-set.ts).
   */
  served(onBehalfOf: OnBehalfOf = {}, options: { stale?: boolean } = {}): Promise<ServedCatalog> {
    const now = this.servedNow(onBehalfOf);
    return now ? Promise.resolve(now) : this.servedLater(onBehalfOf, options.stale === true);
  }

  /**
   * Judges from now on with `pins`: a live reload that keeps this cache (its upstream unchanged) hands it
   * the new runtime's pin guard, so what is held shows in that runtime's `/readyz`, console and CLI (and
   * its approvals reach this upstream), not in the retired runtime's guard.
   */
  guardWith(pins: PinGuard): void {
    if (this.pins) this.pins = pins;
  }

  /**
   * {@link served} when it needs no wait: this caller's entry is cached and fresh and, with pins, its
   * view already judged; else undefined. The same copy {@link served} would give, without its awaits:
   * a search_tools call reads every upstream's catalogue more than once, and at ten upstreams the
   * promises of those reads were a third of the call's garbage (bench:search-e2e).
   */
  servedNow(onBehalfOf: OnBehalfOf = {}): ServedCatalog | undefined {
    const own = partitionOf(onBehalfOf);
    const entry = this.entries.get(this.scopeSeen.get('tools/list') === 'public' ? PUBLIC_TOOLS_KEY : this.key('tools/list', own));
    if (!entry || entry.expiresAt <= Date.now() || (entry.cacheScope !== 'public' && entry.fetchedFor !== own)) return undefined;
    const fetched = entry.value as Catalog;
    const catalog = this.pins ? this.pins.viewNow(fetched) : fetched;
    return catalog && { catalog, expiresAt: entry.expiresAt };
  }

  private async servedLater(onBehalfOf: OnBehalfOf, stale: boolean): Promise<ServedCatalog> {
    const entry = await this.entry('tools/list', onBehalfOf, stale);
    const fetched = entry.value as Catalog;
    return { catalog: this.pins ? await this.pins.view(this.policy, fetched) : fetched, expiresAt: entry.expiresAt };
  }

  /**
   * The last tools catalogue served to this credential (or to everyone), however old, without contacting
   * the upstream; undefined when none was ever fetched (or, with pins, judged).
   */
  lastCatalog(onBehalfOf: OnBehalfOf = {}): Catalog | undefined {
    const [shared, own] = [this.key('tools/list', 'public'), this.key('tools/list', partitionOf(onBehalfOf))];
    const entry = this.entries.peek(shared) ?? this.entries.peek(own) ?? this.adopted(shared) ?? this.adopted(own);
    const fetched = entry?.value as Catalog | undefined;
    return fetched && this.pins ? this.pins.peek(fetched) : fetched;
  }

  /**
   * The items of a non-tool list last fetched for this credential (or for everyone), however old, without
   * contacting the upstream; undefined when none was ever fetched (or a list_changed dropped it). What a
   * down upstream last listed: its resources stay its own while it is down (upstream-set.ts resourceUpstream).
   */
  lastList(method: Exclude<ListMethod, 'tools/list'>, onBehalfOf: OnBehalfOf = {}): readonly unknown[] | undefined {
    const [shared, own] = [this.key(method, 'public'), this.key(method, partitionOf(onBehalfOf))];
    const last = (this.entries.peek(shared) ?? this.entries.peek(own) ?? this.adopted(shared) ?? this.adopted(own))?.value as unknown[] | undefined;
    // A caller with no copy of its own (another credential's private list, one the LRU let go): what the upstream
    // listed to anyone, so its URIs stay its own while it is down (review: such a caller read another upstream's copy).
    const ever = this.everListed.get(method);
    return ever && ever.size > 0 ? [...(last ?? []), ...ever.values()] : last;
  }

  /**
   * Every resource and resource template this upstream has listed to anyone since the process started, by `uri` /
   * `uriTemplate`, at most {@link EVER_LISTED_LIMIT} per method (the first met): routing's record of what is
   * its own ({@link lastList}), kept apart from the LRU of lists and from partitions.
   */
  private readonly everListed = new Map<string, Map<string, unknown>>();

  private noteListed(method: ListMethod, items: unknown): void {
    if ((method !== 'resources/list' && method !== 'resources/templates/list') || !Array.isArray(items)) return;
    let ever = this.everListed.get(method);
    if (!ever) this.everListed.set(method, (ever = new Map()));
    for (const item of items) {
      const id = (item as { uri?: unknown; uriTemplate?: unknown } | null)?.[method === 'resources/list' ? 'uri' : 'uriTemplate'];
      if (typeof id !== 'string' || ever.has(id)) continue;
      if (ever.size >= EVER_LISTED_LIMIT) break;
      ever.set(id, item);
    }
  }

  /**
   * Every item of a non-tool list (resources, resource templates, prompts), with its freshness.
   * @param options.stale - an expired copy at once while it is refreshed (as {@link served}).
   */
  async list(method: Exclude<ListMethod, 'tools/list'>, onBehalfOf: OnBehalfOf = {}, options: { stale?: boolean } = {}): Promise<CachedList> {
    const entry = await this.entry(method, onBehalfOf, options.stale === true);
    return { items: entry.value as unknown[], cacheScope: entry.cacheScope, ttlMs: Math.max(0, entry.expiresAt - Date.now()) };
  }

  /** Drops every cached version of a list (on the upstream's list_changed). */
  invalidate(method: ListMethod): void {
    this.generations.set(method, (this.generations.get(method) ?? 0) + 1);
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${method}|`)) this.entries.delete(key);
    for (const key of [...(this.inherited?.keys() ?? [])]) if (key.startsWith(`${method}|`)) this.inherited!.delete(key);
    void this.shared?.delete(`${this.upstream.name}|${method}|public`);
    this.announce(method);
  }

  /** Tells the change listeners; one that throws is logged, never the failure of the read that found the change. */
  private announce(method: ListMethod): void {
    for (const listener of this.changeListeners) {
      try {
        listener(method);
      } catch (error) {
        this.log.warn({ upstream: this.upstream.name, method, err: (error as Error).message }, 'a list change listener failed');
      }
    }
  }

  /**
   * Marks every entry expired without dropping it: the next read refetches, a merged read takes the old
   * copy at once while it does (an entry that had a lifetime stays one that had, {@link entry}'s `stale`),
   * and a failed refetch can still serve it. Used when the upstream reconnected (it may have restarted
   * with other lists). Expired at 0, a restarted upstream whose list was slow held every merged request,
   * calls to the other upstreams' tools included, for its timeoutMs (upstream try-out: 29.7 s).
   */
  expireAll(): void {
    for (const method of Object.keys(LIST_ITEMS) as ListMethod[]) this.expire(method);
    for (const method of Object.keys(LIST_ITEMS)) void this.shared?.delete(`${this.upstream.name}|${method}|public`);
  }

  /** Marks `method`'s entries expired, kept ({@link expireAll}). */
  private expire(method: ListMethod): void {
    this.generations.set(method, (this.generations.get(method) ?? 0) + 1);
    for (const [key, entry] of [...this.entries.entries()]) {
      if (!key.startsWith(`${method}|`)) continue;
      // Just past its fetch: expired (a millisecond after it was fetched), and still later than its fetch, as an entry with a lifetime is.
      const expiresAt = entry.expiresAt > entry.fetchedAt ? entry.fetchedAt + 1 : entry.expiresAt;
      this.entries.set(key, { ...entry, expiresAt, refreshFailedAt: undefined });
    }
  }

  /**
   * The tools catalogue asked of the upstream again now and judged (pins), its cached copies expired, not
   * dropped: a fetch that fails leaves them serving. Before an operator's approval, so what is approved is
   * what the upstream serves now (http/console/pins.ts). Never rejects.
   */
  async refetchTools(): Promise<void> {
    this.expire('tools/list');
    await this.catalog().catch(() => undefined);
  }

  /** Called after an invalidation, and after a refresh that found the list changed (the gateway tells subscribed clients); returns its removal. */
  onChange(listener: (method: ListMethod) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /** Fetches the tools catalogue outside any request (start-up, periodic keep-warm). Never rejects. */
  async warm(): Promise<void> {
    await this.catalog().catch(() => undefined);
  }

  /** The tools catalogue's state for the console: last version and size, last success, last error. */
  status(): { version?: string; tools?: number; lastSuccessAt?: number; lastError?: string } {
    const last = this.lastBuilt;
    return { version: last?.version, tools: last?.tools.length, lastSuccessAt: this.lastSuccessAt, lastError: this.lastError };
  }

  readiness(): Readiness {
    const name = this.upstream.name;
    const health = this.upstream.health();
    if (health.state === 'down')
      return {
        ready: false,
        reason: `upstream ${name}: down since ${new Date(health.since ?? Date.now()).toISOString()} (${health.reason ?? 'unknown'}); reconnecting`,
      };
    if (this.lastSuccessAt === undefined)
      return { ready: false, reason: `upstream ${name}: catalogue not fetched yet${this.lastError ? ` (${this.lastError})` : ''}` };
    const age = Date.now() - this.lastSuccessAt;
    // Stale past twice the list's own lifetime (at least a minute): a list an upstream or `upstreams[].catalog.ttlMs`
    // says lasts a second was reported ready for 20 minutes under a long cache.ttlMs (left open from a review). An
    // upstream may shorten it, never lengthen it past the operator's (`catalog.ttlMs`, else `cache.ttlMs`: review).
    const lifetime = Math.min(this.lastTtlMs, this.policy.catalog.ttlMs ?? this.cache.ttlMs);
    if (this.lastError !== undefined && age > 2 * Math.max(lifetime, 30_000)) {
      return { ready: false, reason: `upstream ${name}: catalogue is stale (last fetched ${Math.round(age / 1000)} s ago; ${this.lastError})` };
    }
    return { ready: true };
  }

  /** Stops the keep-warm and stops listening to the upstream client (which may live on: live reload). */
  async close(): Promise<void> {
    clearInterval(this.warmer);
    for (const off of this.unsubscribe) off();
    this.changeListeners.clear();
  }

  private key(method: ListMethod, partition: string): string {
    return `${method}|${partition}`;
  }

  /**
   * The entry this caller may be served. The partition read is `public` while the upstream last said
   * so, else the caller's own; a `private` answer is only ever served to the partition it was fetched
   * for, so a caller that joined a shared fetch whose answer came back `private` (the upstream changed
   * its mind) fetches its own under its own partition. `stale`: an expired entry this caller may be
   * served is returned at once, its refresh left running (and shared as usual), when it had a lifetime
   * of its own (serving it a little longer while it is refreshed is what a TTL allows; a list the upstream
   * says not to keep, `ttlMs: 0`, is asked for every time) or its last refresh failed (waiting for the
   * next one would most likely be waiting for the same failure, its timeoutMs long).
   */
  private async entry(method: ListMethod, onBehalfOf: OnBehalfOf, stale = false): Promise<Entry> {
    const own = partitionOf(onBehalfOf);
    for (;;) {
      const partition = this.scopeSeen.get(method) === 'public' ? 'public' : own;
      const key = this.key(method, partition);
      const entry = this.entries.get(key) ?? this.adopted(key);
      let found: Entry;
      const servable = entry !== undefined && (entry.cacheScope === 'public' || entry.fetchedFor === own);
      if (entry && entry.expiresAt > Date.now()) found = entry;
      // A refresh failed less than a second ago: what the next would most likely bring is that failure again.
      else if (servable && entry.refreshFailedAt !== undefined && performance.now() - entry.refreshFailedAt < REFRESH_RETRY_MS) return entry;
      else {
        let pending = this.inflight.get(key);
        if (!pending) {
          pending = this.refresh(method, partition, entry, onBehalfOf).finally(() => this.inflight.delete(key));
          this.inflight.set(key, pending);
        }
        if (stale && servable && (entry.expiresAt > entry.fetchedAt || entry.refreshFailedAt !== undefined)) {
          // Nobody else may await it: the failure is logged and counted by refresh. A new catalogue is judged
          // (pins) as a read of it would have it judged, so the console and a reload find it ready (lastCatalog).
          pending
            .then((fresh) => (method === 'tools/list' && this.pins ? this.pins.view(this.policy, fresh.value as Catalog) : undefined))
            .catch(() => undefined);
          return entry;
        }
        found = await pending;
      }
      if (found.cacheScope === 'public' || found.fetchedFor === own) return found;
      // Only a shared (public) read can bring another caller's private list; the next read is our own.
      if (partition !== 'public') throw new GatewayError('internal', `${method}: a private list was filed under another partition`);
    }
  }

  private async refresh(method: ListMethod, partition: string, stale: Entry | undefined, onBehalfOf: OnBehalfOf): Promise<Entry> {
    const fromShared = await this.shared?.get<SharedEntry>(`${this.upstream.name}|${method}|${partition}`);
    if (fromShared && fromShared.expiresAt > Date.now() && (fromShared.cacheScope === 'public' || partition !== 'public'))
      return this.store(method, partition, fromShared, false);
    const generation = this.generations.get(method) ?? 0;
    let result: ListResult;
    // The catalogue is built page by page while the upstream prepares the next one.
    const building = method === 'tools/list' ? new CatalogBuilder(this.policy, this.lastBuilt) : undefined;
    try {
      result = await this.upstream.listAll(method, onBehalfOf, building && ((items) => building.add(items as Tool[])));
    } catch (error) {
      return this.failed(method, error, stale, onBehalfOf.requestId);
    }
    const override = this.policy.catalog;
    const ttlMs = Math.min(override.ttlMs ?? result.ttlMs ?? this.cache.ttlMs, MAX_TTL_MS);
    const cacheScope = override.cacheScope ?? result.cacheScope ?? (this.upstream.callerScoped ? 'private' : 'public');
    const fetchedAt = Date.now();
    const raw: SharedEntry = { items: result.items, fetchedAt, expiresAt: fetchedAt + ttlMs, cacheScope };
    if (method === 'tools/list') {
      this.lastSuccessAt = fetchedAt;
      this.lastTtlMs = ttlMs;
      this.lastError = undefined;
    }
    this.metrics.catalogRefreshes.inc({ upstream: this.upstream.name, outcome: 'ok' });
    // A list_changed that landed mid-fetch makes this answer stale before it is stored.
    const current = (this.generations.get(method) ?? 0) === generation;
    // A private answer belongs to the credential it was fetched with, whichever partition was read.
    const target = cacheScope === 'public' ? 'public' : partitionOf(onBehalfOf);
    if (this.scopeSeen.get(method) !== cacheScope) {
      this.scopeSeen.set(method, cacheScope);
      if (cacheScope === 'private') this.entries.delete(this.key(method, 'public'));
    }
    return current ? this.store(method, target, raw, true, building) : this.toEntry(method, raw, target, building);
  }

  private store(method: ListMethod, partition: string, raw: SharedEntry, share: boolean, building?: CatalogBuilder): Entry {
    const previous = this.entries.get(this.key(method, partition));
    const entry = this.toEntry(method, raw, partition, building);
    // Kept past expiry on purpose: an expired entry is what a failed refresh serves (stale-if-error).
    this.entries.set(this.key(method, partition), entry);
    this.noteListed(method, entry.value);
    // A refresh that found another list is a change the upstream did not announce (it sent no list_changed, or
    // cannot): subscribed callers are told as for one it did (a try-out's listener heard nothing for a new tool).
    // Found by the shared list or the keep-warm's own (no credential): a credential's private list is that caller's,
    // and announcing its changes told every other caller about it, once per credential (review, try-out); the
    // keep-warm finds a change to what every caller is served within its interval. Once per new list.
    if (partition === 'public' || partition === partitionOf({})) {
      const seen = listIdentity(entry.value);
      const last = this.announcedLists.get(method);
      this.announcedLists.set(method, seen);
      // Not after an invalidation (no previous copy: the upstream's list_changed was announced already).
      if (previous !== undefined && last !== undefined && last !== seen) this.announce(method);
    }
    this.inherited?.delete(this.key(method, partition));
    this.metrics.catalogCacheBytes.set({ upstream: this.upstream.name }, this.entries.calculatedSize);
    if (share && this.shared && raw.expiresAt > raw.fetchedAt)
      void this.shared.set(`${this.upstream.name}|${method}|${partition}`, raw, raw.expiresAt - raw.fetchedAt);
    return entry;
  }

  /** The entry of a fetched list; a tools catalogue is finished from `building` (which holds every item
   *  of `raw`) or built from `raw.items`. */
  private toEntry(method: ListMethod, raw: SharedEntry, fetchedFor: string, building?: CatalogBuilder): Entry {
    if (method !== 'tools/list')
      return {
        value: raw.items,
        bytes: JSON.stringify(raw.items).length,
        fetchedAt: raw.fetchedAt,
        expiresAt: raw.expiresAt,
        cacheScope: raw.cacheScope,
        fetchedFor,
      };
    const catalog = building?.finish() ?? buildCatalog(this.policy, raw.items as Tool[], this.lastBuilt);
    this.lastBuilt = catalog;
    // Once per name: the same duplicates came back with every refresh, and so did the line (try-out).
    const duplicates = catalog.duplicates.length ? this.untoldDuplicates(catalog.duplicates) : [];
    if (duplicates.length)
      this.log.warn(
        { upstream: this.upstream.name, duplicates: duplicates.slice(0, 20), count: duplicates.length },
        'upstream listed a tool name twice; the first definition is served',
      );
    if (catalog.rejected)
      this.log.warn(
        { upstream: this.upstream.name, rejected: catalog.rejected },
        'tools left out of the catalogue: a definition that is no spec Tool (each reason names the member), an invalid x-mcp-header declaration (SEP-2243), invisible characters in the name, or a definition nested too deep',
      );
    this.warnUnmatched(catalog);
    this.warnOverBudget(catalog);
    this.metrics.catalogTools.set({ upstream: this.upstream.name }, catalog.tools.length);
    return {
      value: catalog,
      bytes: catalog.bytes ?? catalog.tools.length * ESTIMATED_TOOL_BYTES,
      fetchedAt: raw.fetchedAt,
      expiresAt: raw.expiresAt,
      cacheScope: raw.cacheScope,
      fetchedFor,
    };
  }

  /**
   * Warns (once per distinct set, not at every refresh; at most 16 sets) when per-tool config entries name no listed
   * tool: an entry that applies to nothing is most often a typo, and a scope rule lost to one leaves
   * its tool to `_meta` or `scopes.required`. Counted in `mcp_config_unmatched_rules{upstream}`.
   */
  private warnUnmatched(catalog: Catalog): void {
    const unmatched = catalog.unmatchedRules ?? [];
    this.metrics.configUnmatchedRules.set({ upstream: this.upstream.name }, unmatched.length);
    const signature = unmatched.map((u) => u.key).join('\n');
    if (unmatched.length === 0 || this.warnedUnmatched.has(signature) || this.warnedUnmatched.size >= 16) return;
    this.warnedUnmatched.add(signature);
    const named = unmatched.map((u) => `${u.key}${u.nearest ? ` (did you mean ${u.nearest}?)` : ''}`);
    this.log.warn(
      { upstream: this.upstream.name, unmatched: named },
      `config entries of upstream ${this.upstream.name} name tools it does not list, so they apply to nothing (a tool whose scope rule is lost falls back to the upstream's scopes.required, and its _meta scopes as well): ${named.join(', ')}`,
    );
  }

  /**
   * Warns (once per distinct set, at most 16 sets) about model-visible MCP Apps tools past the upstream's
   * `maxAnchors`: `/mcp/compact` does not list them up front, so a host sees their view only through
   * search_tools and call_tool.
   */
  private warnOverBudget(catalog: Catalog): void {
    const over = catalog.anchorsOverBudget ?? [];
    const signature = over.join('\n');
    if (over.length === 0 || this.warnedOverBudget.has(signature) || this.warnedOverBudget.size >= 16) return;
    this.warnedOverBudget.add(signature);
    const { name, maxAnchors } = this.policy;
    this.log.warn(
      { upstream: name, maxAnchors, overBudget: over },
      `MCP Apps tools of upstream ${name} past its maxAnchors (${maxAnchors}) are not listed up front on /mcp/compact; they are found with search_tools and run through call_tool, whose result names their view: ${over.join(', ')}`,
    );
  }

  /**
   * Per list method, each of its failure warnings ('serving the stale copy', and 'list fetch failed' when no
   * copy was ever fetched: an upstream whose command does not exist logged it at every background refresh)
   * at most once in {@link FAILURE_LOG_INTERVAL_MS}.
   */
  private readonly failureWarnings = new Map<string, ReturnType<typeof throttled>>();

  private failureWarned(method: ListMethod, stale: boolean): ReturnType<typeof throttled> {
    const key = `${stale ? 'stale' : 'none'} ${method}`;
    let warn = this.failureWarnings.get(key);
    if (!warn) this.failureWarnings.set(key, (warn = throttled(FAILURE_LOG_INTERVAL_MS)));
    return warn;
  }

  private failed(method: ListMethod, error: unknown, stale: Entry | undefined, requestId: string | undefined): Entry {
    const failure = failureOf(error, this.upstream.name);
    if (method === 'tools/list') this.lastError = failure.message;
    const log = requestLog(this.log, requestId);
    if (stale) {
      stale.refreshFailedAt = performance.now();
      this.metrics.catalogRefreshes.inc({ upstream: this.upstream.name, outcome: 'stale_served' });
      this.failureWarned(
        method,
        true,
      )((notLogged) =>
        log.warn(
          { upstream: this.upstream.name, method, reason: failure.message, ageMs: Date.now() - stale.fetchedAt, ...(notLogged ? { notLogged } : {}) },
          'list refresh failed; serving the stale copy',
        ),
      );
      return stale;
    }
    // A reload's trial connection's failure is the reload's to refuse and say (client.ts `trial`).
    if (!this.upstream.trial) {
      this.metrics.catalogRefreshes.inc({ upstream: this.upstream.name, outcome: 'error' });
      this.failureWarned(
        method,
        false,
      )((notLogged) => log.warn({ upstream: this.upstream.name, method, reason: failure.message, ...(notLogged ? { notLogged } : {}) }, 'list fetch failed'));
    }
    if (error instanceof GatewayError) throw error;
    throw new GatewayError(failure.kind === 'unauthorized' ? 'unauthorized' : 'upstream_unavailable', `${method} is unavailable: ${failure.message}`, {
      upstream: this.upstream.name,
    });
  }
}

/**
 * How soon a list whose refresh failed is asked of its upstream again (ms); the stale copy serves
 * meanwhile. An upstream that answers every request with an error was asked for its list once per
 * request (703 refreshes and as many warnings for 1,000 calls, observability try-out).
 */
const REFRESH_RETRY_MS = 1000;

/** The cache partition of a caller's private lists: its credential digest (`anonymous` without one). */
function partitionOf(onBehalfOf: OnBehalfOf): string {
  return onBehalfOf.credential?.digest ?? 'anonymous';
}
