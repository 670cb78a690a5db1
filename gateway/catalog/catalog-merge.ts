import type { Tool } from '@modelcontextprotocol/client';
import type { Catalog, CatalogTool, HeldTool } from './catalog.ts';
import { contentHash } from '../checks/content-hash.ts';
import { exposedNames, type NamingOptions, type UpstreamName } from './naming.ts';
import { withFields } from '../wire/objects.ts';

/**
 * The `_meta` key, on each tool (and prompt) the gateway renamed, that reports the mapping:
 * `{ upstream, name }`, the upstream's id in config and its own name for the tool.
 */
export const ORIGIN_META_KEY = 'ai.cpz.gateway/origin';

/** One upstream's catalogue, in config order. */
export interface CatalogPart {
  readonly upstream: string;
  readonly catalog: Catalog;
  /** The upstream is down: its tools keep their names but are withheld from the list (Catalog.withheld). */
  readonly down?: boolean;
}

/**
 * One catalogue over several upstreams: every tool under its exposed name (gateway/catalog/naming.ts),
 * routed by the `upstream` and `upstreamName` it keeps, the mapping reported in each definition's
 * `_meta[ORIGIN_META_KEY]`. Tools of two upstreams never overwrite each other. A part that is `down`
 * still takes part in naming (its tools keep their names, so nobody else's change) but its tools are
 * `withheld`. Held tools (Catalog.held) are named like the others and stay held under their exposed
 * names. `aliases` (old exposed name -> the upstream tool it named; a reload renamed it) become
 * {@link Catalog.aliases} for the names that now mean nothing else. Without prefixing (one upstream
 * configured) and without an alias that applies, the upstream's catalogue is returned as it is.
 * Pure: the result depends only on the parts, the naming and the aliases, and its `version` on their versions.
 */
export function mergeCatalogs(parts: readonly CatalogPart[], naming: NamingOptions, aliases?: ReadonlyMap<string, UpstreamName>): Catalog {
  if (!naming.prefixed && parts.length === 1 && !parts[0]!.down && !aliases?.size) return parts[0]!.catalog;
  // Held tools that are not listed take part in naming too: their names are reserved like any other.
  const entries = parts.flatMap((part) => [
    ...part.catalog.tools.map((tool) => ({ tool, down: part.down === true, heldOnly: false })),
    ...[...(part.catalog.held?.values() ?? [])].filter((h) => !h.listed).map((h) => ({ tool: h.tool, down: part.down === true, heldOnly: true })),
  ]);
  const names = exposedNames(
    entries.map(({ tool }) => ({ upstream: tool.upstream, name: tool.upstreamName })),
    naming,
  );
  const byName = new Map<string, CatalogTool>();
  const withheld = new Map<string, CatalogTool>();
  const exposedOf = new Map<string, CatalogTool>();
  const duplicates: string[] = [];
  entries.forEach(({ tool, down, heldOnly }, i) => {
    const exposed = naming.prefixed ? renamed(tool, names[i]!) : tool;
    exposedOf.set(originKey(tool), exposed);
    if (heldOnly) return;
    if (byName.has(exposed.name) || withheld.has(exposed.name)) duplicates.push(exposed.name);
    else (down ? withheld : byName).set(exposed.name, exposed);
  });
  const held = new Map<string, HeldTool>();
  for (const part of parts)
    for (const hold of part.catalog.held?.values() ?? []) {
      const tool = exposedOf.get(originKey(hold.tool))!;
      held.set(tool.name, { ...hold, tool });
    }
  const aliased = new Map<string, string>();
  for (const [old, origin] of aliases ?? []) {
    const tool = exposedOf.get(`${origin.upstream}\u0000${origin.name}`);
    if (tool && tool.name !== old && !byName.has(old) && !withheld.has(old) && !held.has(old)) aliased.set(old, tool.name);
  }
  // One upstream, unprefixed, and no alias that names anything now (a reload that renamed nothing): its own
  // catalogue, under its own version, as before the reload (a new version would rebuild every cache keyed by it).
  if (!naming.prefixed && parts.length === 1 && !parts[0]!.down && aliased.size === 0) return parts[0]!.catalog;
  const up = parts.filter((p) => !p.down);
  return {
    version: contentHash({
      separator: naming.separator,
      prefixed: naming.prefixed,
      parts: parts.map((p) => [p.upstream, p.catalog.version, p.down === true]),
      aliases: [...aliased],
    }),
    tools: [...byName.values()],
    byName,
    scopesInUse: new Set(up.flatMap((p) => [...p.catalog.scopesInUse])),
    duplicates: [...parts.flatMap((p) => p.catalog.duplicates.map((name) => `${p.upstream}: ${name}`)), ...duplicates],
    ...(withheld.size ? { withheld } : {}),
    ...(held.size ? { held } : {}),
    ...(aliased.size ? { aliases: aliased } : {}),
  };
}

/** A catalogue tool's identity whatever it is named: its upstream and its own name. */
function originKey(tool: CatalogTool): string {
  return `${tool.upstream}\u0000${tool.upstreamName}`;
}

/** Each upstream tool under the name it was last exposed with: merges that rename it alike hand out the
 *  same object, so caches keyed by tool (the search index's documents) carry over to the new version. */
const renames = new WeakMap<CatalogTool, CatalogTool>();

function renamed(tool: CatalogTool, name: string): CatalogTool {
  const last = renames.get(tool);
  if (last?.name === name) return last;
  // withFields, not spreads: a definition without `_meta` given one would get a hidden class of its own (wire/objects.ts).
  const definition: Tool = withFields(tool.definition, {
    name,
    _meta: withFields(tool.definition._meta ?? {}, { [ORIGIN_META_KEY]: { upstream: tool.upstream, name: tool.upstreamName } }),
  });
  const made = { ...tool, name, definition };
  renames.set(tool, made);
  return made;
}
