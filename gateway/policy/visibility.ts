import type { Catalog, CatalogTool } from '../catalog/catalog.ts';

/**
 * Visibility: the one place that decides which catalogue tools a caller may see, for tools/list,
 * search_tools, call_tool, direct calls and the nearest-name hints of an unknown tool. Pure: functions
 * of data (catalogue, scopes, settings), no HTTP, no SDK.
 */

/** The caller's scopes, or `unknown` when the lookup failed (then nothing is hidden: fail-open). */
export type CallerScopes = readonly string[] | 'unknown';

/**
 * Whether a caller may see a tool: it holds ANY of the tool's required scopes; a tool with no
 * requirement is visible to all; unknown scopes see everything. Pure: a function of data only.
 */
export function isVisible(tool: CatalogTool, scopes: CallerScopes): boolean {
  if (scopes === 'unknown' || tool.requiredScopes.length === 0) return true;
  return tool.requiredScopes.some((scope) => scopes.includes(scope));
}

/**
 * The caller's visible catalogue: the tools of `catalog` the caller may see, in catalogue order.
 * Scope rules from config are already folded into each tool's `requiredScopes` (see buildCatalog),
 * so the answer depends on the catalogue version and the caller's scopes only. A denied tool is
 * simply absent: callers cannot tell it from a tool that does not exist.
 */
export function visibleTools(catalog: Catalog, scopes: CallerScopes): readonly CatalogTool[] {
  return scopes === 'unknown' ? catalog.tools : catalog.tools.filter((tool) => isVisible(tool, scopes));
}

/** A catalogue tool by exposed name when the caller may see it, else undefined (missing and denied alike). */
export function visibleToolNamed(catalog: Catalog, scopes: CallerScopes, name: string): CatalogTool | undefined {
  const tool = catalog.byName.get(name);
  return tool && isVisible(tool, scopes) ? tool : undefined;
}

/**
 * What a direct tools/call does with a catalogue tool the caller cannot see (config
 * `policy.hiddenToolCalls`): `forward` sends it to the upstream, whose platform decides for this
 * credential (no scope lookup on the direct path); `refuse` answers it as an unknown tool, exactly
 * like a missing one, without contacting the upstream.
 */
export type HiddenToolCalls = 'forward' | 'refuse';

/**
 * The rule that applies to one caller: `setting`, except for a caller with an OAuth token (`oauthGrant`),
 * always `refuse`: the token's grant is narrower than the platform credential behind it, and the
 * platform sees only the credential, so only the gateway can keep the caller to the grant (least
 * privilege, issue 14).
 */
export function hiddenToolCallsFor(setting: HiddenToolCalls, oauthGrant: boolean): HiddenToolCalls {
  return oauthGrant ? 'refuse' : setting;
}

/** Whether a direct call of `tool` must consult the caller's scopes first under `setting`. */
export function directCallNeedsScopes(setting: HiddenToolCalls): boolean {
  return setting === 'refuse';
}

/**
 * Whether a direct tools/call of `tool` goes to the upstream: always under `forward`; under `refuse`
 * only when the caller may see it ({@link isVisible}).
 */
export function directCallAllowed(tool: CatalogTool, scopes: CallerScopes, setting: HiddenToolCalls): boolean {
  return setting === 'forward' || isVisible(tool, scopes);
}

/**
 * The key of a caller's visible catalogue: the catalogue version plus the caller's scopes reduced to
 * those the catalogue uses, so every credential with the same effective scopes shares one entry.
 */
export function visibilityKey(catalog: Catalog, scopes: CallerScopes): string {
  if (scopes === 'unknown') return `${catalog.version}|*`;
  return `${catalog.version}|${scopes.filter((s) => catalog.scopesInUse.has(s)).sort().join(' ')}`;
}
