import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { buildPlatformApp } from './app.ts';
import { createStore, type PlatformStore } from './store.ts';

export type { PlatformStore } from './store.ts';

/**
 * Starts the CPZ platform API stand-in: a seeded in-memory store behind Koa, routes under `/v1` and
 * `/cpz`. Defaults: 127.0.0.1, port 3002 (0 picks a free port), logging off.
 * Resolves once listening; `close()` stops accepting and ends idle keep-alive connections.
 */
export async function startPlatform(opts: { port?: number; host?: string; log?: boolean } = {}): Promise<{
  url: string;
  close(): Promise<void>;
  store: PlatformStore;
}> {
  const { port = 3002, host = '127.0.0.1', log = false } = opts;
  const store = createStore();
  const logger = log ? pino({ name: 'cpz-platform' }) : undefined;
  const server = buildPlatformApp(store, { logger }).listen(port, host);
  // Idle sockets outlive its caller's reuse of them, as the MCP server's do (upstream/server/index.ts,
  // KEEP_ALIVE_TIMEOUT_MS): the two never share code, only HTTP.
  server.keepAliveTimeout = 65_000;
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    store,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
