import type { Tool } from '@modelcontextprotocol/client';
import type { ApiKeyConfig, UpstreamConfig } from '../../config/types.ts';
import { nearestNames } from '../../search/index.ts';
import { contentHash, sizedContentHash } from '../checks/content-hash.ts';
import { paramHeaders } from '../checks/mcp-param-headers.ts';
import { findLimitBreach, formatPath } from '../checks/input-limits.ts';
import { hasInvisible } from '../checks/invisible-text.ts';
import { toolDefinitionProblem } from '../checks/tool-definition.ts';
import { sanitizedDefinition } from './description-lint.ts';
import { isAppOnlyTool, uiResourceUri } from './extensions.ts';

/**
 * One tool of the catalogue with its policy data computed once per catalogue version, so the
 * per-request work is a lookup: required scopes, category, read-only flag, output-validator key.
 */
export interface CatalogTool {
  /** Name exposed to callers: `upstreamName` with one upstream, else mapped (exposed-names.ts). */
  readonly name: string;
  /** The upstream that serves the tool (its `name` in config). */
  readonly upstream: string;
  /** The upstream's own name for the tool: what tools/call sends it. */
  readonly upstreamName: string;
  /**
   * The definition as advertised: invisible characters removed (description-lint.ts), the config's
   * outputSchema override applied, and `annotations.readOnlyHint` saying {@link readOnly} where
   * `readOnlyOverrides` changed it, so every client, the console and the CLI read the gateway's decision
   * from the listing.
   */
  readonly definition: Tool;
  /** The caller needs ANY of these; empty: visible to every caller. */
  readonly requiredScopes: readonly string[];
  /**
   * And ANY of these too, when set: the upstream's `scopes.required` over scopes the tool's own `_meta` declared. The
   * operator's floor, which an upstream's declaration cannot lower (a third-party server writing `requiredScopes: []`
   * made its tools public on an upstream the operator had restricted: try-out).
   */
  readonly floorScopes?: readonly string[];
  readonly category?: string;
  /** `readOnlyHint: true`, or the config override; anything else is state-changing. */
  readonly readOnly: boolean;
  /**
   * A read anchor of its upstream, listed up front on `/mcp/compact`: named in `upstreams[].anchors`, or
   * a model-visible MCP Apps tool (a `ui://` view) within `upstreams[].maxAnchors` ({@link CatalogBuilder}).
   */
  readonly anchor: boolean;
  /** Content hash of `definition.outputSchema`, the key of its compiled validator. */
  readonly outputSchemaKey?: string;
}

/** An immutable catalogue version: tools in upstream order, indexed by exposed name. */
export interface Catalog {
  /** Content hash of the policy-annotated tools: equal catalogues share one version (and caches). */
  readonly version: string;
  readonly tools: readonly CatalogTool[];
  readonly byName: ReadonlyMap<string, CatalogTool>;
  /** Union of all required scopes: a caller's scope set is reduced to these before it keys a cache. */
  readonly scopesInUse: ReadonlySet<string>;
  /**
   * About the bytes of its tools' definitions (their serialised length), what the catalogue cache's byte
   * bound counts (`cache.catalogBytes`); tools taken over from an earlier catalogue are counted in full.
   * Absent on a catalogue made elsewhere (merged, pinned views, tests).
   */
  readonly bytes?: number;
  /** Names the upstream listed twice (the first definition wins). */
  readonly duplicates: readonly string[];
  /**
   * Tools left out because their `x-mcp-header` declarations break SEP-2243's constraints: a client on
   * Streamable HTTP MUST exclude such a tool (spec 2026-07-28 basic/transports/streamable-http §Schema
   * Extension), and the gateway is one, to the upstream, and re-serves the list over HTTP. Also tools
   * whose name holds invisible characters (description-lint.ts): a name cannot be cleaned, it is routed on;
   * and tools whose definition nests deeper than {@link MAX_DEFINITION_DEPTH} levels.
   */
  readonly rejected?: readonly { name: string; reason: string }[];
  /**
   * Tools of upstreams that are down, from their last catalogue, under the names they keep: not listed,
   * not searched, but a direct call finds them and answers isError "upstream unavailable" instead of
   * "unknown tool" (catalog-merge.ts).
   */
  readonly withheld?: ReadonlyMap<string, CatalogTool>;
  /**
   * Per-tool config entries of the upstream naming no tool it listed (a typo, or a tool since renamed):
   * the config key (`scopeRules.write_fil`) and the nearest listed name. Such an entry applies to
   * nothing, so the tool it meant falls back to `_meta` or `scopes.required`: the catalogue cache warns.
   */
  readonly unmatchedRules?: readonly UnmatchedRule[];
  /**
   * Model-visible MCP Apps read tools past `upstreams[].maxAnchors`, in catalogue order: not listed up
   * front on `/mcp/compact` but found with search_tools and run through call_tool (the catalogue cache warns).
   */
  readonly anchorsOverBudget?: readonly string[];
  /**
   * Tools on hold (pin-guard.ts), by exposed name: their upstream changed a pinned definition, or listed
   * a new tool or one with lint findings that the configuration holds. A held tool whose pinned definition
   * the upstream still takes calls under is served with that definition (in `tools`, `listed`); any other
   * is only here. policy/tool-resolution.ts `resolveTool` finds both and reports the hold (`pinned`); a
   * call of either is refused, naming the change; nothing is forwarded. Absent: nothing is held.
   */
  readonly held?: ReadonlyMap<string, HeldTool>;
  /**
   * Names served before a reload renamed their tools (naming.ts, several upstreams): old name -> the
   * tool's exposed name now. Callable for `naming.aliasTtlMs`, listed and searched nowhere.
   */
  readonly aliases?: ReadonlyMap<string, string>;
}

/** A tool on hold ({@link Catalog.held}): what {@link PinStatus} says of it. */
export interface HeldTool {
  readonly held: true;
  /** The tool as the caller's access is judged (its pinned definition when `listed`, else the upstream's). */
  readonly tool: CatalogTool;
  /** Its pinned definition is served (listed, searchable); otherwise it is withheld. */
  readonly listed: boolean;
  /** `changed` since pinned; `new` (pinning.newTools: hold); `lint` findings (pinning.lint: hold); `unverified`: the pin store could not be read. */
  readonly reason: 'changed' | 'new' | 'lint' | 'unverified';
  /** What changed (catalog/pinning.ts describeChanges), or the lint rules found. */
  readonly changes: readonly string[];
  /** Digest of the definition waiting for approval. */
  readonly digest: string;
}

/**
 * What definition pinning (issue 30) holds of one tool: nothing, or a hold ({@link HeldTool}: why, what
 * changed, whether its pinned definition is served).
 */
export type PinStatus = { readonly held: false } | HeldTool;

/** Nothing held: every tool not in {@link Catalog.held}. */
export const NOT_HELD: PinStatus = Object.freeze({ held: false });

/** A per-tool config entry naming no listed tool ({@link Catalog.unmatchedRules}). */
export interface UnmatchedRule {
  key: string;
  nearest?: string;
}

/**
 * The most nested objects/arrays a tool definition may hold, the definition itself at depth 1 (so its
 * `inputSchema` at 2): a deeper one is left out of the catalogue ({@link Catalog.rejected}). Every pass over
 * a definition (the catalogue's and pins' content hashes, the pin guard's schema comparison, the
 * description lint, the compiled input and output validators) recurses once per level, and one schema of
 * a few thousand levels (about 100 KB) overflowed Node's stack in them, failing the whole upstream's
 * catalogue; Ajv's compilation overflows first, near 1,000 levels. Fixed rather than `limits.jsonDepth`
 * (which bounds request bodies, as low as 8): JSON Schemas of real tools nest a few dozen levels at most.
 */
export const MAX_DEFINITION_DEPTH = 256;

/** Depth alone: the definition's strings, arrays and objects are not bounded here (findLimitBreach). */
const DEFINITION_LIMITS = { jsonDepth: MAX_DEFINITION_DEPTH, stringLength: Infinity, arrayLength: Infinity, objectMembers: Infinity };

/** The per-tool maps of an upstream's config, by key (upstreams[] in config/types.ts). */
const PER_TOOL_MAPS = ['scopeRules', 'readOnlyOverrides', 'categories', 'outputSchemas', 'tools'] as const;

/** The entries of `upstream`'s per-tool config (maps, anchors, rate limits) that name none of `names`. */
export function unmatchedRules(upstream: UpstreamConfig, names: ReadonlySet<string>): UnmatchedRule[] {
  const keys: { key: string; name: string }[] = [
    ...PER_TOOL_MAPS.flatMap((map) => Object.keys(upstream[map] ?? {}).map((name) => ({ key: `${map}.${name}`, name }))),
    ...(upstream.anchors ?? []).map((name) => ({ key: `anchors: ${name}`, name })),
    ...Object.keys(upstream.rateLimits?.tools ?? {}).map((name) => ({ key: `rateLimits.tools.${name}`, name })),
  ];
  const listed = [...names];
  return keys
    .filter(({ name }) => !names.has(name))
    .map(({ key, name }) => {
      const [nearest] = nearestNames(name, listed, 1, () => []);
      return nearest ? { key, nearest } : { key };
    });
}

/** A scope of a configured API key that nothing needs ({@link idleKeyScopes}). */
export interface IdleKeyScope {
  /** `credentials.apiKeys[1] (demo-data)` */
  key: string;
  scope: string;
  nearest?: string;
}

/**
 * The scopes of `apiKeys` that grant nothing: no tool of `catalogs` requires them (scope rules, `_meta`
 * scopes, `scopes.required`) and no upstream's `scopes.required` (its resources and prompts) names them.
 * Most often a typo (`files:reed`), which leaves the key without what it was meant to have; each comes
 * with the nearest scope in use. Only meaningful with the catalogue of every upstream at hand.
 */
export function idleKeyScopes(apiKeys: readonly ApiKeyConfig[], catalogs: readonly Catalog[], upstreams: readonly UpstreamConfig[]): IdleKeyScope[] {
  const inUse = new Set([...catalogs.flatMap((c) => [...c.scopesInUse]), ...upstreams.flatMap((u) => u.scopes.required)]);
  const known = [...inUse].sort();
  return apiKeys.flatMap((apiKey, i) =>
    apiKey.scopes
      .filter((scope) => !inUse.has(scope))
      .map((scope) => {
        const [nearest] = nearestNames(scope, known, 1, () => []);
        return { key: `credentials.apiKeys[${i}] (${apiKey.name})`, scope, ...(nearest ? { nearest } : {}) };
      }),
  );
}

interface ToolMeta {
  category?: unknown;
  requiredScopes?: unknown;
}

/** What each catalogue tool was built from (the upstream's definition and config) and its digest: its
 *  share of the catalogue version. */
const origins = new WeakMap<CatalogTool, { source: Tool; upstream: UpstreamConfig; digest: string; bytes: number }>();

/** The definition a catalogue tool was built from, exactly as its upstream listed it (what pins cover). */
export function sourceOf(tool: CatalogTool): Tool {
  return origins.get(tool)?.source ?? tool.definition;
}

/**
 * Builds a catalogue version from an upstream's complete tools/list (all pages). Scope rules in config
 * win over the tool's `_meta[metaKey].requiredScopes`; a tool with neither needs the upstream's
 * `scopes.required` (public when that is empty), and one with a declaration needs that as well ({@link scopesOf}). A tool that is no spec `Tool` a client can read
 * (checks/tool-definition.ts: an empty name, an inputSchema whose type is not "object", a `required` that
 * is no list), with an invalid `x-mcp-header` declaration, with invisible characters in its name, or nested
 * deeper than {@link MAX_DEFINITION_DEPTH} levels, is left out (`rejected`), the upstream's other tools served.
 * Invisible characters in any other string of a definition are removed from what is served
 * (description-lint.ts `sanitizedDefinition`).
 *
 * `previous` (an earlier catalogue of the same upstream) makes a new version cheap: a tool whose
 * definition equals (as JSON, key order aside) the one `previous` was built from is taken over as it
 * is, the same object, so caches keyed by tool (the search index's documents) carry over too.
 *
 * The version is the content hash of the tools' digests, in order, each the content hash of the tool's
 * definition as served, required scopes, category, read-only flag and anchor flag: it changes iff any of
 * those do.
 */
export function buildCatalog(upstream: UpstreamConfig, tools: readonly Tool[], previous?: Catalog): Catalog {
  const builder = new CatalogBuilder(upstream, previous);
  builder.add(tools);
  return builder.finish();
}

/**
 * `buildCatalog` a page at a time, so that the work on one page can overlap the upstream's on the next:
 * `add` each page's tools in order, then `finish` once.
 *
 * Anchors: the upstream's `anchors` count first against `maxAnchors`; each model-visible MCP Apps read
 * tool (its `_meta.ui` names a `ui://` view, and its visibility includes the model) then becomes an
 * anchor in catalogue order while the budget lasts, so a host sees the tool and can render its view
 * without a search. The ones past it are {@link Catalog.anchorsOverBudget}.
 */
export class CatalogBuilder {
  private readonly byName = new Map<string, CatalogTool>();
  private readonly duplicates: string[] = [];
  private readonly rejected: { name: string; reason: string }[] = [];
  private readonly overBudget: string[] = [];
  private anchorsLeft: number;

  constructor(
    private readonly upstream: UpstreamConfig,
    private readonly previous?: Catalog,
  ) {
    this.anchorsLeft = upstream.maxAnchors - upstream.anchors.length;
  }

  add(tools: readonly Tool[]): void {
    const { byName, upstream } = this;
    for (const tool of tools) {
      // Not an object (`null` in the list): nothing of it can be read, its name included (review: the whole list failed).
      if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) {
        this.rejected.push({ name: String((tool as { name?: unknown } | null)?.name ?? ''), reason: 'the definition is not an object' });
        continue;
      }
      if (byName.has(tool.name)) {
        this.duplicates.push(tool.name);
        continue;
      }
      // Bounded however deep `tool` is: it recurses only where both are objects, and what `previous` was built from passed the depth check.
      const same = sameTool(this.previous?.byName.get(tool.name), upstream, tool);
      if (!same) {
        // Depth first: every other pass over the definition recurses once per level (findLimitBreach stops at the bound).
        const refused =
          tooDeep(tool) ??
          toolDefinitionProblem(tool) ??
          // A name is routed on, so it cannot be cleaned like the text: a hidden character there hides the tool.
          (hasInvisible(tool.name) ? 'the name holds invisible characters (description lint)' : invalidHeaders(tool));
        if (refused) {
          this.rejected.push({ name: tool.name, reason: refused });
          continue;
        }
      }
      // Decided after the checks, so a refused tool spends no anchor budget.
      const anchor = this.anchorOf(tool);
      byName.set(tool.name, same?.anchor === anchor ? same : catalogTool(upstream, tool, anchor));
    }
  }

  /** Whether `tool` is a read anchor: configured, or a model-visible UI read tool within the budget. */
  private anchorOf(tool: Tool): boolean {
    if (this.upstream.anchors.includes(tool.name)) return true;
    if (!uiResourceUri(tool) || isAppOnlyTool(tool) || !readOnlyOf(this.upstream, tool)) return false;
    if (this.anchorsLeft <= 0) {
      this.overBudget.push(tool.name);
      return false;
    }
    this.anchorsLeft -= 1;
    return true;
  }

  /** The catalogue of every tool added. */
  finish(): Catalog {
    const { byName, duplicates, rejected, overBudget } = this;
    const list = [...byName.values()];
    // The floors too: a caller's visibility key keeps only the scopes in use, and two callers differing by a floor scope
    // alone shared one cached listing (review: one's list leaked to the other).
    const scopesInUse = new Set(list.flatMap((t) => [...t.requiredScopes, ...(t.floorScopes ?? [])]));
    const version = contentHash(list.map((t) => origins.get(t)!.digest));
    const bytes = list.reduce((n, t) => n + origins.get(t)!.bytes, 0);
    const unmatched = unmatchedRules(this.upstream, new Set(byName.keys()));
    return {
      version,
      tools: list,
      byName,
      scopesInUse,
      bytes,
      duplicates,
      ...(rejected.length ? { rejected } : {}),
      ...(unmatched.length ? { unmatchedRules: unmatched } : {}),
      ...(overBudget.length ? { anchorsOverBudget: overBudget } : {}),
    };
  }
}

/** `built` when it was built with `upstream` from a definition equal to `tool`. */
function sameTool(built: CatalogTool | undefined, upstream: UpstreamConfig, tool: Tool): CatalogTool | undefined {
  const origin = built && origins.get(built);
  return origin && origin.upstream === upstream && sameJson(origin.source, tool) ? built : undefined;
}

/** Why `tool` is refused for its nesting ({@link MAX_DEFINITION_DEPTH}), or undefined when it is within it. */
export function tooDeep(tool: Tool): string | undefined {
  const breach = findLimitBreach(tool, DEFINITION_LIMITS);
  return breach && `the definition nests deeper than ${MAX_DEFINITION_DEPTH} levels (at ${formatPath(breach.path)})`;
}

/** Why `tool`'s SEP-2243 `x-mcp-header` declarations are refused, or undefined when they are valid. */
function invalidHeaders(tool: Tool): string | undefined {
  const headers = paramHeaders(tool.inputSchema);
  return headers.valid ? undefined : headers.reason;
}

/**
 * The entry of a per-tool table of the configuration (readOnlyOverrides, scopeRules, ...) for an upstream's
 * tool name, own keys only: a tool named `constructor` or `toString` would otherwise read Object.prototype's
 * member as its rule (a truthy read-only override for a state-changing tool).
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** `readOnlyHint: true`, unless `readOnlyOverrides` says otherwise: the gateway's one read/write decision. */
function readOnlyOf(upstream: UpstreamConfig, tool: Tool): boolean {
  return ownEntry(upstream.readOnlyOverrides, tool.name) ?? tool.annotations?.readOnlyHint === true;
}

/** Whether two JSON values are equal: objects by their defined properties, whatever their order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const key of Object.keys(x)) {
    if (x[key] === undefined) continue;
    defined += 1;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
  }
  for (const key of Object.keys(y)) if (y[key] !== undefined) defined -= 1;
  return defined === 0;
}

/**
 * A tool's scopes from its own `_meta` declaration (`declared`, absent: none) under its upstream's `scopes.required`
 * (`floor`, empty: none): both must be met, one scope of each. Folded into one list where one implies the other
 * (every declared scope in the floor: the declaration; every floor scope declared, or a declaration of none: the floor).
 */
function scopesOf(declared: readonly string[] | undefined, floor: readonly string[]): { requiredScopes: readonly string[]; floorScopes?: readonly string[] } {
  if (declared === undefined || declared.length === 0) return { requiredScopes: declared === undefined || floor.length > 0 ? floor : declared };
  if (floor.length === 0 || declared.every((s) => floor.includes(s))) return { requiredScopes: declared };
  if (floor.every((s) => declared.includes(s))) return { requiredScopes: floor };
  return { requiredScopes: declared, floorScopes: floor };
}

function catalogTool(upstream: UpstreamConfig, source: Tool, anchor: boolean): CatalogTool {
  // What clients see never holds invisible characters (issue 30); pins and policy read the source.
  const tool = sanitizedDefinition(source);
  const meta = (tool._meta?.[upstream.metaKey] ?? {}) as ToolMeta;
  // A rule wins, then the tool's own _meta declaration, then the upstream's default; a declaration never lowers the
  // upstream's scopes.required, which it must meet as well (floorScopes: `[]` there is the floor alone).
  const metaScopes = Array.isArray(meta.requiredScopes) ? meta.requiredScopes.filter((s): s is string => typeof s === 'string') : undefined;
  const rule = ownEntry(upstream.scopeRules, tool.name);
  const { requiredScopes, floorScopes } =
    rule !== undefined ? { requiredScopes: rule, floorScopes: undefined } : scopesOf(metaScopes, upstream.scopes.required);
  const category = ownEntry(upstream.categories, tool.name) ?? (typeof meta.category === 'string' ? meta.category : undefined);
  const readOnly = readOnlyOf(upstream, tool);
  const outputSchema = ownEntry(upstream.outputSchemas, tool.name) ?? tool.outputSchema;
  let definition = outputSchema === tool.outputSchema ? tool : ({ ...tool, outputSchema } as Tool);
  // An override that changes the decision is served as the hint: a client never reads "write" for a tool call_tool runs.
  if (readOnly !== (tool.annotations?.readOnlyHint === true)) definition = { ...definition, annotations: { ...tool.annotations, readOnlyHint: readOnly } };
  const built: CatalogTool = {
    name: tool.name,
    upstream: upstream.name,
    upstreamName: tool.name,
    definition,
    requiredScopes: [...new Set(requiredScopes)].sort(),
    ...(floorScopes ? { floorScopes: [...new Set(floorScopes)].sort() } : {}),
    category,
    readOnly,
    anchor,
    outputSchemaKey: outputSchema ? contentHash(outputSchema) : undefined,
  };
  const { hash, length } = sizedContentHash([definition, built.requiredScopes, built.floorScopes ?? null, category ?? null, readOnly, anchor]);
  origins.set(built, { source, upstream, digest: hash, bytes: length });
  return built;
}
