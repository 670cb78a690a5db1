import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  buildToolIndexAsync,
  metaKeywords,
  type DenseVectors,
  type EmbeddingFailure,
  type EmbeddingSearch,
  type SearchableTool,
  type SearchOptions,
  type SearchPage,
  type ToolIndex,
} from '../../search/index.ts';
import { nearestByName } from './name-hints.ts';
import type { Catalog, CatalogTool } from './catalog.ts';
import { throttled, type Logger } from '../obs/log.ts';
import type { ToolSearchOverrides, UpstreamConfig } from '../../config/types.ts';
import { DeadlineExceeded, withinDeadline } from '../store/deadline.ts';

/** Tools the cached indexes of callers' findable tools hold together (see `SearchIndexCache.findableIndex`). */
const FINDABLE_INDEX_TOOLS = 50_000;
/**
 * Findable tools from which an unknown name's nearest names come from the names alone, not an index of
 * them (see `SearchIndexCache.nearestFindableNames`): an index of 1,000 tools takes about 50 ms to build.
 */
const NAME_ONLY_TOOLS = 1_000;

/**
 * How long a search waits for a new catalogue version's index before it is answered from the latest one
 * built (ms): a catalogue of a few hundred tools builds within it, so a tool an upstream just added is
 * found by the next search (a try-out searched for one 10 s after tools/list showed it and missed it);
 * a large catalogue's build (0.1-1 s at 10,000 tools) still costs a search no more than this, once.
 */
const FRESH_BUILD_WAIT_MS = 25;

/** After the embeddings endpoint failed to embed a catalogue version, how long until a search asks again. */
const EMBED_RETRY_MS = 30_000;

/** The external arm's state for one index: its tools in index order, their vectors once embedded. */
type ArmState = { tools: SearchableTool[]; vectors?: DenseVectors; pending?: Promise<void>; triedAt: number };

/**
 * One search index per catalogue version, shared by every caller: scope filtering is a `filter` on
 * the shared index (search/index.ts), never a rebuild per caller. Concurrent misses share one build,
 * which yields to the event loop every few ms so a large catalogue does not stall other requests.
 *
 * Each build takes over the per-tool work of the latest index for the tools a new catalogue version
 * keeps unchanged (search/index.ts `BuildOptions.previous`), so a new version costs about what its
 * changed tools do, plus assembling the index (about 0.1 s at 10,000 tools; a catalogue read from
 * scratch takes about 0.5 s).
 *
 * The build is off the request path: while a new version's index builds, searches wait for it at
 * most {@link FRESH_BUILD_WAIT_MS} and are then answered from the latest index already built (only the very
 * first build, with nothing to answer from, is waited for whole). That is a choice of latency over freshness
 * for the rest of one build, and it is safe:
 * the caller's filter is evaluated on the current catalogue, so a stale index never returns a tool the
 * caller may not see now; it only misses tools the new version added until the build ends. A failed build is logged and not cached (the next
 * search tries again); with an earlier index at hand, searches fall back to it meanwhile. A build that could not gloss
 * a catalogue's new Chinese text (search/analysis/gloss.ts) is built without those glosses, and says so in
 * a warning (at most one a minute).
 *
 * With an external embeddings arm (config `search.embeddings`), each index's tool vectors are asked for
 * in the background once it is built (the arm's cache keeps vectors by content hash, so a new version
 * embeds only its changed tools); until they are at hand, and whenever the endpoint fails, `searchPage`
 * answers from the index alone (its in-process arm). Failures never reach the caller: the arm counts
 * them, the caller of the constructor is told (metrics), and one warning is logged when the endpoint
 * starts failing (one info line when it answers again), not one per search.
 */
export class SearchIndexCache {
  // A few versions: the current one, and the one before it while callers move over.
  private readonly entries = new LRUCache<string, { built: Promise<ToolIndex>; index?: ToolIndex }>({ max: 4 });
  /** The index whose build started last among those finished, and that build's number. */
  private latest?: { index: ToolIndex; build: number };
  private builds = 0;
  /** Each catalogue tool as the index takes it, made once: a tool that a new catalogue version takes
   *  over unchanged (the same object, see buildCatalog) is not read again by the next build. */
  private readonly searchables = new WeakMap<CatalogTool, SearchableTool>();

  /** Indexes of some tools of a catalogue version (a caller's findable tools), by version and names; sized in tools. */
  private readonly subsets = new LRUCache<string, Promise<ToolIndex>>({ maxSize: FINDABLE_INDEX_TOOLS });

  private readonly overrides: ReadonlyMap<string, Record<string, ToolSearchOverrides>>;
  private readonly arm = new WeakMap<ToolIndex, ArmState>();
  private armFailing = false;
  /** A failed glossing repeats with every build while its cause lasts: one warning a minute. */
  private readonly glossFailed = throttled(60_000);

  /**
   * @param upstreams - the configured upstreams, for their `tools.<name>` search text
   * @param embeddings - the external semantic arm, if configured; its `onFailure` MUST call `embeddingFailed`
   * @param buildIndex - how an index is built (search/index.ts; a test holds a build back with its own)
   */
  constructor(
    private readonly log: Logger,
    upstreams: readonly Pick<UpstreamConfig, 'name' | 'tools' | 'metaKey'>[] = [],
    private readonly embeddings?: EmbeddingSearch,
    private readonly buildIndex: typeof buildToolIndexAsync = buildToolIndexAsync,
  ) {
    this.overrides = new Map(upstreams.map((u) => [u.name, u.tools ?? {}]));
  }

  /**
   * `index.searchPage`, with the external arm's vectors when configured and at hand for `index`; the index
   * alone otherwise (and whenever the endpoint fails). Throws only what `index.searchPage` throws.
   */
  async searchPage(index: ToolIndex, query: string, opts: SearchOptions): Promise<SearchPage> {
    const state = this.embeddings && this.arm.get(index);
    if (!this.embeddings || !state) return index.searchPage(query, opts);
    if (!state.vectors) {
      if (!state.pending && performance.now() - state.triedAt >= EMBED_RETRY_MS) this.embed(state);
      return index.searchPage(query, opts);
    }
    // A blank query is the index's error to give, without asking the endpoint.
    if (typeof query !== 'string' || query.trim() === '') return index.searchPage(query, opts);
    const vector = await this.embeddings.queryVector(query, state.vectors);
    if (vector === undefined) return index.searchPage(query, opts);
    this.embeddingAnswered();
    return index.searchPage(query, { ...opts, vectors: { tools: state.vectors, query: vector } });
  }

  /** Told by the arm of each failure: logs the first of a run (the reason only, never the key or texts). */
  embeddingFailed(failure: EmbeddingFailure): void {
    if (this.armFailing) return;
    this.armFailing = true;
    this.log.warn({ stage: failure.stage, reason: failure.reason }, 'embeddings endpoint failed: search_tools answers without it until it recovers');
  }

  /** A build could not gloss new Chinese text (search/analysis/gloss.ts): the index is built without those glosses. */
  private readonly onGlossFailure = (error: unknown): void =>
    this.glossFailed((notLogged) =>
      this.log.warn(
        { err: error, ...(notLogged ? { notLogged } : {}) },
        'Chinese glosses not made: search_tools indexes that text without its English meaning',
      ),
    );

  private embeddingAnswered(): void {
    if (!this.armFailing) return;
    this.armFailing = false;
    this.log.info('embeddings endpoint answers again: search_tools uses it');
  }

  private embed(state: ArmState): void {
    state.triedAt = performance.now();
    state.pending = this.embeddings!.vectorsFor(state.tools).then(
      (vectors) => {
        state.pending = undefined;
        if (vectors) {
          state.vectors = vectors;
          this.embeddingAnswered();
        }
      },
      () => {
        state.pending = undefined;
      },
    );
  }

  /** The index of `catalog` (tools under their exposed names, with category and upstream), or while that
   *  builds, the latest index built, at once (see the class docstring). */
  get(catalog: Catalog): Promise<ToolIndex> {
    let entry = this.entries.get(catalog.version);
    if (entry?.index) return Promise.resolve(entry.index);
    if (!entry) {
      const built = this.build(catalog, (this.builds += 1));
      const created = { built };
      entry = created;
      this.entries.set(catalog.version, created);
      built.then(
        (index) => Object.assign(created, { index }),
        () => this.entries.delete(catalog.version),
      );
    }
    if (!this.latest) return entry.built;
    const latest = this.latest.index;
    return settledWithin(entry.built, FRESH_BUILD_WAIT_MS).then(
      (index) => index ?? latest,
      () => latest,
    );
  }

  /**
   * An index of exactly `tools` of `catalog` (the tools a caller's model may find), for an unknown name's
   * nearest names. The shared index ranks with the whole catalogue's statistics (term rarity, which words
   * are informative, the semantic arm), so its suggestions for a hidden name and for a name that exists
   * nowhere could differ, telling a hidden tool from a missing one; this index's answers depend on `tools`
   * alone. `tools` all of the catalogue: the shared index; else built once per set of names (taking over
   * the shared index's per-tool work) and kept while the cache's tool budget allows. A failed build is not kept.
   */
  findableIndex(catalog: Catalog, tools: readonly CatalogTool[]): Promise<ToolIndex> {
    if (tools.length === catalog.tools.length) return this.get(catalog);
    const names = createHash('sha256');
    for (const tool of tools) names.update(tool.name).update('\0');
    const key = `${catalog.version}|${names.digest('hex')}`;
    let built = this.subsets.get(key);
    if (built === undefined) {
      const previous = this.entries.get(catalog.version)?.index ?? this.latest?.index;
      built = this.buildIndex(
        tools.map((tool) => this.searchable(tool)),
        {},
        { ...(previous ? { previous } : {}), onGlossFailure: this.onGlossFailure },
      );
      built.catch(() => this.subsets.delete(key));
      this.subsets.set(key, built, { size: Math.max(1, tools.length) });
    }
    return built;
  }

  /**
   * Up to `limit` names of `tools` (the tools a caller's model may find) nearest to `name`, for an unknown
   * tool's refusal: asked of {@link findableIndex} below {@link NAME_ONLY_TOOLS} tools; from the names
   * alone at or above it (name-hints.ts: misspellings, then shared words), where building that index
   * for each new scope set cost about half a second of CPU at 10,000 tools. Either way a function of
   * `tools` and `name` only: a hidden tool is never named and never changes the answer.
   */
  async nearestFindableNames(catalog: Catalog, tools: readonly CatalogTool[], name: string, limit: number): Promise<string[]> {
    if (tools.length >= NAME_ONLY_TOOLS)
      return nearestByName(
        name,
        tools.map((tool) => tool.name),
        limit,
      );
    const named = (await this.findableIndex(catalog, tools)).nearestNames(name, { limit });
    // While a new catalogue version's index builds, the latest one built answers: a name it holds that the
    // catalogue no longer does is left out (a renamed tool's old name was suggested for itself: try-out),
    // and the names alone fill the gap (the new name is found by its spelling).
    const current = new Set(tools.map((tool) => tool.name));
    const kept = named.filter((n) => current.has(n));
    if (kept.length === named.length) return named;
    const byName = nearestByName(name, [...current], limit).filter((n) => !kept.includes(n));
    return [...kept, ...byName].slice(0, limit);
  }

  private async build(catalog: Catalog, build: number): Promise<ToolIndex> {
    const started = performance.now();
    try {
      const tools = catalog.tools.map((tool) => this.searchable(tool));
      const index = await this.buildIndex(tools, {}, { previous: this.latest?.index, onGlossFailure: this.onGlossFailure });
      if (this.embeddings) {
        const state: ArmState = { tools, triedAt: 0 };
        this.arm.set(index, state);
        this.embed(state);
      }
      if (!this.latest || this.latest.build < build) this.latest = { index, build };
      this.log.info({ version: catalog.version.slice(0, 12), tools: index.size, ms: Math.round(performance.now() - started) }, 'search index built');
      return index;
    } catch (error) {
      this.log.error({ version: catalog.version.slice(0, 12), err: error }, 'search index build failed');
      throw error;
    }
  }

  /** A catalogue tool as this cache's indexes take it (made once per tool); the console explains matches with it. */
  searchable(tool: CatalogTool): SearchableTool {
    let made = this.searchables.get(tool);
    if (made === undefined) this.searchables.set(tool, (made = searchable(tool, this.overrides.get(tool.upstream)?.[tool.upstreamName])));
    return made;
  }
}

/**
 * A catalogue tool as the index takes it: under its exposed name, with its own name at the upstream and
 * the upstream as data (search never splits names apart); titled as clients display it: `title`, else
 * `annotations.title` (spec 2026-07-28 schema, `Tool.annotations`: "Display name precedence order is:
 * title, annotations.title, then name"); keywords from `_meta` and the config; `readOnly` (annotation or
 * config override) decides read or write for intent.
 */
function searchable(tool: CatalogTool, override: ToolSearchOverrides | undefined): SearchableTool {
  const { title, annotations, description, inputSchema, outputSchema, _meta } = tool.definition;
  const keywords = [...metaKeywords(_meta as Record<string, unknown> | undefined), ...(override?.keywords ?? [])];
  return {
    name: tool.name,
    upstreamName: tool.upstreamName,
    title: override?.title ?? title ?? annotations?.title,
    description: override?.description ?? description,
    inputSchema,
    ...(outputSchema !== undefined ? { outputSchema } : {}),
    category: tool.category,
    upstream: tool.upstream,
    // A tool that says nothing (no hints, no override) is neither: the gateway treats it as a write for
    // safety, but taking it as one here would teach intent that every tool writes.
    ...(tool.readOnly || typeof annotations?.readOnlyHint === 'boolean' || typeof annotations?.destructiveHint === 'boolean'
      ? { annotations: { readOnlyHint: tool.readOnly, destructiveHint: annotations?.destructiveHint } }
      : {}),
    ...(keywords.length > 0 ? { keywords } : {}),
  };
}

/** `promise`'s value if it settles within `ms`, else undefined (its rejection, if it rejects in time). */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return withinDeadline(promise, ms, () => new DeadlineExceeded('the build', ms)).catch((error: unknown) => {
    if (error instanceof DeadlineExceeded) return undefined;
    throw error;
  });
}
