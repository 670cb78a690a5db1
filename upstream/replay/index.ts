/**
 * The replay upstream: a real MCP server (v2 SDK low-level `Server`, stateless, both eras) that serves a
 * catalogue file's tool definitions as they are. tools/list pages with an opaque cursor (`pageSize` tools
 * a page); tools/call answers deterministically (see `replayResult`). Used by the search benchmark and
 * by scale tests (catalogues of 34 to 10,000 tools: see synthetic-catalog.ts).
 *
 * Errors (JSON-RPC, MCP spec 2026-07-28 server/tools and utilities/pagination): an unknown tool or an
 * invalid cursor is -32602 (invalid params).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createMcpHandler, ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';

import { readCatalog, type CatalogEntry, type ToolDefinition } from './catalog-file.ts';
import { replayResult, replayTools } from './replay-tools.ts';

export type ReplayUpstreamOptions = {
  /** Tool definitions (or catalogue entries) to serve; or */
  tools?: (ToolDefinition | CatalogEntry)[];
  /** a catalogue file to read them from (see catalog-file.ts for the shapes accepted). */
  catalogPath?: string;
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Tools per tools/list page; default 100. */
  pageSize?: number;
  /** serverInfo name; default "replay". */
  name?: string;
  /** Freshness hint on tools/list results (SEP-2549 `ttlMs`, scope public: the list is the same for every
   *  caller); default 300,000 ms, 0 tells clients never to reuse a list. */
  listTtlMs?: number;
};

export type ReplayUpstream = { url: string /* full MCP URL, .../mcp */; close(): Promise<void>; tools: ToolDefinition[] };

const DEFAULT_PAGE_SIZE = 100;
const DEFAULT_LIST_TTL_MS = 300_000;

function entriesOf(opts: ReplayUpstreamOptions): CatalogEntry[] {
  if (opts.tools !== undefined) return opts.tools.map((t) => ('tool' in t && typeof t.tool === 'object' ? (t as CatalogEntry) : { tool: t as ToolDefinition }));
  if (opts.catalogPath !== undefined) return readCatalog(opts.catalogPath);
  throw new Error('startReplayUpstream needs tools or catalogPath');
}

/** Cursor for the page starting at `offset`: opaque to clients (spec: utilities/pagination). */
function cursorAt(offset: number): string {
  return Buffer.from(`replay:${offset}`).toString('base64url');
}

function offsetOf(cursor: string | undefined, total: number): number {
  if (cursor === undefined) return 0;
  const m = /^replay:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const offset = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(offset) || offset <= 0 || offset >= total) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${JSON.stringify(cursor)}`);
  }
  return offset;
}

/**
 * Builds the per-request MCP server (the SDK calls the factory per request). `tools` is the catalogue, or
 * a function returning the current one (a catalogue that changes between requests: each request sees one
 * version whole; pass `listChanged` so clients are told to watch for `notifications/tools/list_changed`).
 */
export function replayServerFactory(
  tools: ToolDefinition[] | (() => ToolDefinition[]),
  pageSize: number,
  name = 'replay',
  listTtlMs = DEFAULT_LIST_TTL_MS,
  listChanged = false,
): () => Server {
  const current = typeof tools === 'function' ? tools : () => tools;
  let indexed: { tools: ToolDefinition[]; byName: Map<string, ToolDefinition> } | undefined;
  const version = () => {
    const list = current();
    if (indexed?.tools !== list) indexed = { tools: list, byName: new Map(list.map((t) => [t.name, t])) };
    return indexed;
  };
  return () => {
    const { tools, byName } = version();
    const server = new Server(
      { name, version: '1.0.0' },
      { capabilities: { tools: listChanged ? { listChanged: true } : {} }, cacheHints: { 'tools/list': { ttlMs: listTtlMs, cacheScope: 'public' } } },
    );
    server.setRequestHandler('tools/list', async (request) => {
      const offset = offsetOf(request.params?.cursor, tools.length);
      const end = offset + pageSize;
      // Definitions come from the file as they are: the SDK's Tool type is the wire shape they already have.
      return { tools: tools.slice(offset, end) as Tool[], ...(end < tools.length ? { nextCursor: cursorAt(end) } : {}) };
    });
    server.setRequestHandler('tools/call', async (request) => {
      const tool = byName.get(request.params.name);
      if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      return replayResult(tool, request.params.arguments ?? {});
    });
    return server;
  };
}

/** Starts the replay upstream on `host:port`; resolves once it listens. */
export async function startReplayUpstream(opts: ReplayUpstreamOptions): Promise<ReplayUpstream> {
  const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) throw new Error(`pageSize must be a positive integer, got ${pageSize}`);
  const tools = replayTools(entriesOf(opts));
  const handler = createMcpHandler(replayServerFactory(tools, pageSize, opts.name, opts.listTtlMs), { legacy: 'stateless' });
  const nodeHandler = toNodeHandler(handler);
  const validateHost = localhostHostValidation();
  const validateOrigin = localhostOriginValidation();
  const http = createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    if (new URL(req.url ?? '/', 'http://replay').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: the MCP endpoint is POST /mcp' }));
      return;
    }
    void nodeHandler(req, res);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`,
    tools,
    async close() {
      try {
        await handler.close();
      } finally {
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      }
    },
  };
}
