import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { acceptedContent, createMcpHandler, fromJsonSchema, inputRequired, McpServer } from '@modelcontextprotocol/server';
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
 * - `wait_for_cancel`: waits until its request is cancelled (records it) or `releaseGate()`;
 * and tools for what the gateway relays (2026-07-28 unless noted):
 * - `ask_name`: asks for a name in-band (`input_required` with an elicitation and `requestState`
 *   "round-1"), then greets with the name and the state it got back;
 * - `needs_sampling`: always asks for a sampling answer (a caller without `sampling` gets -32021);
 * - `log_steps`: logs at debug, info and warning through the request's log channel (sent only at or
 *   above the request's `logLevel`);
 * - `regional_echo {region, text}`: `region` is an `x-mcp-header` (Mcp-Param-Region, SEP-2243), which
 *   this SDK server checks against the body itself; `regional_lookup`, the same but read-only (so
 *   /mcp/compact does not list it and serves it through call_tool).
 * It declares logging and resource subscriptions, and serves one resource, `test://watched`.
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
    const server = new McpServer({ name: 'recording-upstream', version: '1.0.0' }, { capabilities: { logging: {}, resources: { subscribe: true } } });
    server.registerResource('watched', 'test://watched', { mimeType: 'text/plain' }, async () => ({ contents: [{ uri: 'test://watched', text: 'watched' }] }));
    server.registerTool('ask_name', { description: 'Asks for a name in-band', inputSchema: z.object({}) }, async (_args, ctx) => {
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'name')?.name;
      if (typeof name !== 'string') {
        const requestedSchema = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
        return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'Your name?', requestedSchema }) }, requestState: 'round-1' });
      }
      return { content: [{ type: 'text', text: `Hello, ${name} (state ${String(ctx.mcpReq.requestState())})` }] };
    });
    server.registerTool('needs_sampling', { description: 'Always asks for a sampling answer', inputSchema: z.object({}) }, async () =>
      inputRequired({ inputRequests: { answer: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'pong?' } }], maxTokens: 8 }) } }),
    );
    server.registerTool('log_steps', { description: 'Logs at debug, info and warning', inputSchema: z.object({}) }, async (_args, ctx) => {
      for (const [level, data] of [['debug', 'step 1'], ['info', 'step 2'], ['warning', 'step 3']] as const) await ctx.mcpReq.log(level, data);
      return { content: [{ type: 'text', text: 'logged' }] };
    });
    // Same schema twice: advertised on both endpoints (it may change state), and read-only (so
    // /mcp/compact does not list it: callers find it with search_tools and run it through call_tool).
    for (const [name, readOnlyHint] of [['regional_echo', false], ['regional_lookup', true]] as const) {
      server.registerTool(
        name,
        {
          description: 'Echoes text for a region (Mcp-Param-Region)',
          inputSchema: fromJsonSchema<{ region?: string; text?: string }>({
            type: 'object',
            properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, text: { type: 'string' } },
          } as Parameters<typeof fromJsonSchema>[0]),
          annotations: { readOnlyHint },
        },
        async ({ region, text }) => ({ content: [{ type: 'text', text: `${region ?? '-'}:${text ?? ''}` }] }),
      );
    }
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
