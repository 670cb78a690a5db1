import { NOT_HELD, type Catalog, type CatalogTool, type PinStatus } from '../catalog/catalog.ts';
import { isAppOnlyTool } from '../catalog/extensions.ts';
import { isVisible, type Access, type HiddenToolCallsRule } from './visibility.ts';

/**
 * Tool resolution: what one tool name means to one caller on one endpoint, decided once, here. Every
 * path that asks about a tool reads its answer from {@link resolveTool}: the edge (closed upstreams,
 * `Mcp-Param` checks, step-up), direct calls, `call_tool`, search filtering, nearest-name hints, the
 * tasks relay, the listings, the console and (through the listings' definitions) the CLI. Pure.
 */

/** The endpoints the gateway serves: `/mcp` (the caller's whole visible catalogue) and `/mcp/compact`. */
export type SurfaceName = 'full' | 'compact';

/** The compact surface's own tools; catalogue tools with these names are shadowed there. */
export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
/** The compact surface's code-mode tool (`compact.codeMode.enabled`); shadows a catalogue tool of that name there. */
export const RUN_CODE = 'run_code';

/** A name that stands for no catalogue tool on the surface (missing, or shadowed by the surface's own tool). */
export interface Unresolved {
  readonly tool: undefined;
  readonly visible: false;
  readonly reachableByModel: false;
  readonly advertised: false;
  readonly readOnly: false;
  readonly withheld: false;
  readonly pinned: PinStatus;
}

/** A catalogue tool and every decision about it for one caller on one surface. */
export interface Resolved {
  /** The catalogue tool under the exposed name: listed, or withheld (its upstream is down). */
  readonly tool: CatalogTool;
  /**
   * The caller's access permits the tool (its required scopes, any one suffices: policy/visibility.ts).
   * A tool that is not visible is answered exactly as a missing one, on every path.
   */
  readonly visible: boolean;
  /**
   * The caller's model may reach it through the surface's own means (search_tools results, call_tool,
   * nearest-name hints): visible and not an MCP Apps app-only tool (`_meta.ui.visibility` without
   * "model", catalog/extensions.ts), whose output no host could filter once it reaches a model as
   * ordinary tool output. A withheld tool stays reachable: it is answered "upstream unavailable".
   */
  readonly reachableByModel: boolean;
  /**
   * The surface's tools/list carries it to this caller: visible, not withheld, and on `/mcp/compact`
   * one of the tools listed up front (every state-changing tool, so a client's approval prompt names
   * what runs; the read anchors: `upstreams[].anchors`, then model-visible MCP Apps tools within
   * `upstreams[].maxAnchors`, catalog/catalog.ts; app-only tools, for the host). On `/mcp` every
   * visible tool is listed.
   */
  readonly advertised: boolean;
  /** `readOnlyHint: true`, or `upstreams[].readOnlyOverrides`: the gateway's one read/write decision. */
  readonly readOnly: boolean;
  /** Its upstream is down: not listed or searched; a call of it answers "upstream unavailable". */
  readonly withheld: boolean;
  /** What definition pinning holds of it ({@link Catalog.held}, catalog/pin-guard.ts; nothing by default). A held tool's calls are refused. */
  readonly pinned: PinStatus;
}

/** What {@link resolveTool} answers: `tool` undefined, or a catalogue tool with its decisions. */
export type ToolResolution = Unresolved | Resolved;

const UNRESOLVED: Unresolved = Object.freeze({
  tool: undefined,
  visible: false,
  reachableByModel: false,
  advertised: false,
  readOnly: false,
  withheld: false,
  pinned: NOT_HELD,
});

/**
 * What the exposed name `name` stands for to a caller with `access` on `surface`, given `catalog`
 * (listed tools, then withheld ones, then held ones not listed; else an old name a reload left). On `/mcp/compact` the surface's own {@link SEARCH_TOOLS} and
 * {@link CALL_TOOL}, and {@link RUN_CODE} under `codeMode` (`compact.codeMode.enabled`), shadow catalogue tools of those names: there they resolve to no tool.
 */
export function resolveTool(catalog: Catalog, access: Access, name: string, surface: SurfaceName, codeMode = false): ToolResolution {
  if (surface === 'compact' && (name === SEARCH_TOOLS || name === CALL_TOOL || (codeMode && name === RUN_CODE))) return UNRESOLVED;
  const resolution = resolveExposed(catalog, access, name, surface);
  // A name a reload renamed (catalog-merge.ts aliases) means the tool it named, wherever a current name does.
  const current = resolution.tool === undefined ? catalog.aliases?.get(name) : undefined;
  return current === undefined ? resolution : resolveExposed(catalog, access, current, surface);
}

function resolveExposed(catalog: Catalog, access: Access, name: string, surface: SurfaceName): ToolResolution {
  const listed = catalog.byName.get(name);
  const pinned = catalog.held?.get(name) ?? NOT_HELD;
  // A held tool whose pinned definition is not served is found here only: its calls get the hold's answer.
  const tool = listed ?? catalog.withheld?.get(name) ?? (pinned.held ? pinned.tool : undefined);
  if (tool === undefined) return UNRESOLVED;
  const withheld = listed === undefined && !pinned.held;
  const visible = isVisible(tool, access);
  const reachableByModel = visible && !isAppOnlyTool(tool.definition);
  const advertised = visible && listed !== undefined && (surface === 'full' || listedUpFront(tool));
  return { tool, visible, reachableByModel, advertised, readOnly: tool.readOnly, withheld, pinned };
}

/** `/mcp/compact`'s up-front tools: state-changing ones, the read anchors (MCP Apps tools within the budget among them), and MCP Apps app-only ones. */
function listedUpFront(tool: CatalogTool): boolean {
  return !tool.readOnly || tool.anchor || isAppOnlyTool(tool.definition);
}

/**
 * Whether search_tools may return the tool and an unknown-tool hint may name it: reachable by the model
 * and listed now. A withheld tool is not offered (its upstream is down), though a search index built
 * before the outage still holds it (catalog/search-index-cache.ts serves such an index during a build);
 * nor is a held tool whose pinned definition is not served. One served with its pinned definition is
 * (the index holds that definition's text, never the upstream's new one).
 */
export function findableByModel(resolution: ToolResolution): boolean {
  return resolution.reachableByModel && !resolution.withheld && !(resolution.pinned.held && !resolution.pinned.listed);
}

/**
 * Whether a direct tools/call (or a task of the tool) reaches the upstream: a catalogue tool the caller
 * may see, or one whose upstream's rule is `forward` (`policy.hiddenToolCalls: forward` on an upstream
 * that receives the caller's credential: the upstream decides; visibility.ts hiddenToolCallsFor).
 */
export function directCallAllowed(resolution: ToolResolution, rule: HiddenToolCallsRule): resolution is Resolved {
  return resolution.tool !== undefined && (resolution.visible || rule(resolution.tool.upstream) === 'forward');
}
