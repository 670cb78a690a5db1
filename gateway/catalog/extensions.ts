import { TASKS_EXTENSION } from '../upstream/types.ts';

/**
 * Protocol extensions across upstreams (`capabilities.extensions`, spec 2026-07-28 changelog "Minor
 * changes" 1; docs/extensions): what the gateway advertises is what its upstreams declared, merged, minus
 * the extensions whose methods the gateway does not route. And the MCP Apps extension's one rule that a
 * gateway must apply itself: app-only tools never reach a model through a surface the gateway drives.
 * Pure.
 */

/** A JSON object (an extension's settings). */
export type JsonObject = { [key: string]: unknown };

/** MCP Apps (SEP-1865): `ui://` resources rendered by the host, tools linked to them by `_meta.ui`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/**
 * Extensions that define methods of their own, which the merge leaves out: advertising them for any
 * upstream would promise what the gateway may not route. The tasks extension is advertised by the tasks
 * relay's own rule instead (to 2026-07-28 callers, when a 2026-07-28 upstream declares it: mcp/server.ts
 * capabilitiesFor, surfaces/tasks.ts). Everything else (extensions that annotate core requests and
 * results, as MCP Apps does with `_meta.ui` and `ui://` resources) is relayed by the core methods and
 * advertised.
 */
export const UNROUTED_EXTENSIONS: ReadonlySet<string> = new Set([TASKS_EXTENSION]);

/** One upstream's declared extensions, in config order. */
export interface DeclaredExtensions {
  upstream: string;
  extensions: Record<string, unknown> | undefined;
}

/** Two upstreams gave one setting different scalar values: the first (config order) is advertised. */
export interface ExtensionConflict {
  extension: string;
  path: string;
  kept: string;
  dropped: string;
}

export interface MergedExtensions {
  /** Extension id -> merged settings; empty when no upstream declared any. */
  extensions: Record<string, JsonObject>;
  conflicts: ExtensionConflict[];
}

/**
 * Merges the upstreams' `capabilities.extensions`: an extension any upstream declares is advertised
 * (unless in `unrouted`), its settings combined so that a client may rely on what EVERY declaring
 * upstream supports being listed: objects merge key by key, arrays are unioned (first appearance order,
 * equal JSON values once, e.g. MCP Apps `mimeTypes`), equal scalars stay, and different scalars keep the
 * first upstream's value (recorded in `conflicts`, for the caller to log). A settings value that is not
 * an object is treated as `{}` (the spec types it as an object).
 */
export function mergeExtensions(declared: readonly DeclaredExtensions[], unrouted: ReadonlySet<string> = UNROUTED_EXTENSIONS): MergedExtensions {
  const extensions: Record<string, JsonObject> = {};
  const owners: Record<string, string> = {};
  const conflicts: ExtensionConflict[] = [];
  for (const { upstream, extensions: theirs } of declared) {
    if (!isObject(theirs)) continue;
    for (const [id, settings] of Object.entries(theirs)) {
      if (unrouted.has(id)) continue;
      const incoming = isObject(settings) ? settings : {};
      if (!(id in extensions)) {
        extensions[id] = structuredClone(incoming);
        owners[id] = upstream;
        continue;
      }
      extensions[id] = mergeValue(extensions[id], incoming, '', (path) =>
        conflicts.push({ extension: id, path: path || '(root)', kept: owners[id]!, dropped: upstream }),
      ) as JsonObject;
    }
  }
  return { extensions, conflicts };
}

function mergeValue(base: unknown, overlay: unknown, path: string, conflict: (path: string) => void): unknown {
  if (isObject(base) && isObject(overlay)) {
    const out: JsonObject = { ...base };
    for (const [key, value] of Object.entries(overlay))
      out[key] = key in base ? mergeValue(base[key], value, path ? `${path}.${key}` : key, conflict) : structuredClone(value);
    return out;
  }
  if (Array.isArray(base) && Array.isArray(overlay)) {
    const seen = new Set(base.map((v) => JSON.stringify(v)));
    return [...base, ...overlay.filter((v) => !seen.has(JSON.stringify(v)) && seen.add(JSON.stringify(v)))];
  }
  if (JSON.stringify(base) !== JSON.stringify(overlay)) conflict(path);
  return base;
}

/** The audiences of a tool under MCP Apps: `_meta.ui.visibility`, `["model", "app"]` when absent. */
export function toolVisibility(definition: { _meta?: Record<string, unknown> }): readonly string[] | undefined {
  const ui = definition._meta?.ui;
  if (!isObject(ui)) return undefined;
  const visibility = ui.visibility;
  if (typeof visibility === 'string') return [visibility];
  return Array.isArray(visibility) ? visibility.filter((v): v is string => typeof v === 'string') : undefined;
}

/**
 * Whether a tool is for the app alone (`_meta.ui.visibility` present and without `"model"`, e.g.
 * `["app"]`). MCP Apps leaves hiding these to the host, which works for tools/list; but a search result
 * or a generic dispatcher (`search_tools`, `call_tool`) reaches the model as ordinary tool output, and
 * nothing downstream can filter that, so those surfaces apply the declaration themselves. A tool
 * without a visibility is visible to both (the field marks the exception).
 */
export function isAppOnlyTool(definition: { _meta?: Record<string, unknown> }): boolean {
  const visibility = toolVisibility(definition);
  return visibility !== undefined && !visibility.includes('model');
}

/** The `ui://` resource a tool links to (`_meta.ui.resourceUri`, or the flat `_meta["ui/resourceUri"]` of early drafts). */
export function uiResourceUri(definition: { _meta?: Record<string, unknown> }): string | undefined {
  const ui = definition._meta?.ui;
  const uri = isObject(ui) ? ui.resourceUri : definition._meta?.['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : undefined;
}

/**
 * A tool's MCP Apps `_meta.ui` as a host reads it (its `resourceUri` from either spelling, the rest of
 * `_meta.ui` as the upstream wrote it), or undefined for a tool without a `ui://` view. A generic
 * dispatcher's answers carry it (search_tools matches, call_tool results), because the host only sees
 * the dispatcher's own definition, which links no view.
 */
export function uiMeta(definition: { _meta?: Record<string, unknown> }): JsonObject | undefined {
  const resourceUri = uiResourceUri(definition);
  if (!resourceUri) return undefined;
  const ui = definition._meta?.ui;
  return { ...(isObject(ui) ? ui : {}), resourceUri };
}

/**
 * `ui://` URI -> the upstream whose tools link to it, for routing a `resources/read` of a UI resource
 * an upstream references but does not list. A URI linked by tools of two upstreams has no owner.
 */
export function uiResourceOwners(tools: readonly { upstream: string; definition: { _meta?: Record<string, unknown> } }[]): Map<string, string> {
  const owners = new Map<string, string | null>();
  for (const tool of tools) {
    const uri = uiResourceUri(tool.definition);
    if (!uri) continue;
    const known = owners.get(uri);
    owners.set(uri, known === undefined || known === tool.upstream ? tool.upstream : null);
  }
  return new Map([...owners].filter((entry): entry is [string, string] => entry[1] !== null));
}

/**
 * The upstream a caller's read of the `ui://` view `uri` goes to: the one whose tools (of `tools`, the whole
 * catalogue's) link it, when `usable` (the tools the caller may use; absent: any caller) holds one of them.
 * Undefined when no tool links it, two upstreams' tools do, or the caller may use none of them. The one rule
 * for reading a view (catalog/upstream-set.ts) and for listing it (policy/caller.ts).
 */
export function viewOwner(uri: string, tools: readonly ToolOf[], usable?: readonly ToolOf[]): string | undefined {
  const owner = uiResourceOwners(tools).get(uri);
  if (!owner || !usable) return owner;
  return usable.some((tool) => tool.upstream === owner && uiResourceUri(tool.definition) === uri) ? owner : undefined;
}

type ToolOf = { upstream: string; definition: { _meta?: Record<string, unknown> } };

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
