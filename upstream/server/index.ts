import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { pino, type Logger } from 'pino';
import { callerCredentials, requestIdFrom, requestIdOf } from './caller-credentials.ts';
import { createMcpServer } from './mcp-server.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/**
 * How long an idle keep-alive socket stays open. A client (undici) reuses an idle socket until the
 * server's `Keep-Alive: timeout` hint less 2 s, so a request can cross the server's close only after an
 * idle gap of about that length: at Node's 5 s, the gaps of a test on a loaded machine met it (ECONNRESET).
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How long `close()` lets requests under way finish before it cuts the connections still open. */
const CLOSE_GRACE_MS = 2_000;

/**
 * The reference CPZAI MCP server's handler (`createMcpHandler`, stateless; 2026-07-28 and the legacy
 * revisions 2024-10-07 to 2025-11-25): one server per request, built with the caller's credential
 * headers and X-Request-Id, calling the platform at `platformUrl`. `handler.fetch(Request)` serves it
 * without a socket (tests); {@link startUpstreamServer} serves it over HTTP.
 */
export function createUpstreamHandler(opts: { platformUrl: string; logger?: Logger }) {
  const { platformUrl, logger } = opts;
  return createMcpHandler(
    ({ requestInfo }) => createMcpServer({ platformUrl, credentials: callerCredentials(requestInfo), requestId: requestIdOf(requestInfo), logger }),
    { legacy: 'stateless', onerror: (error) => logger?.warn({ err: error.message }, 'mcp request rejected') },
  );
}

/**
 * Starts the reference CPZAI MCP server: a Koa app whose `/mcp` route is served by
 * `createMcpHandler` (stateless; 2026-07-28 and the legacy revisions 2024-10-07 to 2025-11-25).
 * Defaults: 127.0.0.1, port 3001 (0 picks a free one). On a loopback bind, foreign Host and Origin
 * headers get 403 (DNS-rebinding protection). Resolves with the full MCP URL once listening.
 */
export async function startUpstreamServer(opts: { platformUrl: string; port?: number; host?: string; log?: boolean }): Promise<{
  url: string;
  close(): Promise<void>;
}> {
  const { platformUrl, port = 3001, host = '127.0.0.1', log = false } = opts;
  const logger = log ? pino({ name: 'cpzai-mcp' }) : undefined;
  const handler = createUpstreamHandler({ platformUrl, logger });
  const serveMcp = toNodeHandler(handler, { onerror: (error) => logger?.error({ err: error.message }, 'mcp adapter failed') });
  const guards = LOOPBACK.has(host) ? [localhostHostValidation(), localhostOriginValidation()] : [];

  const app = new Koa();
  const router = new Router();
  router.all(
    '/mcp',
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '4mb',
      onError: (_error, ctx) => {
        ctx.state.unparsable = true;
      },
    }),
    async (ctx) => {
      ctx.respond = false;
      if (!guards.every((guard) => guard(ctx.req, ctx.res))) return;
      if (ctx.state.unparsable) {
        ctx.res.writeHead(400, { 'content-type': 'application/json' });
        ctx.res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } }));
        return;
      }
      // Only a body the parser actually consumed is passed on; otherwise the SDK reads the stream and owns
      // the answer (415 for a wrong content type, 405 for GET/DELETE under the stateless legacy posture).
      const parsed = (ctx.request as { rawBody?: string }).rawBody !== undefined ? ctx.request.body : undefined;
      await serveMcp(ctx.req, ctx.res, parsed);
    },
  );
  // One request id per HTTP request: the caller's when well formed, else fresh. Written back into the
  // inbound headers so the MCP factory (which reads the web Request) forwards the same id to the platform.
  app.use(async (ctx, next) => {
    const id = requestIdFrom(ctx.get('x-request-id'));
    ctx.req.headers['x-request-id'] = id;
    ctx.set('X-Request-Id', id);
    await next();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());

  const server = app.listen(port, host);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    close: async () => {
      try {
        await handler.close();
      } finally {
        await new Promise<void>((resolve, reject) => {
          // A keep-alive client that keeps asking (a gateway's health probe every 2 s) keeps its connection busy:
          // cut after a grace, or the process never exits (SRE try-out: 9 minutes after SIGTERM, answering 500).
          const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
          cut.unref();
          server.close((error) => {
            clearTimeout(cut);
            if (error) reject(error);
            else resolve();
          });
          server.closeIdleConnections();
        });
      }
    },
  };
}
