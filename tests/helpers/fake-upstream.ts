import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server, type CallToolResult, type McpHttpHandler, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

/** One tool of a fake upstream: its definition and what tools/call answers. */
export interface FakeTool {
  definition: Tool;
  /** What tools/call answers; `context` is the SDK's (progress, logs: `context.mcpReq.notify`). */
  call?: (args: Record<string, unknown>, context: ServerContext) => CallToolResult | Promise<CallToolResult>;
}

export interface FakeUpstreamOptions {
  tools: FakeTool[];
  /** Split tools/list into pages of this size (cursor = next offset). */
  pageSize?: number;
  /** Every page answers the same nextCursor: a pagination loop. */
  cursorLoop?: boolean;
  /** Cache hints on tools/list (2026-07-28 callers). */
  toolsListHint?: { ttlMs: number; cacheScope: 'public' | 'private' };
  instructions?: string;
  /** Advertise tools.listChanged (modern callers can subscribe with subscriptions/listen). */
  listChanged?: boolean;
}

/** A request the fake upstream received: method, headers as sent. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
}

export interface FakeUpstream {
  /** Full MCP URL, …/mcp. */
  url: string;
  received: ReceivedRequest[];
  /** Answer every HTTP request with this status (e.g. 503) until reset with undefined. */
  failWith(status: number | undefined): void;
  /** Replace the catalogue and publish notifications/tools/list_changed to listen streams. */
  setTools(tools: FakeTool[]): void;
  close(): Promise<void>;
}

/**
 * The fake upstream's MCP handler (v2 SDK `createMcpHandler`, both eras, stateless) without a socket:
 * serve it over HTTP ({@link startFakeUpstream}) or in process (`handler.fetch(new Request(...))`).
 */
export function fakeUpstreamHandler(options: FakeUpstreamOptions): McpHttpHandler {
  return createMcpHandler(() => {
    const server = new Server(
      { name: 'fake-upstream', version: '1.0.0' },
      {
        capabilities: { tools: options.listChanged ? { listChanged: true } : {} },
        instructions: options.instructions,
        cacheHints: options.toolsListHint ? { 'tools/list': options.toolsListHint } : undefined,
      },
    );
    server.setRequestHandler('tools/list', async (request) => {
      const all = options.tools.map((t) => t.definition);
      if (!options.pageSize && !options.cursorLoop) return { tools: all };
      const size = options.pageSize ?? 2;
      const offset = Number(request.params?.cursor ?? 0);
      const next = options.cursorLoop ? 'loop' : offset + size < all.length ? String(offset + size) : undefined;
      return { tools: all.slice(offset, offset + size), ...(next ? { nextCursor: next } : {}) };
    });
    server.setRequestHandler('tools/call', async (request, context) => {
      const tool = options.tools.find((t) => t.definition.name === request.params.name);
      if (!tool) return { content: [{ type: 'text', text: `Unknown tool ${request.params.name}` }], isError: true };
      const result = await (tool.call ?? (() => ({ content: [{ type: 'text', text: 'ok' }] })))(request.params.arguments ?? {}, context);
      return result as never;
    });
    return server;
  });
}

/**
 * A real MCP server built with the v2 SDK (`createMcpHandler` + low-level `Server`, both eras,
 * stateless) serving a configurable catalogue: for drift tests (results that break their
 * outputSchema), pagination and pagination loops, and upstream failures.
 */
export async function startFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const received: ReceivedRequest[] = [];
  let failStatus: number | undefined;
  const handler = fakeUpstreamHandler(options);
  const node = toNodeHandler(handler);
  const http: HttpServer = createServer((req, res) => {
    if (failStatus !== undefined) {
      res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('failing on purpose');
      return;
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      let parsed: unknown;
      try {
        parsed = body ? JSON.parse(body) : undefined;
      } catch {
        parsed = undefined;
      }
      const method = (parsed as { method?: string } | undefined)?.method;
      if (method) received.push({ method, headers: req.headers });
      void node(req, res, parsed);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    failWith: (status) => void (failStatus = status),
    setTools: (tools) => {
      options.tools = tools;
      handler.notify.toolsChanged();
    },
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A tool with an outputSchema `{ data: { id: string, amount: string } }` whose call returns `result`. */
export function structuredTool(name: string, call: FakeTool['call'], outputSchema?: Record<string, unknown>): FakeTool {
  return {
    definition: {
      name,
      description: `${name} (test tool)`,
      inputSchema: { type: 'object', properties: {} },
      outputSchema: outputSchema ?? {
        type: 'object',
        properties: { data: { type: 'object', properties: { id: { type: 'string' }, amount: { type: 'string' } }, required: ['id', 'amount'] } },
        required: ['data'],
      },
      annotations: { readOnlyHint: true },
    } as Tool,
    call,
  };
}
