import type { Tool } from '@modelcontextprotocol/client';
import type { Catalog, CatalogTool } from './catalog.ts';
import { contentHash } from '../checks/content-hash.ts';
import { exposedNames, type NamingOptions } from './naming.ts';

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
 * `withheld`. Without prefixing (one upstream configured) the upstream's catalogue is returned as it is.
 * Pure: the result depends only on the parts and the naming, and its `version` on their versions.
 */
export function mergeCatalogs(parts: readonly CatalogPart[], naming: NamingOptions): Catalog {
  if (!naming.prefixed && parts.length === 1 && !parts[0]!.down) return parts[0]!.catalog;
  const entries = parts.flatMap((part) => part.catalog.tools.map((tool) => ({ tool, down: part.down === true })));
  const names = exposedNames(
    entries.map(({ tool }) => ({ upstream: tool.upstream, name: tool.upstreamName })),
    naming,
  );
  const byName = new Map<string, CatalogTool>();
  const withheld = new Map<string, CatalogTool>();
  const duplicates: string[] = [];
  entries.forEach(({ tool, down }, i) => {
    const exposed = naming.prefixed ? renamed(tool, names[i]!) : tool;
    if (byName.has(exposed.name) || withheld.has(exposed.name)) duplicates.push(exposed.name);
    else (down ? withheld : byName).set(exposed.name, exposed);
  });
  const up = parts.filter((p) => !p.down);
  return {
    version: contentHash({ separator: naming.separator, prefixed: naming.prefixed, parts: parts.map((p) => [p.upstream, p.catalog.version, p.down === true]) }),
    tools: [...byName.values()],
    byName,
    scopesInUse: new Set(up.flatMap((p) => [...p.catalog.scopesInUse])),
    duplicates: [...parts.flatMap((p) => p.catalog.duplicates.map((name) => `${p.upstream}: ${name}`)), ...duplicates],
    ...(withheld.size ? { withheld } : {}),
  };
}

/** Each upstream tool under the name it was last exposed with: merges that rename it alike hand out the
 *  same object, so caches keyed by tool (the search index's documents) carry over to the new version. */
const renames = new WeakMap<CatalogTool, CatalogTool>();

function renamed(tool: CatalogTool, name: string): CatalogTool {
  const last = renames.get(tool);
  if (last?.name === name) return last;
  const definition: Tool = {
    ...tool.definition,
    name,
    _meta: { ...tool.definition._meta, [ORIGIN_META_KEY]: { upstream: tool.upstream, name: tool.upstreamName } },
  };
  const made = { ...tool, name, definition };
  renames.set(tool, made);
  return made;
}
