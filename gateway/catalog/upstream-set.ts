import { LRUCache } from 'lru-cache';
import type { Prompt, ServerCapabilities } from '@modelcontextprotocol/client';
import type { CachedList, CatalogCache, Readiness, ServedCatalog } from './catalog-cache.ts';
import { mergeCatalogs, ORIGIN_META_KEY, type CatalogPart } from './catalog-merge.ts';
import type { Catalog, CatalogTool } from './catalog.ts';
import { GatewayError } from '../errors.ts';
import { exposedNames, namingHint, namingOptions, type NamingOptions, type UpstreamName } from './naming.ts';
import { untold, type Logger } from '../obs/log.ts';
import { requestLog } from '../obs/request-context.ts';
import { firstPerUri, resourceOwner, sharedUris, uriProblem } from './resource-routing.ts';
import { mergeExtensions, uiResourceUri, viewOwner } from './extensions.ts';
import { lintInstructions } from './description-lint.ts';
import { stripInvisible } from '../checks/invisible-text.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { OnBehalfOf } from '../upstream/forward-scope.ts';
import type { ListMethod, TaskForms, UpstreamInfo } from '../upstream/types.ts';

type PassThroughList = Exclude<ListMethod, 'tools/list'>;
/** The per-request methods that name no tool: routed by prompt name or resource URI. */
export type RoutedMethod = 'resources/read' | 'prompts/get' | 'completion/complete';

const CAPABILITY_OF: Record<PassThroughList, keyof ServerCapabilities> = {
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'prompts/list': 'prompts',
};

/** A name served before, the tool it named and until when it stays callable (epoch ms). */
export interface ServedName extends UpstreamName {
  readonly until: number;
}

/** One configured upstream with its connection and list cache. */
export interface UpstreamRuntime {
  readonly client: UpstreamClient;
  readonly catalog: CatalogCache;
}

/** Where a routed request goes, with its params in the upstream's own names. */
export interface Route {
  readonly upstream: UpstreamRuntime;
  readonly params: Record<string, unknown>;
}

/**
 * The configured upstreams seen as one MCP server: one catalogue (tools under exposed names, see
 * exposed-names.ts), merged resources and prompts (prompt names prefixed like tools, URIs as they are),
 * merged capabilities and instructions, and the routing of each request to the upstream that owns it.
 *
 * With ONE upstream everything is that upstream's, unchanged (names, lists, hints and errors). With
 * several, an upstream that is down or whose catalogue cannot be fetched is left out (logged when it
 * goes and when it comes back; `/readyz` names it) and the others keep serving; only when all are out
 * does a list fail.
 *
 * With several, a merged answer (the description, a list, the catalogue) never waits on one upstream
 * for the others' sake past what it must: not on a reconnection attempt of one that is down (its last
 * description and catalogue serve, the attempt runs on), not on the refresh of a list it has an expired
 * copy of (the copy serves, the refresh runs on), and no longer than until one it awaits is found lost
 * (the health probe). An upstream that accepts connections and never answers held every request, calls
 * to the healthy upstreams included, for its handshake bound, 10 s each (robustness try-out). It does
 * wait for an upstream's first connection (bounded by the lesser of its timeoutMs and 10 s) and for a
 * list it has no copy of.
 */
export class UpstreamSet {
  readonly naming: NamingOptions;
  private readonly merged = new LRUCache<string, Catalog>({ max: 64 });
  private readonly excluded = new Map<string, string>();
  /** Every tool name this set has served, with the tool it named (what the next reload keeps as aliases). */
  private readonly servedNames = new Map<string, UpstreamName>();
  private readonly notedCatalogs = new WeakSet<Catalog>();
  /** The shadowed name lists already logged (once each for this set's life: a catalogue is rebuilt per refresh and partition). */
  private readonly shadowWarned = new Set<string>();
  /** The duplicated tool names of merged catalogues already warned about (`upstream: name`, each once). */
  private readonly untoldDuplicates = untold();
  /** The resource URIs several upstreams list already logged (with those upstreams), each once. */
  private readonly untoldSharedUris = untold();
  /** The resource lists {@link noteSharedUris} last looked at (the cached arrays, config order). */
  private lastUriCheck?: readonly (readonly unknown[])[];
  private live?: { aliases: ReadonlyMap<string, UpstreamName>; until: number };
  /** The last merge {@link servedNow} made: of these upstreams' catalogues (config order), under these aliases. */
  private lastMerge?: { catalogs: readonly Catalog[]; aliases: ReadonlyMap<string, UpstreamName>; catalog: Catalog };
  /** The last merged description and the upstreams' own it was made of (config order). */
  private described?: { from: readonly (UpstreamInfo | undefined)[]; info: UpstreamInfo };

  /**
   * @param aliases - names an earlier configuration served, with the tool each named and until when
   *   (epoch ms) it stays callable ({@link aliasesForNext} of the set this one replaces on a reload).
   * @param compactNames - the names of `/mcp/compact`'s own tools (search_tools, call_tool, run_code in code mode):
   *   a catalogue tool of one of these names is shadowed there (policy/tool-resolution.ts), which is logged once.
   */
  constructor(
    readonly upstreams: readonly UpstreamRuntime[],
    separator: string,
    private readonly log: Logger,
    private readonly aliases: ReadonlyMap<string, ServedName> = new Map(),
    private readonly compactNames: readonly string[] = [],
    private readonly lint: 'warn' | 'hold' | 'off' = 'warn',
  ) {
    this.naming = namingOptions(upstreams.length, separator);
  }

  /** Per upstream, the last instructions text it sent and what is served of it ({@link servedInstructions}). */
  private readonly instructionsServed = new Map<string, { sent: string; served: string | undefined }>();

  /**
   * What clients read of an upstream's `instructions`, model-facing text many clients put in the system
   * prompt: invisible characters removed, always, as from every tool definition (description-lint.ts);
   * the other lint findings logged once per text and upstream (`pinning.lint: warn`), or the text withheld
   * (`hold`: there is no approving free text; the upstream's tools and their own lint stay as they are).
   * Upstream try-out: a tag block telling the model to call a destructive tool and hide it, and zero-width
   * and tag characters, came through verbatim, with no log line.
   */
  private servedInstructions(upstream: string, sent: string | undefined): string | undefined {
    if (sent === undefined) return undefined;
    const known = this.instructionsServed.get(upstream);
    if (known?.sent === sent) return known.served;
    const findings = this.lint === 'off' ? [] : lintInstructions(sent).filter((f) => f.rule !== 'invisible-characters');
    const withheld = findings.length > 0 && this.lint === 'hold';
    const served = withheld ? undefined : stripInvisible(sent);
    if (findings.length)
      this.log.warn(
        { upstream, findings: findings.map((f) => ({ rule: f.rule, excerpt: f.excerpt })), lint: this.lint },
        withheld
          ? 'upstream instructions withheld: description lint findings (pinning.lint: hold)'
          : 'upstream instructions served with description lint findings (pinning.lint: warn)',
      );
    this.instructionsServed.set(upstream, { sent, served });
    return served;
  }

  /** `info` with its instructions as served ({@link servedInstructions}); the same object when they need no change. */
  private servable(upstream: string, info: UpstreamInfo): UpstreamInfo {
    const instructions = this.servedInstructions(upstream, info.instructions);
    return instructions === info.instructions ? info : { ...info, instructions };
  }

  /**
   * The names the next configuration should keep callable for `ttlMs` (issue 30, stable names): every
   * name this set served, and the aliases it still honours, each with the tool it names and an expiry.
   * A reload that renames tools (an upstream added or removed changes the prefixing) passes them on, so
   * a caller of an old name reaches the same tool instead of "Unknown tool". The names this set would
   * serve count though no request asked yet (a reload right after start, before the keep-warm listed
   * them): its catalogue is fetched first, or taken from the cache, waiting at most `deadlineMs`.
   */
  async aliasesForNext(ttlMs: number, deadlineMs: number): Promise<Map<string, ServedName>> {
    const next = new Map<string, ServedName>();
    if (ttlMs <= 0) return next;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.catalog().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs)))]);
    clearTimeout(timer);
    const now = Date.now();
    for (const [name, alias] of this.aliases) if (alias.until > now) next.set(name, alias);
    for (const [name, origin] of this.servedNames) next.set(name, { ...origin, until: now + ttlMs });
    return next;
  }

  /** The upstream configured under `name`. */
  get(name: string): UpstreamRuntime | undefined {
    return this.upstreams.find((u) => u.client.name === name);
  }

  /**
   * What the gateway advertises: one upstream's capabilities and instructions, or the union of those
   * of every reachable upstream (instructions headed by the upstream's name). Undefined when none answers.
   * `include`: the upstreams whose instructions the caller may read (the others' would name servers it
   * cannot use: a hidden upstream is answered as a missing one); capabilities stay the union.
   */
  async describe(onBehalfOf: OnBehalfOf = {}, include?: (upstream: string) => boolean): Promise<UpstreamInfo | undefined> {
    // An upstream that cannot be reached now is advertised as it last was (client.ts lastDescribed): its
    // methods stay served and answer "upstream unavailable" until it is back.
    if (!this.naming.prefixed) {
      const client = this.upstreams[0]!.client;
      const info = await client.describe(onBehalfOf).catch(() => client.lastDescribed);
      if (!info) return info;
      return include && !include(client.name) ? { ...info, instructions: undefined } : this.servable(client.name, info);
    }
    const excluded = include ? this.upstreams.filter((u) => !include(u.client.name)).map((u) => u.client.name) : [];
    const last = this.described;
    if (excluded.length === 0 && last && this.upstreams.every((u, i) => u.client.described === last.from[i])) return last.info;
    const all = await Promise.all(this.upstreams.map((u) => this.describedFor(u, onBehalfOf)));
    if (excluded.length) return this.merge(all, (name) => !excluded.includes(name));
    const info = this.merge(all);
    // Kept while every upstream is described by the same objects (a reconnection describes it anew).
    if (info && all.every((x, i) => x !== undefined && x === this.upstreams[i]!.client.described)) this.described = { from: all, info };
    return info;
  }

  /**
   * What `u` advertises in a merged description: awaited while it is up or connecting for the first time;
   * down, its last description at once (undefined if it never connected), with a reconnection asked for
   * as a request to it would ask (the supervisor's on-demand rule), not awaited.
   */
  private describedFor(u: UpstreamRuntime, onBehalfOf: OnBehalfOf): Promise<UpstreamInfo | undefined> {
    const { client } = u;
    if (client.described) return Promise.resolve(client.described);
    if (client.health().state !== 'down') return client.describe(onBehalfOf).catch(() => client.lastDescribed);
    void client.describe(onBehalfOf).catch(() => undefined);
    return Promise.resolve(client.lastDescribed);
  }

  /** The union of the upstreams' descriptions (`all` in config order, undefined for one not described); instructions of those `shown` only. */
  private merge(all: readonly (UpstreamInfo | undefined)[], shown: (upstream: string) => boolean = () => true): UpstreamInfo | undefined {
    const infos = this.upstreams.map((u, i) => ({ name: u.client.name, info: all[i] })).filter((x) => x.info);
    if (infos.length === 0) return undefined;
    const any = (pick: (c: ServerCapabilities) => unknown) => infos.some(({ info }) => pick(info!.capabilities));
    const listChanged = (pick: (c: ServerCapabilities) => { listChanged?: boolean } | undefined) =>
      infos.some(({ info }) => pick(info!.capabilities)?.listChanged === true) ? { listChanged: true } : {};
    const subscribe = any((c) => c.resources?.subscribe === true) ? { subscribe: true } : {};
    const capabilities: ServerCapabilities = {
      tools: listChanged((c) => c.tools),
      ...(any((c) => c.resources) ? { resources: { ...subscribe, ...listChanged((c) => c.resources) } } : {}),
      ...(any((c) => c.prompts) ? { prompts: listChanged((c) => c.prompts) } : {}),
      ...(any((c) => c.completions) ? { completions: {} } : {}),
      ...(any((c) => c.logging) ? { logging: {} } : {}),
    };
    const { extensions } = mergeExtensions(infos.map(({ name, info }) => ({ upstream: name, extensions: info!.capabilities.extensions })));
    if (Object.keys(extensions).length) capabilities.extensions = extensions as ServerCapabilities['extensions'];
    const named = infos.filter(({ name }) => shown(name));
    const sections = named.flatMap(({ name, info }) => {
      const instructions = this.servedInstructions(name, info!.instructions);
      return instructions ? [`## ${name}\n${instructions}`] : [];
    });
    // A caller none of whose upstreams is open to it is told so, not "of 0 MCP servers" (try-out).
    const intro =
      named.length === 0
        ? 'None of the MCP servers behind this gateway is open to this credential.'
        : `Tools and prompts of ${named.length} MCP server${named.length === 1 ? '' : 's'}, named ${namingHint(this.naming)}.`;
    const resourceUpdates = infos.some(({ info }) => info!.resourceUpdates === true);
    const legacyTasks = infos.filter(({ info }) => info!.tasks?.legacy);
    const tasks: TaskForms = {
      ...(legacyTasks.length ? { legacy: { cancel: legacyTasks.some(({ info }) => info!.tasks!.legacy!.cancel) } } : {}),
      ...(infos.some(({ info }) => info!.tasks?.modern) ? { modern: true as const } : {}),
    };
    return {
      era: 'modern',
      sessionful: false,
      capabilities,
      instructions: [intro, ...sections].join('\n\n'),
      resourceUpdates,
      ...(Object.keys(tasks).length ? { tasks } : {}),
    };
  }

  /**
   * The merged tools catalogue as this credential sees it upstream (before any scope filtering). The
   * tools of an upstream that is down are withheld (their last catalogue keeps their names reserved).
   */
  async catalog(onBehalfOf: OnBehalfOf = {}): Promise<Catalog> {
    return (await this.served(onBehalfOf)).catalog;
  }

  /**
   * {@link catalog} and when it stops being fresh: the soonest expiry of its parts; already past
   * (0) when an upstream is left out (down, or its catalogue failed), since its tools come back
   * (or go) when it does, at a time nobody knows. With one upstream and no alias to honour, that
   * upstream's catalogue as it is.
   */
  async served(onBehalfOf: OnBehalfOf = {}): Promise<ServedCatalog> {
    const aliases = this.liveAliases();
    if (!this.naming.prefixed) {
      // One upstream: its own catalogue cache decides, a stale copy while it is down included (never left out
      // as one of several would be), with the names a reload keeps callable merged in while they last.
      const own = await this.upstreams[0]!.catalog.served(onBehalfOf);
      if (aliases.size === 0) return this.noted(own);
      return this.noted({ catalog: this.mergedOf([{ upstream: this.upstreams[0]!.client.name, catalog: own.catalog }], aliases), expiresAt: own.expiresAt });
    }
    const now = this.servedNow(onBehalfOf, aliases);
    if (now) return now;
    const parts = await this.reachable((u) => u.catalog.served(onBehalfOf, { stale: true }), 'tools/list', onBehalfOf.requestId);
    const expiresAt = parts.length < this.upstreams.length ? 0 : Math.min(...parts.map((p) => p.value.expiresAt));
    const catalogParts: CatalogPart[] = this.upstreams.flatMap((u): CatalogPart[] => {
      const part = parts.find((p) => p.upstream === u);
      if (part) return [{ upstream: u.client.name, catalog: part.value.catalog }];
      const last = u.catalog.lastCatalog(onBehalfOf);
      return last ? [{ upstream: u.client.name, catalog: last, down: true }] : [];
    });
    return this.noted({ catalog: this.mergedOf(catalogParts, aliases), expiresAt });
  }

  /**
   * {@link served} without a wait when no upstream is left out and each one's catalogue is fresh in its
   * cache ({@link CatalogCache.servedNow}): the merged catalogue {@link served} would give, read with no
   * promise per upstream (the common case: a search_tools call reads the merged catalogue three times).
   */
  private servedNow(onBehalfOf: OnBehalfOf, aliases: ReadonlyMap<string, UpstreamName>): ServedCatalog | undefined {
    const catalogs: Catalog[] = [];
    let expiresAt = Number.POSITIVE_INFINITY;
    for (const u of this.upstreams) {
      const served = u.client.health().state === 'down' ? undefined : u.catalog.servedNow(onBehalfOf);
      if (!served) return undefined;
      catalogs.push(served.catalog);
      expiresAt = Math.min(expiresAt, served.expiresAt);
    }
    for (const u of this.upstreams) this.noteExclusion(u.client.name, undefined, onBehalfOf.requestId);
    const last = this.lastMerge;
    if (last?.aliases === aliases && catalogs.every((c, i) => c === last.catalogs[i])) return { catalog: last.catalog, expiresAt };
    const catalog = this.mergedOf(
      catalogs.map((c, i) => ({ upstream: this.upstreams[i]!.client.name, catalog: c })),
      aliases,
    );
    this.lastMerge = { catalogs, aliases, catalog };
    return this.noted({ catalog, expiresAt });
  }

  /**
   * The merged catalogue of the last tools catalogues fetched outside any caller's partition (public, or
   * fetched without a credential: the keep-warm), without contacting an upstream; undefined when no
   * upstream has one. For operators (the console), not for serving callers.
   */
  lastCatalog(): Catalog | undefined {
    const aliases = this.liveAliases();
    if (!this.naming.prefixed && aliases.size === 0) return this.upstreams[0]!.catalog.lastCatalog();
    const parts: CatalogPart[] = this.upstreams.flatMap((u): CatalogPart[] => {
      const last = u.catalog.lastCatalog();
      return last ? [{ upstream: u.client.name, catalog: last }] : [];
    });
    return parts.length === 0 ? undefined : this.mergedOf(parts, aliases);
  }

  /** The merged catalogue of `parts`, made once per combination of versions (and aliases in force). */
  private mergedOf(parts: readonly CatalogPart[], aliases: ReadonlyMap<string, UpstreamName>): Catalog {
    const key = `${parts.map((p) => `${p.upstream}:${p.catalog.version}${p.down ? ':down' : ''}`).join('|')}|aliases:${aliases.size}`;
    let catalog = this.merged.get(key);
    if (!catalog) {
      catalog = mergeCatalogs(parts, this.naming, aliases);
      // Once per name: a catalogue is merged again on every refresh of any upstream's (try-out).
      const duplicates = catalog.duplicates.length ? this.untoldDuplicates(catalog.duplicates) : [];
      if (duplicates.length)
        this.log.warn(
          { duplicates: duplicates.slice(0, 20), count: duplicates.length },
          'tool names listed twice by one upstream; the first definition is served',
        );
      this.merged.set(key, catalog);
    }
    return catalog;
  }

  /** The aliases not expired yet: worked out again only when the soonest of them expires (not per request). */
  private liveAliases(): ReadonlyMap<string, UpstreamName> {
    if (this.aliases.size === 0) return this.aliases;
    const now = Date.now();
    if (this.live && now < this.live.until) return this.live.aliases;
    const aliases = new Map([...this.aliases].filter(([, alias]) => alias.until > now));
    let until = Number.POSITIVE_INFINITY;
    for (const alias of aliases.values()) until = Math.min(until, alias.until);
    this.live = { aliases, until };
    return aliases;
  }

  /** Notes the names a catalogue serves (once per catalogue object), for {@link aliasesForNext}. */
  private noted(served: ServedCatalog): ServedCatalog {
    const { catalog } = served;
    if (this.notedCatalogs.has(catalog)) return served;
    this.notedCatalogs.add(catalog);
    for (const tool of [...catalog.tools, ...(catalog.withheld?.values() ?? []), ...[...(catalog.held?.values() ?? [])].map((h) => h.tool)])
      this.servedNames.set(tool.name, { upstream: tool.upstream, name: tool.upstreamName });
    // The operator learns why a tool is missing there, and whose it is: a lone upstream's own names, or with several,
    // a prefix and a name that join into one of these (`search` + `_` + `tools` under `naming.separator: _`: try-out).
    const shadowed = this.compactNames.filter((name) => catalog.byName.has(name));
    if (shadowed.length && !this.shadowWarned.has(shadowed.join(' '))) {
      this.shadowWarned.add(shadowed.join(' '));
      const upstreams = shadowed.map((name) => catalog.byName.get(name)!.upstream);
      this.log.warn(
        { upstreams, tools: shadowed },
        `tools not reachable on /mcp/compact, whose own tools have these names: ${shadowed.map((name, i) => `${name} (upstream ${upstreams[i]})`).join(', ')} (served on /mcp)`,
      );
    }
    return served;
  }

  /**
   * Warns once per resource URI that several upstreams list (not per refresh, nor per request: a list's items
   * are the cached array while it lasts, and a URI already told is not told again): a read of
   * one goes to the first upstream listing it, and stays with it while it is down (try-out: the URI was
   * listed twice without a word, and another server's copy was read once its owner went down).
   */
  private noteSharedUris(parts: readonly { upstream: string; items: readonly unknown[] }[]): void {
    const last = this.lastUriCheck;
    if (last && last.length === parts.length && parts.every((p, i) => p.items === last[i])) return;
    this.lastUriCheck = parts.map((p) => p.items);
    const shared = sharedUris(parts.map((p) => ({ upstream: p.upstream, resources: p.items as { uri?: unknown }[] })));
    if (shared.length === 0) return;
    // Once per URI (review: once per set let an upstream that changes which URIs it copies force a line per list).
    const untoldUris = new Set(this.untoldSharedUris(shared.map(({ uri, upstreams }) => `${upstreams.join(' ')}\u0000${uri}`)));
    const fresh = shared.filter(({ uri, upstreams }) => untoldUris.has(`${upstreams.join(' ')}\u0000${uri}`));
    if (fresh.length === 0) return;
    this.log.warn(
      { count: fresh.length, shared: fresh.slice(0, 5).map(({ uri, upstreams }) => ({ uri: uri.slice(0, 200), upstreams })) },
      `${fresh.length} resource URI${fresh.length === 1 ? ' is' : 's are'} listed by more than one upstream: resources/list shows and a read reaches the first of them in config order (of those the caller may use), which fails while that one is down`,
    );
  }

  /**
   * A merged non-tool list: items of every reachable upstream that has the capability and that `include`
   * admits (the caller's access, policy/visibility.ts), prompts renamed with their origin in `_meta`; the
   * shortest TTL, and `private` if any part is.
   */
  async list(method: PassThroughList, onBehalfOf: OnBehalfOf = {}, include: (upstream: string) => boolean = () => true): Promise<CachedList> {
    if (!this.naming.prefixed) {
      const only = this.upstreams[0]!;
      return include(only.client.name) ? only.catalog.list(method, onBehalfOf) : { items: [], ttlMs: 0, cacheScope: 'private' };
    }
    const parts = await this.reachable(
      async (u) => (include(u.client.name) && (await this.has(u, method, onBehalfOf)) ? u.catalog.list(method, onBehalfOf, { stale: true }) : undefined),
      method,
      onBehalfOf.requestId,
    );
    const present = parts.filter((p): p is { upstream: UpstreamRuntime; value: CachedList } => p.value !== undefined);
    if (method === 'resources/list') this.noteSharedUris(present.map((p) => ({ upstream: p.upstream.client.name, items: p.value.items })));
    let items = present.flatMap(({ upstream, value }) => value.items.map((item) => ({ upstream: upstream.client.name, item })));
    // A URI several upstreams list is read from the first of them (config order): list that one's entry only, as a
    // client keys resources by URI (try-out: the same URI twice, with two descriptions, one of them never readable).
    if (method === 'resources/list') items = firstPerUri(items);
    if (method === 'prompts/list') {
      const names = exposedNames(
        items.map(({ upstream, item }) => ({ upstream, name: String((item as Prompt).name) })),
        this.naming,
      );
      items = items.map(({ upstream, item }, i) => ({
        upstream,
        item: { ...(item as Prompt), name: names[i]!, _meta: { ...(item as Prompt)._meta, [ORIGIN_META_KEY]: { upstream, name: (item as Prompt).name } } },
      }));
    }
    return {
      items: items.map(({ item }) => item),
      ttlMs: present.length ? Math.min(...present.map((p) => p.value.ttlMs)) : 0,
      cacheScope: present.some((p) => p.value.cacheScope === 'private') ? 'private' : 'public',
    };
  }

  /**
   * The upstream that answers a routed request and its params in that upstream's names: prompts by
   * exposed name, resources by URI (resource-routing.ts), completions by their `ref`. `reachable`, when
   * given, names the upstreams the caller may use: a URI only they list or match is theirs (two upstreams
   * listing one URI: the caller's reads go to the one it may use, not the first). `linking`, when given,
   * the tools the caller may use: a `ui://` view no upstream lists is routed only when one of them links
   * to it (the view of a tool hidden from the caller is as missing as the tool: try-out).
   * @throws GatewayError `invalid_arguments` (-32602) for a prompt or resource no upstream owns, and for a
   *   resource URI that is none (resource-routing.ts `uriProblem`), whoever asks: `data.path` names it.
   */
  async route(
    method: RoutedMethod,
    params: Record<string, unknown>,
    onBehalfOf: OnBehalfOf = {},
    reachable?: (upstream: string) => boolean,
    linking?: () => Promise<readonly CatalogTool[]>,
  ): Promise<Route> {
    // One upstream takes every routed request, but a `ui://` view still only for a caller linked to it (review).
    const view = method === 'resources/read' ? params.uri : ((params.ref ?? {}) as Record<string, unknown>).uri;
    // Checked before anything is routed: one upstream alone takes the URI as sent, and its parser may read another.
    const problem = typeof view === 'string' && method !== 'prompts/get' ? uriProblem(view) : undefined;
    if (problem) {
      const path = method === 'resources/read' ? '/uri' : '/ref/uri';
      throw new GatewayError('invalid_arguments', `Invalid params: ${path} ${problem}`, { path });
    }
    // The scheme in any case (RFC 3986 §3.1: UI:// is ui://, and servers read it so: review).
    // Any `ui:` URI, `//` or not: a server may read `ui:x/view` as the view `ui://x/view` (try-out).
    if (!this.naming.prefixed && !(linking && typeof view === 'string' && /^ui:/i.test(view))) return { upstream: this.upstreams[0]!, params };
    if (method === 'prompts/get') {
      const { upstream, name } = await this.promptOwner(params.name, onBehalfOf);
      return { upstream, params: { ...params, name } };
    }
    if (method === 'resources/read') return { upstream: await this.resourceUpstream(params.uri, onBehalfOf, reachable, linking, 'resource_not_found'), params };
    const ref = (params.ref ?? {}) as Record<string, unknown>;
    if (ref.type === 'ref/prompt') {
      const { upstream, name } = await this.promptOwner(ref.name, onBehalfOf);
      return { upstream, params: { ...params, ref: { ...ref, name } } };
    }
    // -32002 is resources/read's (2025-11-25 server/resources): a completion's unknown reference is its invalid params.
    return { upstream: await this.resourceUpstream(ref.uri, onBehalfOf, reachable, linking, 'invalid_arguments'), params };
  }

  /** Readiness per upstream: ready when all are; with several, `degraded` while at least one is. */
  readiness(): { status: 'ready' | 'degraded' | 'not_ready'; reasons: string[] } {
    const states: Readiness[] = this.upstreams.map((u) => u.catalog.readiness());
    const reasons = states.filter((r) => !r.ready).map((r) => r.reason!);
    const status = reasons.length === 0 ? 'ready' : reasons.length < states.length ? 'degraded' : 'not_ready';
    return { status, reasons };
  }

  private async promptOwner(exposed: unknown, onBehalfOf: OnBehalfOf = {}): Promise<{ upstream: UpstreamRuntime; name: string }> {
    const prompts = (await this.list('prompts/list', onBehalfOf)).items as Prompt[];
    const origin = prompts.find((p) => p.name === exposed)?._meta?.[ORIGIN_META_KEY] as { upstream: string; name: string } | undefined;
    const upstream = origin && this.get(origin.upstream);
    if (!origin || !upstream) throw new GatewayError('invalid_arguments', `Unknown prompt: ${String(exposed)}`);
    return { upstream, name: origin.name };
  }

  private async resourceUpstream(
    uri: unknown,
    onBehalfOf: OnBehalfOf = {},
    reachable?: (upstream: string) => boolean,
    linking?: () => Promise<readonly CatalogTool[]>,
    unknown: 'resource_not_found' | 'invalid_arguments' = 'resource_not_found',
  ): Promise<UpstreamRuntime> {
    const listings = await Promise.all(
      this.upstreams
        .filter((u) => reachable === undefined || reachable(u.client.name))
        .map(async (u) => {
          const [resources, templates] = await Promise.all(
            (['resources/list', 'resources/templates/list'] as const).map(async (method) => {
              // Down (reconnecting or not), or lost while listed: what it last listed, without waiting for an attempt (see the
              // class). Its URIs stay its own, so a read of one is sent to it and fails upstream_unavailable as a call of its
              // tools does; left out, another upstream listing or matching the URI answered with its own content (try-out).
              const last = () => (u.catalog.lastList(method, onBehalfOf) ?? []) as Record<string, unknown>[];
              if (u.client.health().state === 'down') return last();
              // Not described for this caller (its describe failed): what it last listed, as when down (review).
              if (!(await this.has(u, method, onBehalfOf))) return last();
              const listed = await this.untilLost(u, u.catalog.list(method, onBehalfOf, { stale: true })).catch(() => undefined);
              return listed ? (listed.items as Record<string, unknown>[]) : last();
            }),
          );
          return { upstream: u.client.name, resources: resources!, templates: templates! };
        }),
    );
    // A `ui://` view (MCP Apps) a tool links belongs to the upstream of the tools linking it (owners read from every
    // tool: a view two upstreams link has none), for a caller that may use one of those tools, whether or not the
    // upstream lists it or a template of it matches it (try-out: listing it let every caller of the upstream read a
    // hidden tool's view). A `ui:` URI no tool links is the upstream's resource like any other, never routed by scheme.
    const tools = typeof uri === 'string' && /^ui:/i.test(uri) ? (await this.catalog(onBehalfOf)).tools : undefined;
    const owner =
      typeof uri !== 'string'
        ? undefined
        : tools?.some((tool) => uiResourceUri(tool.definition) === uri)
          ? viewOwner(uri, tools, linking && (await linking()))
          : resourceOwner(uri, listings);
    const upstream = owner && this.get(owner);
    if (!upstream) throw new GatewayError(unknown, `Resource not found: ${String(uri).slice(0, 200)}`, typeof uri === 'string' ? { uri } : {});
    return upstream;
  }

  private async has(upstream: UpstreamRuntime, method: PassThroughList, onBehalfOf: OnBehalfOf): Promise<boolean> {
    const info = await upstream.client.describe(onBehalfOf).catch(() => undefined);
    return Boolean(info?.capabilities[CAPABILITY_OF[method]]);
  }

  /**
   * `read` of every upstream that is not down, in config order; the failures are left out (each logged
   * when it starts and when it ends), and so is one found lost while it is read. All failing is an error:
   * the first upstream's. One that is down is not read, even while a reconnection attempt runs: that
   * attempt may last its whole handshake bound, and the others' answer does not wait for it.
   */
  private async reachable<T>(
    read: (u: UpstreamRuntime) => Promise<T>,
    method: ListMethod,
    requestId: string | undefined,
  ): Promise<{ upstream: UpstreamRuntime; value: T }[]> {
    const settled = await Promise.all(
      this.upstreams.map(async (upstream) => {
        const health = upstream.client.health();
        if (health.state === 'down')
          return {
            upstream,
            error: new GatewayError('upstream_unavailable', health.reason ?? `upstream ${upstream.client.name} is down`, { upstream: upstream.client.name }),
          };
        try {
          return { upstream, value: await this.untilLost(upstream, read(upstream)) };
        } catch (error) {
          return { upstream, error: error as Error };
        }
      }),
    );
    if (method === 'tools/list') {
      for (const s of settled) {
        const error = 'error' in s ? s.error : undefined;
        // A credential one upstream refuses says nothing about that upstream's health.
        if (!(error instanceof GatewayError && error.kind === 'unauthorized')) this.noteExclusion(s.upstream.client.name, error?.message, requestId);
      }
    }
    const ok = settled.filter((s): s is { upstream: UpstreamRuntime; value: Awaited<T> } => !('error' in s));
    if (ok.length === 0) {
      const first = settled[0] as { error: Error };
      throw first.error instanceof GatewayError ? first.error : new GatewayError('upstream_unavailable', `${method} is unavailable: every upstream failed`);
    }
    return ok;
  }

  /**
   * `read` of `upstream`, given up (rejected `upstream_unavailable`) when the upstream is found lost
   * meanwhile: a list request to an upstream that stopped answering waits for its timeoutMs, the health
   * probe tells sooner. The read itself runs on (it fills the cache, or fails alone).
   */
  private untilLost<T>(upstream: UpstreamRuntime, read: Promise<T>): Promise<T> {
    const name = upstream.client.name;
    let off: (() => void) | undefined;
    const lost = new Promise<never>((_, reject) => {
      off = upstream.client.onLost(() =>
        reject(new GatewayError('upstream_unavailable', upstream.client.health().reason ?? `upstream ${name} is down`, { upstream: name })),
      );
    });
    return Promise.race([read, lost]).finally(() => off?.());
  }

  /**
   * Whether exclusions are noted (logged, and remembered so that a return is): off while a reload prepares this
   * set beside the serving one (gateway.ts), whose refusal left "the other upstreams keep serving" in the log for
   * an upstream of a configuration that never served (operator try-out); on again once it serves.
   */
  noting = true;

  private noteExclusion(upstream: string, reason: string | undefined, requestId: string | undefined): void {
    if (!this.noting) return;
    const before = this.excluded.get(upstream);
    if (reason === undefined && before === undefined) return;
    // The request's child logger only for a line written: made per upstream and per merged read, it was
    // about 70 KB of garbage per search_tools call at ten upstreams (bench:search-e2e).
    const log = (): Logger => requestLog(this.log, requestId);
    if (reason !== undefined && before === undefined) {
      this.excluded.set(upstream, reason);
      log().warn({ upstream, reason }, 'upstream left out of the merged catalogue; the other upstreams keep serving');
    } else if (reason === undefined && before !== undefined) {
      this.excluded.delete(upstream);
      log().info({ upstream }, 'upstream back in the merged catalogue');
    }
  }
}
