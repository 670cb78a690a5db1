import type { Tool } from '@modelcontextprotocol/server';
import type { VisibleCatalog } from '../policy/caller.ts';
import { callThroughDispatcher } from './call-tool.ts';
import { searchTools } from './search-tools.ts';
import { COMPACT_AFTER_UPSTREAM, COMPACT_INSTRUCTIONS, compactTools } from './compact-tools.ts';
import { CALL_TOOL, RUN_CODE, SEARCH_TOOLS } from '../policy/tool-resolution.ts';
import type { Listing } from '../catalog/listing.ts';
import type { DispatchContext, Surface } from '../ports.ts';
import { callToolDirect } from './tool-call.ts';
import { recordDecision, visibleForCall } from './tool-decision.ts';
import { GatewayError } from '../errors.ts';
import { declaresTasks } from './tasks.ts';
import { runCode } from './run-code.ts';

/**
 * `/mcp/compact`: progressive discovery (issue 8). tools/list holds search_tools, call_tool, every
 * state-changing tool and the configured read anchors the caller may see (compact-tools.ts); the rest
 * of the visible catalogue is found with search_tools and run through call_tool, or chained in one
 * run_code script where `compact.codeMode.enabled` (run-code.ts). Any other tools/call
 * name is a direct call, exactly as on `/mcp` (visible tools only).
 */
export const compactSurface: Surface = {
  name: 'compact',
  path: '/mcp/compact',
  // The upstreams' instructions assume every tool is listed; the paragraph after them says how to reach the rest.
  instructions: (upstream) => (upstream ? `${upstream}\n\n${COMPACT_INSTRUCTIONS} ${COMPACT_AFTER_UPSTREAM}` : COMPACT_INSTRUCTIONS),
  listTools: (d, visible) => compactListing(d, visible),
  async callTool(d, name, args, task) {
    const code = name === RUN_CODE && d.runtime.config.compact.codeMode.enabled;
    if (name !== SEARCH_TOOLS && name !== CALL_TOOL && !code) return callToolDirect(d, name, args, task);
    const started = performance.now();
    // The surface's own tools run at once (no execution.taskSupport): 2025-11-25 §Tool-Level Negotiation,
    // where the gateway declares tasks; where it does not, the task is ignored (surfaces/tasks.ts declaresTasks).
    if (task !== undefined && (await declaresTasks(d))) {
      // Audited as the same refusal of a catalogue tool is (tool-call.ts callCatalogTool): it had no line (review).
      recordDecision(d, {
        via: 'direct',
        name,
        outcome: 'error',
        reason: 'task_not_supported',
        arguments: args ?? {},
        started,
        counted: { tool: name, outcome: 'refused' },
        own: true,
      });
      throw new GatewayError('method_not_found', `Method not found: ${name} does not support task-augmented calls`);
    }
    // A catalogue that cannot be read ends the call here: recorded as the surface's own tool's decision (its name: a bounded label).
    const visible = await visibleForCall(d, { via: 'direct', name, arguments: args ?? {}, started, label: name, own: true });
    const listing = compactListing(d, visible);
    const definition = ownTool(listing, name);
    if (code) return runCode(d, visible, definition, ownTool(listing, CALL_TOOL), args ?? {});
    return name === SEARCH_TOOLS ? searchTools(d, visible, definition, args ?? {}) : callThroughDispatcher(d, visible, definition, args ?? {});
  },
};

/** The compact tools/list of a visible catalogue, cached per catalogue version and effective scopes. */
function compactListing(d: DispatchContext, visible: VisibleCatalog): Listing {
  return d.runtime.listings.get(`compact|${visible.key}`, () => compactTools(d.runtime.config, visible));
}

function ownTool(listing: Listing, name: string): Tool {
  return listing.tools.find((tool) => tool.name === name)!;
}
