import type { Tool } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../config/types.ts';
import type { CatalogTool } from '../catalog/catalog.ts';
import type { Surface } from '../ports.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import { resolveTool } from '../policy/tool-resolution.ts';
import { callToolDirect } from './tool-call.ts';

/**
 * Claude Code's per-tool `_meta` key that keeps a tool loaded when the client defers the rest behind its
 * tool search (Claude Code docs, MCP "tool search": `_meta["anthropic/alwaysLoad"]: true`).
 */
export const ALWAYS_LOAD_META_KEY = 'anthropic/alwaysLoad';

/**
 * A tool's /mcp definition: with `clientHints.alwaysLoad`, the tools `/mcp/compact` advertises up front
 * to the same caller (every state-changing tool and the read anchors: policy/tool-resolution.ts) carry
 * {@link ALWAYS_LOAD_META_KEY}, so a client that defers loading keeps exactly those loaded, as the
 * compact surface does; tools the model may not reach never (MCP Apps app-only tools). A value the
 * upstream set itself is left as it is.
 */
function fullDefinition(tool: CatalogTool, visible: VisibleCatalog, config: GatewayConfig): Tool {
  const definition = tool.definition;
  if (!config.clientHints.alwaysLoad || definition._meta?.[ALWAYS_LOAD_META_KEY] !== undefined) return definition;
  const compact = resolveTool(visible.catalog, visible.access, tool.name, 'compact', config.compact.codeMode.enabled);
  if (!compact.advertised || !compact.reachableByModel) return definition;
  return { ...definition, _meta: { ...definition._meta, [ALWAYS_LOAD_META_KEY]: true } };
}

/**
 * `/mcp`: the caller's whole visible catalogue. tools/list is the catalogue filtered by the caller's
 * access (one cached listing per catalogue version and effective access), the everyday tools marked to
 * stay loaded ({@link fullDefinition}); tools/call runs a visible tool and answers any other name as
 * unknown (tool-call.ts `callToolDirect`).
 */
export const fullSurface: Surface = {
  name: 'full',
  path: '/mcp',
  instructions: (upstream) => upstream,
  listTools(d, visible) {
    return d.runtime.listings.get(`full|${visible.key}`, () => visible.tools.map((tool) => fullDefinition(tool, visible, d.runtime.config)));
  },
  callTool: (d, name, args, task) => callToolDirect(d, name, args, task),
};
