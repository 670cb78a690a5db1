/**
 * A replay upstream for the scale benchmark: the synthetic catalogue of upstream/replay
 * (`syntheticCatalog`, `replayTools`, `replayResult`) served by a v2 SDK low-level Server, as a
 * production catalogue server would serve it:
 * - tools/list pages of `pageSize` with an opaque cursor, and cache hints like the reference upstream's
 *   (`cacheScope: public`, `ttlMs` 5 min: the list is the same for every caller);
 * - `tools.listChanged`: `bump()` serves a new catalogue version (the first tool's description gains a
 *   marker word no real tool uses) and notifies subscribers (`subscriptions/listen`), so the gateway
 *   invalidates and refetches, as it would after a deployment.
 * Why not `startReplayUpstream` itself: it answers with the SDK's default hints (`ttlMs: 0`,
 * `cacheScope: private`), which make a gateway refetch the whole catalogue for every request, and it
 * has no way to change its catalogue.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import type { ToolDefinition } from '../upstream/replay/catalog-file.ts';
import { replayResult, replayTools } from '../upstream/replay/replay-tools.ts';
import { syntheticCatalog } from '../upstream/replay/synthetic-catalog.ts';

export interface VersionedReplayOptions {
  /** Tools in the catalogue. */
  size: number;
  /** Tools per tools/list page (the replay default, 100). */
  pageSize?: number;
}

/** Words absent from the shared catalogues: version n's first tool carries MARKERS[n - 1]. */
export const MARKERS = ['quetzalcoatl', 'xylographer', 'zanzibari', 'kumquat', 'narwhal', 'wombat', 'yodel', 'fjordland', 'ocelot', 'tapir'];

const CATALOGUE_HINT = { ttlMs: 300_000, cacheScope: 'public' as const };

const cursorAt = (offset: number) => Buffer.from(`replay:${offset}`).toString('base64url');

function offsetOf(cursor: string | undefined, total: number): number {
  if (cursor === undefined) return 0;
  const offset = Number(/^replay:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1]);
  if (!Number.isSafeInteger(offset) || offset <= 0 || offset >= total) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${JSON.stringify(cursor)}`);
  return offset;
}

function serverFactory(current: () => { tools: ToolDefinition[]; byName: Map<string, ToolDefinition> }, pageSize: number, name: string): () => Server {
  return () => {
    const { tools, byName } = current();
    const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } }, cacheHints: { 'tools/list': CATALOGUE_HINT } });
    server.setRequestHandler('tools/list', async (request) => {
      const offset = offsetOf(request.params?.cursor, tools.length);
      const end = offset + pageSize;
      return { tools: tools.slice(offset, end) as Tool[], ...(end < tools.length ? { nextCursor: cursorAt(end) } : {}) };
    });
    server.setRequestHandler('tools/call', async (request) => {
      const tool = byName.get(request.params.name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      return replayResult(tool, request.params.arguments ?? {});
    });
    return server;
  };
}

export async function startVersionedReplay(options: VersionedReplayOptions): Promise<{
  url: string;
  tools: number;
  bump(): { version: number; marker: string };
  close(): Promise<void>;
}> {
  const base = replayTools(syntheticCatalog(options.size));
  const catalogue = (tools: ToolDefinition[]) => ({ tools, byName: new Map(tools.map((t) => [t.name, t])) });
  let current = catalogue(base);
  let version = 0;
  const handler = createMcpHandler(serverFactory(() => current, options.pageSize ?? 100, `replay-${options.size}`), { legacy: 'stateless' });
  const node = toNodeHandler(handler);
  const validateHost = localhostHostValidation();
  const validateOrigin = localhostOriginValidation();
  const http = createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    void node(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    tools: base.length,
    bump() {
      version++;
      const marker = MARKERS[(version - 1) % MARKERS.length]!;
      current = catalogue([{ ...base[0]!, description: `${base[0]!.description ?? ''} Catalogue marker: ${marker}.` }, ...base.slice(1)]);
      handler.notify.toolsChanged();
      return { version, marker };
    },
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
