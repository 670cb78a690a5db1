import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { buildFixtureServer } from './fixture-server.ts';

/**
 * Starts the conformance fixture MCP server: a stateless v2 SDK server (`createMcpHandler`, legacy
 * `'stateless'`) on `POST /mcp`, serving 2026-07-28 and the 2025-era revisions from one URL, behind
 * localhost Host/Origin validation (the `dns-rebinding-protection` scenario). Port 0 (default) picks a free port.
 * Resolves `{ url }` with the full MCP URL, e.g. `http://127.0.0.1:41234/mcp`.
 */
export async function startConformanceFixture(opts: { port?: number; host?: string } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const host = opts.host ?? '127.0.0.1';
  const handler = createMcpHandler(() => buildFixtureServer(() => handler.notify), { legacy: 'stateless' });
  const serve = toNodeHandler(handler);
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const server = createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    void serve(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    async close() {
      try {
        await handler.close();
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}
