import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface LegacyUpstream {
  url: string;
  /** The X-CPZ-Key each session was initialised with, by session id. */
  sessionOwners: Map<string, string>;
  /** tools/call answers in arrival order: which key called, in which session. */
  calls: { key: string; session: string }[];
  /** Forget every session, as a restarted server would (later requests with old ids get 404). */
  forgetSessions(): void;
  close(): Promise<void>;
}

/**
 * A sessionful 2025-era upstream built with the v1 SDK (StreamableHTTPServerTransport with session
 * ids, no server/discover): like @modelcontextprotocol/server-everything, one session per client.
 */
export async function startLegacySessionfulUpstream(): Promise<LegacyUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sessionOwners = new Map<string, string>();
  const calls: LegacyUpstream['calls'] = [];
  const http = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', async () => {
      const body = raw ? JSON.parse(raw) : undefined;
      const sessionId = req.headers['mcp-session-id'] as string | undefined;
      const key = String(req.headers['x-cpz-key'] ?? '');
      if (sessionId) {
        const transport = transports.get(sessionId);
        if (!transport) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
        return transport.handleRequest(req, res, body);
      }
      if (req.method !== 'POST' || body?.method !== 'initialize') return void res.writeHead(400).end('initialize first');
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport);
          sessionOwners.set(id, key);
        },
      });
      const server = new McpServer({ name: 'legacy-sessionful', version: '1.0.0' });
      server.registerTool('whoami', { description: 'Which key and session serve this call' }, async (extra) => {
        const session = transport.sessionId ?? '';
        const caller = String((extra as { requestInfo?: { headers: Record<string, string> } }).requestInfo?.headers['x-cpz-key'] ?? '');
        calls.push({ key: caller, session });
        return { content: [{ type: 'text', text: `${caller}@${sessionOwners.get(session)}` }] };
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessionOwners,
    calls,
    forgetSessions: () => transports.clear(),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
