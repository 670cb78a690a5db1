/**
 * The undici hop (gateway/upstream/http-hop.ts) that carries tools/call to an HTTP upstream, through
 * the real gateway over real HTTP with real SDK clients: an SSE answer with progress and log messages
 * relayed in order, JSON-RPC errors under HTTP 400 and 409, an upstream that dies mid-call (isError at
 * once, no hang), a timeout, an upstream restart, a sessionful 2025-era upstream that forgets its
 * session (re-initialised once), and the caller's credential and request id on the wire.
 */
import { createServer, type IncomingHttpHeaders, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { connectV1, connectV2 } from '../../helpers/clients.ts';
import { eventually } from '../../helpers/wait.ts';
import { whoamiTool } from '../../fixtures/fake-tools.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';

const ALICE = { 'x-cpz-key': 'alice', 'x-cpz-secret': 'alice-secret' };
const TOOLS = ['sse_steps', 'rejects_400', 'rejects_409', 'dies', 'hangs', 'echo'].map((name) => ({
  name,
  inputSchema: { type: 'object' as const },
  annotations: { readOnlyHint: true },
}));

interface ScriptedUpstream {
  url: string;
  port: number;
  /** Headers of every tools/call that reached it. */
  calls: IncomingHttpHeaders[];
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A 2026-07-28/2025 upstream (the v2 SDK handler, stateless, declares logging) whose tools/call answers
 * are written by hand, so the test controls the wire: SSE framing, HTTP statuses, a socket destroyed
 * mid-answer, no answer at all.
 */
async function startScriptedUpstream(port = 0): Promise<ScriptedUpstream> {
  const calls: IncomingHttpHeaders[] = [];
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }));
    server.setRequestHandler('tools/call', async () => ({ content: [{ type: 'text', text: 'via sdk' }] }));
    return server;
  });
  const node = toNodeHandler(handler);
  const sse = (res: ServerResponse, messages: unknown[]) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const message of messages) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    res.end();
  };
  let http: HttpServer | undefined;
  const listen = async (at: number) => {
    http = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        const body = raw ? (JSON.parse(raw) as { id?: number; method?: string; params?: { name?: string; _meta?: Record<string, unknown> } }) : undefined;
        if (body?.method !== 'tools/call') return void node(req, res, body);
        calls.push(req.headers);
        const modern = body.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== undefined;
        const token = body.params?._meta?.progressToken;
        const result = (text: string) => ({
          jsonrpc: '2.0',
          id: body.id,
          result: { content: [{ type: 'text', text }], ...(modern ? { resultType: 'complete' } : {}) },
        });
        const log = (level: string, data: string) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level, data } });
        const progress = (n: number) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n, total: 2 } });
        switch (body.params?.name) {
          case 'sse_steps':
            return sse(res, [progress(1), log('info', 'step one'), progress(2), log('warning', 'step two'), result('done')]);
          case 'rejects_400':
            return void res
              .writeHead(400, { 'content-type': 'application/json' })
              .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32050, message: 'needs a ticket', data: { ticket: 'T-1' } } }));
          case 'rejects_409':
            return void res
              .writeHead(409, { 'content-type': 'application/json' })
              .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32051, message: 'conflict', data: { at: 'x' } } }));
          case 'dies':
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(`event: message\ndata: ${JSON.stringify(log('info', 'about to die'))}\n\n`);
            return void setTimeout(() => res.socket?.destroy(), 20);
          case 'hangs':
            return; // never answers
          default:
            return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result('echo')));
        }
      });
    });
    await new Promise<void>((resolve) => http!.listen(at, '127.0.0.1', resolve));
    return (http.address() as AddressInfo).port;
  };
  const bound = await listen(port);
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    calls,
    stop: async () => {
      http!.closeAllConnections();
      await new Promise<void>((resolve) => http!.close(() => resolve()));
    },
    start: async () => void (await listen(bound)),
  };
}

const textOf = (result: unknown) => (((result as { content?: unknown }).content as { text?: string }[] | undefined) ?? []).map((c) => c.text).join('\n');
const metaOf = (result: unknown) => ((result as { _meta?: unknown })._meta ?? {}) as Record<string, unknown>;

let upstream: ScriptedUpstream;
let gateway: RunningGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
  // The hanging call waits this long; every other answer must come within it, right after start-up
  // too (the catalogue and search index are built then): 1.5 s timed out sse_steps at load 20 on 2 cores.
  gateway = await startGatewayWith({
    noScopeEndpoint: true,
    overrides: { upstreams: [{ name: 'scripted', url: upstream.url, timeoutMs: 5000, restart: { minDelayMs: 20, maxDelayMs: 100, stableAfterMs: 0 } }] },
  });
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.stop().catch(() => {});
});

describe('the undici hop to an HTTP upstream', () => {
  it('relays an SSE answer: progress and log messages in the order the upstream sent them, then the result', async () => {
    const client = await connectV1(`${gateway.url}/mcp`, ALICE);
    const events: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void events.push(`log ${n.params.level} ${String(n.params.data)}`));
    try {
      const result = await client.callTool({ name: 'sse_steps', arguments: {} }, undefined, {
        onprogress: (p) => void events.push(`progress ${p.progress}/${p.total}`),
      });
      events.push(`result ${textOf(result)}`);
      expect(events).toEqual(['progress 1/2', 'log info step one', 'progress 2/2', 'log warning step two', 'result done']);
    } finally {
      await client.close();
    }
  });

  it("puts the caller's credential and the gateway's request id on the wire", async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      const before = upstream.calls.length;
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo');
      const headers = upstream.calls[before]!;
      expect(headers['x-cpz-key']).toBe('alice');
      expect(headers['x-cpz-secret']).toBe('alice-secret');
      expect(headers['x-request-id']).toMatch(/\S/);
      expect(headers['mcp-method']).toBe('tools/call');
      expect(headers['mcp-name']).toBe('echo');
      expect(headers['mcp-protocol-version']).toBe('2026-07-28');
    } finally {
      await client.close();
    }
  });

  it.each([
    ['rejects_400', -32050, 'needs a ticket', { ticket: 'T-1' }],
    ['rejects_409', -32051, 'conflict', { at: 'x' }],
  ])(
    "relays a JSON-RPC error answered under a non-2xx status (%s) with code, message and data (the gateway's kind and upstream beside)",
    async (name, code, message, data) => {
      const client = await connectV2(`${gateway.url}/mcp`, ALICE);
      try {
        const error = await client.callTool({ name, arguments: {} }).then(
          () => undefined,
          (e: unknown) => e as { code: number; message: string; data: unknown },
        );
        expect(error?.code).toBe(code);
        expect(error?.message).toContain(message);
        expect(error?.data).toEqual({ ...data, kind: 'upstream_rejected', upstream: 'scripted' });
      } finally {
        await client.close();
      }
    },
  );

  it('answers isError at once when the upstream dies mid-answer, and the next call works', async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      const started = performance.now();
      const result = await client.callTool({ name: 'dies', arguments: {} });
      expect(result.isError).toBe(true);
      expect(metaOf(result)['ai.cpz.gateway/error']).toBe('upstream_unavailable');
      // Far below the 1500 ms timeout: the broken stream failed the call, nothing waited for the timer.
      expect(performance.now() - started).toBeLessThan(1000);
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo');
    } finally {
      await client.close();
    }
  });

  it('answers isError upstream_timeout when the upstream never answers', async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      const result = await client.callTool({ name: 'hangs', arguments: {} });
      expect(result.isError).toBe(true);
      expect(metaOf(result)['ai.cpz.gateway/error']).toBe('upstream_timeout');
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo');
    } finally {
      await client.close();
    }
  });

  it('survives an upstream restart: pooled sockets to the old process are not reused, the next call succeeds', async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo');
      await upstream.stop();
      await upstream.start();
      expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toBe('echo');
    } finally {
      await client.close();
    }
  });

  it('answers isError while the upstream is down and succeeds once it is back', async () => {
    const client = await connectV2(`${gateway.url}/mcp`, ALICE);
    try {
      await upstream.stop();
      const down = await client.callTool({ name: 'echo', arguments: {} });
      expect(down.isError).toBe(true);
      await upstream.start();
      const back = await eventually(
        () => client.callTool({ name: 'echo', arguments: {} }),
        (result) => !result.isError && textOf(result) === 'echo',
      );
      expect(textOf(back)).toBe('echo');
    } finally {
      await client.close();
    }
  });
});

describe('the undici hop to a sessionful 2025-era upstream', () => {
  let legacy: FakeUpstream;
  let legacyGateway: RunningGateway;
  beforeAll(async () => {
    legacy = await startFakeUpstream({ era: 'legacy', sessions: true, tools: [whoamiTool], listChanged: true });
    legacyGateway = await startGatewayWith({ noScopeEndpoint: true, overrides: { upstreams: [{ name: 'legacy', url: legacy.url }] } });
  });
  afterAll(async () => {
    await legacyGateway?.close();
    await legacy?.close();
  });

  it('re-initialises once when the upstream forgets the session, and the call succeeds in the new session', async () => {
    const client = await connectV2(`${legacyGateway.url}/mcp`, ALICE);
    try {
      const whoami = async () => textOf(await client.callTool({ name: 'whoami', arguments: {} }));
      expect(await whoami()).toBe('alice@alice');
      const callSessions = () => legacy.received.filter((r) => r.method === 'tools/call').map((r) => r.session);
      // Sessions ever opened: forgetSessions() empties the live map, so count the initialize requests.
      const opened = () => legacy.received.filter((r) => r.method === 'initialize').length;
      const sessions = opened();
      const first = callSessions().at(-1);
      legacy.forgetSessions();
      expect(await whoami()).toBe('alice@alice');
      expect(opened()).toBe(sessions + 1);
      expect(callSessions().at(-1)).not.toBe(first);
      // And the new session sticks: no further initialize.
      expect(await whoami()).toBe('alice@alice');
      expect(opened()).toBe(sessions + 1);
    } finally {
      await client.close();
    }
  });
});
