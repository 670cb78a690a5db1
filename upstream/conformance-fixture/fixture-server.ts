import type { ServerNotifier } from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/server';
import { registerContentTools } from './content-tools.ts';
import { registerInputTools, requestStateCodec } from './input-tools.ts';
import { registerFixturePrompts, registerFixtureResources } from './resources-prompts.ts';
import { passTaskResults, registerTaskTools, TASKS_EXTENSION } from './tasks.ts';

/**
 * One fresh instance of the conformance fixture (built per request by `createMcpHandler`): every tool,
 * resource and prompt the server scenarios of `@modelcontextprotocol/conformance` 0.2.x name, and the
 * tasks extension's tools and methods (tasks.ts).
 * `notifier` returns the handler's listen-bus publisher (the handler exists only after the factory is passed).
 */
export function buildFixtureServer(notifier: () => ServerNotifier): McpServer {
  const server = new McpServer(
    { name: 'conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        // Deprecated in 2026-07-28 (SEP-2577) but still negotiated by the 2025 logging/setLevel scenario.
        logging: {},
        completions: {},
        // SEP-2663 (tasks.ts): server-directed tasks for requests that declare the extension.
        extensions: { [TASKS_EXTENSION]: {} },
      },
      requestState: { verify: requestStateCodec.verify },
    },
  );
  registerTaskTools(server);
  registerContentTools(server);
  registerInputTools(server, notifier);
  registerFixtureResources(server);
  registerFixturePrompts(server);
  server.server.setRequestHandler('logging/setLevel', async () => ({}));
  server.server.setRequestHandler('completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  passTaskResults(server);
  return server;
}
