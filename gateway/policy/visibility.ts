import type { UpstreamConfig } from '../../config/types.ts';
import type { Standing } from '../auth/authenticate.ts';
import type { Catalog, CatalogTool } from '../catalog/catalog.ts';

/**
 * Visibility: the one place that decides what a caller may see and reach: its access per upstream, the
 * scope rule for a tool (which tool-resolution.ts `resolveTool` applies for every path that asks about
 * a tool by name, and {@link visibleTools} for listings), and resources, prompts and completions.
 * Pure: functions of data (catalogue, standing, config), no HTTP, no SDK.
 */

/**
 * What a caller may reach of one upstream: everything (`all`), nothing (`none`), or what these scopes
 * permit. Derived from the caller's standing and the upstream's config by {@link accessFor}.
 */
export type UpstreamAccess = 'all' | 'none' | readonly string[];

/** A caller's access to every upstream, and the key all callers with the same access share. */
export interface Access {
  of(upstream: string): UpstreamAccess;
  /** Same key, same visible catalogue (for a given catalogue version): the cache key of listings. */
  readonly key: string;
  /** The standing it was derived from. */
  readonly standing: Standing;
}

/**
 * The caller's access, one rule for listing, search, call_tool, direct calls, reads, prompts and
 * near-name hints (issue 13):
 * - scopes from a source: those scopes, on every upstream;
 * - `unchecked` (no scope source configured): everything on an upstream that receives the caller's
 *   credential (it decides), nothing but public items on one that does not (the caller is anonymous to it);
 * - `unverified` (the lookup failed): on an upstream whose failure mode is `open`, the scopes of the
 *   credential's last good answer (`lastKnown`; none: nothing, and the edge refuses the request); nothing
 *   on a `closed` one (the edge answers 503 for requests that need it).
 * Pure: a function of data only.
 */
export function accessFor(standing: Standing, upstreams: readonly UpstreamConfig[]): Access {
  if (standing.kind === 'scopes') return new ScopesAccess(standing);
  const byUpstream = new Map<string, UpstreamAccess>();
  for (const upstream of upstreams) {
    const forwards = receivesCallerCredential(upstream);
    const lastKnown = standing.kind === 'unverified' ? standing.lastKnown?.scopes : undefined;
    const unverified = upstream.scopes.failureMode === 'open' ? (lastKnown ?? 'none') : 'none';
    byUpstream.set(upstream.name, standing.kind === 'unchecked' ? (forwards ? 'all' : []) : unverified);
  }
  const key = `u:${[...byUpstream].map(([name, access]) => `${name}=${typeof access === 'string' ? access : `[${[...access].sort().join(' ')}]`}`).join(',')}`;
  return { standing, of: (upstream) => byUpstream.get(upstream) ?? 'none', key };
}

/**
 * The access of a standing with scopes: the same scopes on every upstream. A class, not an object literal
 * with a getter: V8 builds such a literal on its slow path, measured on every request (twice per tools/call).
 */
class ScopesAccess implements Access {
  #key: string | undefined;

  constructor(readonly standing: Extract<Standing, { kind: 'scopes' }>) {}

  of(): UpstreamAccess {
    return this.standing.scopes;
  }

  /** Read only when a listing is built or looked up: a tools/call never pays for it. */
  get key(): string {
    return (this.#key ??= scopesKey(this.standing.scopes));
  }
}

/** The key of one scope list, per list: a caller's scopes come from its cached standing, the same array on each of its requests. */
const scopeKeys = new WeakMap<readonly string[], string>();

function scopesKey(scopes: readonly string[]): string {
  let key = scopeKeys.get(scopes);
  if (key === undefined) scopeKeys.set(scopes, (key = `s:${[...scopes].sort().join(' ')}`));
  return key;
}

/** Whether `access` permits something requiring ANY of `required` (`[]`: public). */
export function permits(access: UpstreamAccess, required: readonly string[]): boolean {
  if (access === 'all') return true;
  if (access === 'none') return false;
  return required.length === 0 || required.some((scope) => access.includes(scope));
}

/**
 * Whether a caller may see (and so call) a tool: its upstream's access permits the tool's required
 * scopes (any one suffices; a tool with none is public), and its floor scopes when it has them (catalog.ts). A tool that is not visible is answered
 * exactly as a tool that does not exist, on every path.
 */
export function isVisible(tool: CatalogTool, access: Access): boolean {
  const upstream = access.of(tool.upstream);
  return permits(upstream, tool.requiredScopes) && (tool.floorScopes === undefined || permits(upstream, tool.floorScopes));
}

/**
 * The operator's access (the console's catalogue and search pages): every tool of every upstream, as a
 * caller permitted everything sees it. Never a caller's: no request is served under it.
 */
export const OPERATOR_ACCESS: Access = Object.freeze({ of: () => 'all' as const, key: 'operator', standing: Object.freeze({ kind: 'unchecked' as const }) });

/**
 * What a direct tools/call does with a catalogue tool the caller cannot see (config
 * `policy.hiddenToolCalls`): `refuse` (the default) answers it exactly as an unknown tool, without
 * contacting the upstream; `forward` sends it anyway, for an upstream whose platform decides every call
 * itself and whose own refusal the caller should see.
 */
export type HiddenToolCalls = 'forward' | 'refuse';

/** The rule of one caller, per upstream (by configured name). */
export type HiddenToolCallsRule = (upstream: string) => HiddenToolCalls;

/** Whether an upstream receives the caller's credential (HTTP with `forwardCredentials`), so that it can decide a call itself. */
export function receivesCallerCredential(upstream: UpstreamConfig): boolean {
  return upstream.url !== undefined && upstream.forwardCredentials;
}

const REFUSE_HIDDEN: HiddenToolCallsRule = () => 'refuse';
/** The `forward` rule of each upstream list (a configuration's), made once. */
const FORWARD_RULES = new WeakMap<readonly UpstreamConfig[], HiddenToolCallsRule>();

/**
 * The rule that applies to one caller: `setting`, on an upstream that receives the caller's credential
 * only ({@link receivesCallerCredential}): one that does not (stdio, `forwardCredentials: false`) cannot
 * tell one caller from another, so forwarding would run a tool the caller's scopes forbid with nobody
 * checking (a try-out ran a state-changing tool so); and always `refuse` when only the gateway can judge the
 * caller (`gatewayJudges`): a caller with an OAuth token, whose grant is narrower than the platform credential
 * behind it while the platform sees only the credential (least privilege, issue 14), and a key of
 * `credentials.apiKeys`, which no upstream is sent (auth/credentials.ts `forwardedHeaders`).
 */
export function hiddenToolCallsFor(setting: HiddenToolCalls, gatewayJudges: boolean, upstreams: readonly UpstreamConfig[]): HiddenToolCallsRule {
  if (gatewayJudges || setting === 'refuse') return REFUSE_HIDDEN;
  let rule = FORWARD_RULES.get(upstreams);
  if (rule === undefined) {
    const deciding = new Set(upstreams.filter(receivesCallerCredential).map((u) => u.name));
    rule = (upstream) => (deciding.has(upstream) ? 'forward' : 'refuse');
    FORWARD_RULES.set(upstreams, rule);
  }
  return rule;
}

/**
 * Whether a caller may reach an upstream's resources, prompts and completions
 * (`upstreams[].scopes.required`, any one suffices; `[]`: public).
 */
export function mayReach(upstream: UpstreamConfig, access: Access): boolean {
  return permits(access.of(upstream.name), upstream.scopes.required);
}

/**
 * The caller's visible catalogue: the tools of `catalog` the caller may see, in catalogue order.
 * Scope rules from config are already folded into each tool's `requiredScopes` (see buildCatalog),
 * so the answer depends on the catalogue version and the caller's access only.
 */
export function visibleTools(catalog: Catalog, access: Access): readonly CatalogTool[] {
  return catalog.tools.filter((tool) => isVisible(tool, access));
}

/**
 * The key of a caller's visible catalogue: the catalogue version plus the caller's access, scopes
 * reduced to those the catalogue uses, so every credential with the same effective scopes shares one entry.
 */
export function visibilityKey(catalog: Catalog, access: Access): string {
  if (access.standing.kind !== 'scopes') return `${catalog.version}|${access.key}`;
  return `${catalog.version}|s:${access.standing.scopes
    .filter((s) => catalog.scopesInUse.has(s))
    .sort()
    .join(' ')}`;
}
