import type { Tool } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../config/types.ts';
import { contentHash } from './content-hash.ts';
import { paramHeaders } from './mcp-param-headers.ts';

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
  /** The definition as advertised (config outputSchema override applied). */
  readonly definition: Tool;
  /** The caller needs ANY of these; empty: visible to every caller. */
  readonly requiredScopes: readonly string[];
  readonly category?: string;
  /** `readOnlyHint: true`, or the config override; anything else is state-changing. */
  readonly readOnly: boolean;
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
  /** Names the upstream listed twice (the first definition wins). */
  readonly duplicates: readonly string[];
  /**
   * Tools left out because their `x-mcp-header` declarations break SEP-2243's constraints: a client on
   * Streamable HTTP MUST exclude such a tool (spec 2026-07-28 basic/transports/streamable-http §Schema
   * Extension), and the gateway is one, to the upstream, and re-serves the list over HTTP.
   */
  readonly rejected?: readonly { name: string; reason: string }[];
  /**
   * Tools of upstreams that are down, from their last catalogue, under the names they keep: not listed,
   * not searched, but a direct call finds them and answers isError "upstream unavailable" instead of
   * "unknown tool" (catalog-merge.ts).
   */
  readonly withheld?: ReadonlyMap<string, CatalogTool>;
}

interface ToolMeta {
  category?: unknown;
  requiredScopes?: unknown;
}

/**
 * Builds a catalogue version from an upstream's complete tools/list (all pages). Scope rules in config
 * win over the tool's `_meta[metaKey].requiredScopes`; a tool with neither is public. A tool with an
 * invalid `x-mcp-header` declaration is left out (`rejected`).
 */
export function buildCatalog(upstream: UpstreamConfig, tools: readonly Tool[]): Catalog {
  const byName = new Map<string, CatalogTool>();
  const duplicates: string[] = [];
  const rejected: { name: string; reason: string }[] = [];
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      duplicates.push(tool.name);
      continue;
    }
    const headers = paramHeaders(tool.inputSchema);
    if (!headers.valid) {
      rejected.push({ name: tool.name, reason: headers.reason });
      continue;
    }
    byName.set(tool.name, catalogTool(upstream, tool));
  }
  const list = [...byName.values()];
  const scopesInUse = new Set(list.flatMap((t) => t.requiredScopes));
  const version = contentHash(list.map((t) => [t.definition, t.requiredScopes, t.category ?? null, t.readOnly]));
  return { version, tools: list, byName, scopesInUse, duplicates, ...(rejected.length ? { rejected } : {}) };
}

function catalogTool(upstream: UpstreamConfig, tool: Tool): CatalogTool {
  const meta = (tool._meta?.[upstream.metaKey] ?? {}) as ToolMeta;
  const metaScopes = Array.isArray(meta.requiredScopes) ? meta.requiredScopes.filter((s): s is string => typeof s === 'string') : [];
  const requiredScopes = upstream.scopeRules[tool.name] ?? metaScopes;
  const category = upstream.categories[tool.name] ?? (typeof meta.category === 'string' ? meta.category : undefined);
  const readOnly = upstream.readOnlyOverrides[tool.name] ?? tool.annotations?.readOnlyHint === true;
  const outputSchema = upstream.outputSchemas[tool.name] ?? tool.outputSchema;
  const definition = outputSchema === tool.outputSchema ? tool : ({ ...tool, outputSchema } as Tool);
  return {
    name: tool.name,
    upstream: upstream.name,
    upstreamName: tool.name,
    definition,
    requiredScopes: [...new Set(requiredScopes)].sort(),
    category,
    readOnly,
    outputSchemaKey: outputSchema ? contentHash(outputSchema) : undefined,
  };
}
