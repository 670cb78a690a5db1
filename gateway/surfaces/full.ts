import type { Surface } from '../mcp/types.ts';
import { callToolDirect } from './tool-call.ts';

/**
 * `/mcp`: the caller's whole visible catalogue. tools/list is the catalogue filtered by the caller's
 * access (one cached listing per catalogue version and effective access); tools/call runs a visible
 * tool and answers any other name as unknown (tool-call.ts `callToolDirect`).
 */
export const fullSurface: Surface = {
  name: 'full',
  path: '/mcp',
  instructions: (upstream) => upstream,
  async listTools(d) {
    const visible = await d.caller.visible();
    return d.runtime.listings.get(`full|${visible.key}`, () => visible.tools.map((tool) => tool.definition));
  },
  callTool: (d, name, args) => callToolDirect(d, name, args),
  advertises: () => true,
};
