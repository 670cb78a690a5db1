import { Server, ProtocolError, ProtocolErrorCode, type CacheHint } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { resolveCall, runCall } from './call-tool.ts';
import { PlatformClient } from './platform-client.ts';
import { PROMPT_LIST, getPrompt } from './prompts.ts';
import { RESOURCE_LIST, readGuide } from './resources.ts';
import { TOOL_LIST } from './tools/index.ts';

export const SERVER_INFO = { name: 'cpzai-mcp', title: 'CPZAI trading platform', version: '1.0.0' };

export const INSTRUCTIONS =
  'Tools for the CPZ trading platform: strategies and hedge overlays, backtests, orders, positions, broker accounts and ' +
  'provider connections, data files, market data, risk, middle office (deals, lifecycle events, cash flows, journal entries, ' +
  'fund periods), webhooks and the user profile. Look ids up with the list_* tools before calling get_* or write tools. ' +
  'Money is in minor units (cents) as decimal strings. List tools page with limit (1-100) and offset and return {data, count}, ' +
  'count being the page length. Ten tools change state (readOnlyHint false) and are never retried: confirm orders and ' +
  "deletions with the user. Calls run with the caller's credential; a missing scope comes back as an isError result naming " +
  'it. Guides: cpzai://guides/tool-usage, cpzai://guides/permissions, cpzai://guides/discovery.';

/** The catalogue is the same for every caller and changes only with a new release: shared caches may keep it. */
const CATALOGUE_HINT: CacheHint = { ttlMs: 300_000, cacheScope: 'public' };

export interface McpServerContext {
  platformUrl: string;
  /** Credential headers of this request's caller, forwarded to the platform unchanged. */
  credentials: Record<string, string>;
  requestId: string;
  logger?: Logger;
}

/**
 * Builds the per-request low-level Server: tools/list, resources and prompts answer from data built
 * once at module load; tools/call checks arguments, then forwards to the platform with the caller's
 * credentials. Scope is never checked here: the platform decides.
 */
export function createMcpServer(context: McpServerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: INSTRUCTIONS,
    cacheHints: {
      'tools/list': CATALOGUE_HINT,
      'prompts/list': CATALOGUE_HINT,
      'resources/list': CATALOGUE_HINT,
      'resources/templates/list': CATALOGUE_HINT,
      'resources/read': CATALOGUE_HINT,
    },
  });
  const rejectCursor = (cursor: string | undefined) => {
    if (cursor !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: this server returns every item in one page');
  };

  server.setRequestHandler('tools/list', async (request) => {
    rejectCursor(request.params?.cursor);
    return { tools: TOOL_LIST as never };
  });
  server.setRequestHandler('tools/call', async (request) => {
    const resolved = resolveCall(request.params.name, request.params.arguments);
    if ('refused' in resolved) return resolved.refused;
    const { tool, args } = resolved;
    const started = performance.now();
    const platform = new PlatformClient(context.platformUrl, context.credentials, context.requestId, (retry) =>
      context.logger?.warn({ requestId: context.requestId, tool: tool.name, ...retry }, 'platform call retried'),
    );
    const { result, outcome } = await runCall(tool, args, platform);
    context.logger?.info({ requestId: context.requestId, tool: tool.name, outcome, ms: Math.round(performance.now() - started) }, 'tools/call');
    return server.projectCallToolResult(result, tool.outputSchema);
  });
  server.setRequestHandler('resources/list', async (request) => {
    rejectCursor(request.params?.cursor);
    return { resources: RESOURCE_LIST };
  });
  server.setRequestHandler('resources/templates/list', async (request) => {
    rejectCursor(request.params?.cursor);
    return { resourceTemplates: [] };
  });
  server.setRequestHandler('resources/read', async (request) => readGuide(request.params.uri));
  server.setRequestHandler('prompts/list', async (request) => {
    rejectCursor(request.params?.cursor);
    return { prompts: PROMPT_LIST };
  });
  server.setRequestHandler('prompts/get', async (request) => getPrompt(request.params.name, request.params.arguments));
  return server;
}
