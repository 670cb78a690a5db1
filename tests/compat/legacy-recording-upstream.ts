import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** One JSON-RPC request as the legacy upstream received it, with the caller key it came with. */
export interface LegacyReceived {
  method: string;
  params: Record<string, unknown>;
  key: string;
}

/**
 * A stateless 2025-era upstream built with the v1 SDK (no server/discover: the gateway falls back to
 * `initialize`), recording every request. It declares logging and resource subscriptions (answering
 * resources/subscribe and unsubscribe with `{}`), serves `test://watched`, and one tool, `legacy_logs`,
 * which sends two log messages (info, debug) on its call's stream before answering.
 */
export async function startLegacyRecordingUpstream(): Promise<{ url: string; received: LegacyReceived[]; close(): Promise<void> }> {
  const received: LegacyReceived[] = [];
  const build = () => {
    const server = new McpServer({ name: 'legacy-recording', version: '1.0.0' }, { capabilities: { logging: {}, resources: { subscribe: true } } });
    server.registerResource('watched', 'test://watched', { mimeType: 'text/plain' }, async () => ({ contents: [{ uri: 'test://watched', text: 'watched' }] }));
    server.server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
    server.server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
    server.registerTool('legacy_logs', { description: 'Logs twice, then answers' }, async (extra) => {
      for (const [level, data] of [['info', 'legacy info'], ['debug', 'legacy debug']] as const) {
        await extra.sendNotification({ method: 'notifications/message', params: { level, data } });
      }
      return { content: [{ type: 'text', text: 'legacy logged' }] };
    });
    return server;
  };
  const http = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', async () => {
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        return void res.writeHead(400).end();
      }
      const message = body as { method?: string; params?: Record<string, unknown> } | undefined;
      if (message?.method) received.push({ method: message.method, params: message.params ?? {}, key: String(req.headers['x-cpz-key'] ?? '') });
      const server = build();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
