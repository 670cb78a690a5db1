/**
 * A replay upstream for the scale benchmark: the synthetic catalogue of upstream/replay
 * (`syntheticCatalog`, `replayTools`, `replayResult`) served by a v2 SDK low-level Server, as a
 * production catalogue server would serve it:
 * - tools/list pages of `pageSize` with an opaque cursor, and cache hints like the reference upstream's
 *   (`cacheScope: public`, `ttlMs` 5 min: the list is the same for every caller);
 * - `tools.listChanged`: `bump()` serves a new catalogue version (the first tool's description gains a
 *   marker word no real tool uses) and notifies subscribers (`subscriptions/listen`), so the gateway
 *   invalidates and refetches, as it would after a deployment.
 * It serves through `replayServerFactory`, the replay upstream's own server, over a catalogue that
 * `bump()` replaces (`startReplayUpstream` serves a fixed one).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { replayServerFactory } from '../upstream/replay/index.ts';
import { replayTools } from '../upstream/replay/replay-tools.ts';
import { syntheticCatalog } from '../upstream/replay/synthetic-catalog.ts';

export interface VersionedReplayOptions {
  /** Tools in the catalogue. */
  size: number;
  /** Tools per tools/list page (the replay default, 100). */
  pageSize?: number;
}

/** Words absent from the shared catalogues: version n's first tool carries MARKERS[n - 1]. */
export const MARKERS = ['quetzalcoatl', 'xylographer', 'zanzibari', 'kumquat', 'narwhal', 'wombat', 'yodel', 'fjordland', 'ocelot', 'tapir'];

export async function startVersionedReplay(options: VersionedReplayOptions): Promise<{
  url: string;
  tools: number;
  bump(): { version: number; marker: string };
  close(): Promise<void>;
}> {
  const base = replayTools(syntheticCatalog(options.size));
  let current = base;
  let version = 0;
  const handler = createMcpHandler(
    replayServerFactory(() => current, options.pageSize ?? 100, `replay-${options.size}`, 300_000, true),
    { legacy: 'stateless' },
  );
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
      current = [{ ...base[0]!, description: `${base[0]!.description ?? ''} Catalogue marker: ${marker}.` }, ...base.slice(1)];
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
