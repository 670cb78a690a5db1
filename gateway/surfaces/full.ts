import type { Tool } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../config/types.ts';
import type { CatalogTool } from '../catalog/catalog.ts';
import { isAppOnlyTool } from '../catalog/extensions.ts';
import type { Surface } from '../mcp/types.ts';
import { compactAdvertises } from './compact-tools.ts';
import { callToolDirect } from './tool-call.ts';

/**
 * Claude Code's per-tool `_meta` key that keeps a tool loaded when the client defers the rest behind its
 * tool search (Claude Code docs, MCP "tool search": `_meta["anthropic/alwaysLoad"]: true`).
 */
export const ALWAYS_LOAD_META_KEY = 'anthropic/alwaysLoad';

/**
 * A tool's /mcp definition: with `clientHints.alwaysLoad`, the tools `/mcp/compact` advertises up front
 * (every state-changing tool and the read anchors, compactAdvertises) carry {@link ALWAYS_LOAD_META_KEY},
 * so a client that defers loading keeps exactly those loaded, as the compact surface does; app-only tools
 * never (they are not for the model). A value the upstream set itself is left as it is.
 */
export function fullDefinition(tool: CatalogTool, config: GatewayConfig): Tool {
  const definition = tool.definition;
  if (!config.clientHints.alwaysLoad || definition._meta?.[ALWAYS_LOAD_META_KEY] !== undefined) return definition;
  if (!compactAdvertises(tool, config) || isAppOnlyTool(definition)) return definition;
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
    return d.runtime.listings.get(`full|${visible.key}`, () => visible.tools.map((tool) => fullDefinition(tool, d.runtime.config)));
  },
  callTool: (d, name, args, task) => callToolDirect(d, name, args, task),
  advertises: () => true,
};
