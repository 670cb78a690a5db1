import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/** One JSON-RPC message as the upstream received it, with the HTTP headers it came with. */
export interface ReceivedMessage {
  message: { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown> };
  headers: Record<string, string | string[] | undefined>;
}

/** What the recording upstream saw, for a test to assert on. */
export interface Recording {
  received: ReceivedMessage[];
  /** Upstream-side request id of every `wait_for_cancel` call whose handler saw its signal abort. */
  abortedCalls: (string | number)[];
  /** Upstream-side request id of every `wait_for_cancel` call whose handler started. */
  startedCalls: (string | number)[];
}

/**
 * A stateless v2 SDK upstream for protocol edge-case tests through the gateway. It records every
 * message it receives and serves tools built to make forwarding observable without timing:
 * - `echo {value}`: returns `value` as text (12 concurrent calls, each must get its own);
 * - `gated_progress`: sends two progress notifications against the caller's token, then waits for
 *   `releaseGate()` before answering (proves the SSE stream is not buffered: the test reads the
 *   progress before it releases the result);
 * - `wait_for_cancel`: waits until its request is cancelled (records it) or `releaseGate()`.
 */
export async function startRecordingUpstream(): Promise<{
  url: string;
  recording: Recording;
  releaseGate(): void;
  close(): Promise<void>;
}> {
  const recording: Recording = { received: [], abortedCalls: [], startedCalls: [] };
  let openGate!: () => void;
  let gate = new Promise<void>(resolve => (openGate = resolve));
  const releaseGate = () => {
    openGate();
    gate = new Promise<void>(resolve => (openGate = resolve));
  };

  const build = () => {
    const server = new McpServer({ name: 'recording-upstream', version: '1.0.0' });
    server.registerTool('echo', { description: 'Returns value', inputSchema: z.object({ value: z.string() }) }, async ({ value }) => ({
      content: [{ type: 'text', text: value }],
    }));
    server.registerTool('gated_progress', { description: 'Progress, then waits for the gate', inputSchema: z.object({}) }, async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        for (const progress of [1, 2]) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 3 } });
        }
      }
      await gate;
      return { content: [{ type: 'text', text: 'released' }] };
    });
    server.registerTool('wait_for_cancel', { description: 'Waits until cancelled', inputSchema: z.object({}) }, async (_args, ctx) => {
      recording.startedCalls.push(ctx.mcpReq.id);
      await new Promise<void>(resolve => {
        if (ctx.mcpReq.signal.aborted) return resolve();
        ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true });
        void gate.then(resolve);
      });
      if (ctx.mcpReq.signal.aborted) recording.abortedCalls.push(ctx.mcpReq.id);
      return { content: [{ type: 'text', text: ctx.mcpReq.signal.aborted ? 'cancelled' : 'released' }] };
    });
    return server;
  };

  const handler = createMcpHandler(build, { legacy: 'stateless' });
  const serve = toNodeHandler(handler);
  const http = createServer(async (req, res) => {
    if (req.method !== 'POST') return serve(req, res);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    for (const message of Array.isArray(body) ? body : body ? [body] : []) {
      recording.received.push({ message: message as ReceivedMessage['message'], headers: { ...req.headers } });
    }
    if (body === undefined) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    await serve(req, res, body);
  });
  await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    recording,
    releaseGate,
    async close() {
      releaseGate();
      try {
        await handler.close();
      } finally {
        http.closeAllConnections();
        await new Promise<void>(resolve => http.close(() => resolve()));
      }
    },
  };
}
