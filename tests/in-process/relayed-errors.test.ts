/**
 * An upstream's JSON-RPC error as the caller receives it (errors.ts RelayedUpstreamError,
 * upstream/forwarding.ts forwardError), with two upstreams so the exposed names differ from the
 * upstream's: an SDK v1 upstream writes "MCP error -32602: " into its message (McpError's own message),
 * which is dropped; `data` gains the gateway's `kind` (upstream_rejected) and the upstream's name beside
 * the upstream's own keys; the upstream's bare tool name is replaced by the exposed one where the
 * message quotes it as a whole name. An isError tools/call result (an SDK v1 McpServer's argument
 * validation) gets the exposed name too but keeps its "MCP error N: ", the only place it carries the code;
 * a result that is no error is the tool's output, left alone.
 */
import { McpError as V1McpError, ErrorCode as V1ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY, messagesOf, post, rpc } from '../helpers/raw-mcp.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;

const SERVICE_KEY = 'wx-SECRET-svc-9f8e7d';

/** config/conformance.yaml with the `notes` upstream, sent SERVICE_KEY in a header, and `others` after it. */
const notesConfig = (others: Record<string, unknown>[] = []) =>
  loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      log: { level: 'silent' },
      upstreams: [{ name: 'notes', url: 'http://notes.upstream.invalid/mcp', headers: { 'X-Service-Key': SERVICE_KEY } }, ...others],
    },
  });

let gateway: InProcessGateway;
beforeAll(() => {
  const notes = inMemoryFakeUpstream({
    era: 'legacy',
    resources: { 'notes://readme': 'readme' },
    tools: [
      {
        definition: { name: 'slow_echo', inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } } },
        // What an SDK v1 McpServer answers for arguments its schema refuses (its message quotes the tool's own name).
        call: () => {
          throw new V1McpError(
            V1ErrorCode.InvalidParams,
            'Input validation error: Invalid arguments for tool slow_echo: seconds: Expected number; see slow_echo_v2 or slow_echo.md',
          );
        },
      },
      {
        // A read whose server throws a JSON-RPC error of its own (a low-level server's handler failing).
        definition: { name: 'exploding_read', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        call: () => {
          throw new V1McpError(V1ErrorCode.InternalError, 'kaboom in the reader');
        },
      },
      {
        // A backend error quoting the service key the gateway's configuration sends this upstream (try-out).
        definition: { name: 'leaky_read', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        call: () => {
          throw new V1McpError(-32000, `backend failed with key ${SERVICE_KEY}`, { sent: { key: SERVICE_KEY }, attempt: 1 });
        },
      },
      {
        // An upstream that echoes the caller's own input in its error.
        definition: { name: 'echoing_read', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        call: (args) => {
          throw new V1McpError(-32000, `no such note: ${String(args.id)}`);
        },
      },
      {
        // A tool named with a plain word, which its own error text uses as prose too (operator try-out).
        definition: { name: 'search', inputSchema: { type: 'object' } },
        call: () => ({
          content: [
            {
              type: 'text',
              text: "search backend down: the search index is rebuilding, retry search later (Invalid arguments for tool search; see 'search'; Unknown tool: search)",
            },
          ],
          isError: true,
        }),
      },
      {
        // What an SDK v1 McpServer answers for arguments its inputSchema refuses: an isError result.
        definition: { name: 'checked_echo', inputSchema: { type: 'object' } },
        call: (args) =>
          args.ok
            ? { content: [{ type: 'text', text: 'checked_echo answered' }] }
            : {
                content: [{ type: 'text', text: 'MCP error -32602: Input validation error: Invalid arguments for tool checked_echo: msg: Required' }],
                isError: true,
              },
      },
    ],
  });
  const other = inMemoryFakeUpstream({ tools: [{ definition: { name: 'ping', inputSchema: { type: 'object' } } }] });
  const config = notesConfig([{ name: 'other', url: 'http://other.upstream.invalid/mcp', forwardCredentials: true, scopeRules: {}, anchors: [] }]);
  gateway = inProcessGateway(config, { upstreams: { notes, other } });
});
afterAll(async () => {
  await gateway?.close();
});

async function errorOf(era: 'modern' | 'legacy', method: string, params: Record<string, unknown>) {
  const { headers, body } = rpc(era, 7, method, params);
  const [answer] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY }));
  return answer?.error as { code: number; message: string; data?: Record<string, unknown> } | undefined;
}

describe.each(['modern', 'legacy'] as const)('an upstream JSON-RPC error relayed to a %s caller', (era) => {
  it('resources/read: the message without "MCP error -32602: ", data with kind upstream_rejected and the upstream', async () => {
    const error = await errorOf(era, 'resources/read', { uri: 'notes://nope' });
    expect(error?.message).toBe('Resource notes://nope not found');
    expect(error?.data).toMatchObject({ kind: 'upstream_rejected', upstream: 'notes' });
  });

  it('tools/call: the exposed name where the message quotes the upstream own name, longer names left alone', async () => {
    const error = await errorOf(era, 'tools/call', { name: 'notes__slow_echo', arguments: { seconds: 'x' } });
    expect(error?.code).toBe(-32602);
    expect(error?.message).toBe(
      'Input validation error: Invalid arguments for tool notes__slow_echo: seconds: Expected number; see slow_echo_v2 or slow_echo.md',
    );
    expect(error?.data).toMatchObject({ kind: 'upstream_rejected', upstream: 'notes' });
  });

  it('tools/call answered isError: its text in the exposed name, its "MCP error -32602: " kept; a result that is no error left alone', async () => {
    const { headers, body } = rpc(era, 8, 'tools/call', { name: 'notes__checked_echo', arguments: {} });
    const [answer] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY }));
    expect(answer?.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'MCP error -32602: Input validation error: Invalid arguments for tool notes__checked_echo: msg: Required' }],
    });
    const ok = rpc(era, 9, 'tools/call', { name: 'notes__checked_echo', arguments: { ok: true } });
    const [answered] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, ok.body, { ...ok.headers, ...FULL_KEY }));
    expect(answered?.result).toMatchObject({ content: [{ type: 'text', text: 'checked_echo answered' }] });
  });

  it('tools/call answered isError by a tool named with a plain word: renamed only where the text names the tool (operator try-out)', async () => {
    const { headers, body } = rpc(era, 10, 'tools/call', { name: 'notes__search', arguments: {} });
    const [answer] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY }));
    expect(answer?.result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: "search backend down: the search index is rebuilding, retry search later (Invalid arguments for tool notes__search; see 'notes__search'; Unknown tool: notes__search)",
        },
      ],
    });
  });
});

describe.each(['modern', 'legacy'] as const)("an upstream JSON-RPC error of call_tool's target, %s caller", (era) => {
  it("is call_tool's isError result, naming the upstream and its code (a direct call relays the error as it came)", async () => {
    const { headers, body } = rpc(era, 10, 'tools/call', { name: 'call_tool', arguments: { name: 'notes__exploding_read', arguments: {} } });
    const [answer] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp/compact`, body, { ...headers, ...FULL_KEY }));
    expect(answer?.error).toBeUndefined();
    expect(answer?.result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: expect.stringMatching(
            /^Tool "notes__exploding_read" could not be executed: upstream notes answered JSON-RPC error -32603: .*kaboom in the reader/,
          ),
        },
      ],
      _meta: { 'ai.cpz.gateway/error': 'upstream_rejected' },
    });
    expect((await errorOf(era, 'tools/call', { name: 'notes__exploding_read', arguments: {} }))?.code).toBe(-32603);
  });
});

describe.each(['modern', 'legacy'] as const)('an upstream JSON-RPC error quoting a secret of its configuration, %s caller', (era) => {
  it('reaches the caller, directly and through call_tool, with the secret replaced (try-out: a viewer key read the service key)', async () => {
    const error = await errorOf(era, 'tools/call', { name: 'notes__leaky_read', arguments: {} });
    expect(error).toMatchObject({ code: -32000, message: 'backend failed with key [redacted]', data: { sent: { key: '[redacted]' }, attempt: 1 } });
    const { headers, body } = rpc(era, 11, 'tools/call', { name: 'call_tool', arguments: { name: 'notes__leaky_read', arguments: {} } });
    const [answer] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp/compact`, body, { ...headers, ...FULL_KEY }));
    expect(JSON.stringify(answer)).toContain('backend failed with key [redacted]');
    expect(JSON.stringify(answer)).not.toContain(SERVICE_KEY);
  });
});

describe.each(['modern', 'legacy'] as const)('an upstream echoing the caller input, %s caller', (era) => {
  it('sends the caller its own input as it was: a secret it sent itself is not masked, so masking confirms no guess (security try-out)', async () => {
    const guesses = ['wx-SECRET-svc-0000', SERVICE_KEY, 'wx-SECRET-svc-9f8e7e'].join(' ');
    const error = await errorOf(era, 'tools/call', { name: 'notes__echoing_read', arguments: { id: guesses } });
    expect(error?.message).toBe(`no such note: ${guesses}`);
  });
});

describe('an upstream that fails its handshake quoting a secret of its configuration', () => {
  it('is refused to callers with the secret replaced (review: the connect error carried it as the upstream wrote it)', async () => {
    // Every request answered with a JSON-RPC error quoting the key the gateway sends it.
    const refusing = {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = input instanceof Request && init === undefined ? input : new Request(input, init);
        const body = request.method === 'POST' ? ((await request.json().catch(() => ({}))) as { id?: unknown }) : {};
        const error = { code: -32000, message: `backend refused key ${SERVICE_KEY}` };
        return Response.json({ jsonrpc: '2.0', id: body.id ?? null, error }, { status: 200 });
      },
      close: async () => {},
    };
    const failing = inProcessGateway(notesConfig(), { upstreams: { notes: refusing as never } });
    try {
      for (const era of ['modern', 'legacy'] as const) {
        const { headers, body } = rpc(era, 12, 'tools/list', {});
        const answer = await (await post(`${failing.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY })).text();
        expect(answer).toContain('backend refused key [redacted]');
        expect(answer).not.toContain(SERVICE_KEY);
      }
      expect(failing.logs.text).not.toContain(SERVICE_KEY);
    } finally {
      await failing.close();
    }
  });
});

describe("an upstream quoting a secret of its configuration in a tool's error result, a log message or a progress message", () => {
  it('reaches a 2025-era caller with the secret replaced (second review: only JSON-RPC errors were masked)', async () => {
    const leaky = inMemoryFakeUpstream({
      era: 'legacy',
      logging: true,
      tools: [
        {
          definition: { name: 'leaky_call', inputSchema: { type: 'object' } },
          call: async (_args, { mcpReq }) => {
            await mcpReq.log('error', `backend refused key ${SERVICE_KEY}`);
            const progressToken = mcpReq._meta?.progressToken;
            await mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, message: `using ${SERVICE_KEY}` } });
            return { isError: true, content: [{ type: 'text', text: `backend failed with key ${SERVICE_KEY}` }] };
          },
        },
      ],
    });
    const quoting = inProcessGateway(notesConfig(), { upstreams: { notes: leaky } });
    try {
      const { headers, body } = rpc('legacy', 13, 'tools/call', { name: 'leaky_call', arguments: {}, _meta: { progressToken: 'p1' } });
      const answer = JSON.stringify(await messagesOf(await post(`${quoting.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY })));
      expect(answer).toContain('backend failed with key [redacted]');
      expect(answer).toContain('backend refused key [redacted]');
      expect(answer).toContain('using [redacted]');
      expect(answer).not.toContain(SERVICE_KEY);
    } finally {
      await quoting.close();
    }
  });

  it('leaves a short configured value alone in names, lists and successful results: only a credential-length secret is masked there (review)', async () => {
    const upstream = inMemoryFakeUpstream({
      era: 'modern',
      tools: [
        {
          definition: { name: 'postgres_query', inputSchema: { type: 'object', properties: { engine: { enum: ['postgres', 'mysql'] } } } },
          call: async () => ({ content: [{ type: 'text', text: 'postgres://host/db' }], structuredContent: { postgres: 'postgres://host/db' } }),
        },
      ],
    });
    const config = loadConfig({
      path: CONFORMANCE_CONFIG,
      env: {},
      overrides: {
        listen: { host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
        upstreams: [{ name: 'notes', url: 'http://notes.upstream.invalid/mcp', headers: { 'X-Api-Key': 'postgres' } }],
      },
    });
    const plain = inProcessGateway(config, { upstreams: { notes: upstream } });
    try {
      const listed = rpc('modern', 15, 'tools/list', {});
      const [list] = await messagesOf(await post(`${plain.gatewayUrl}/mcp`, listed.body, { ...listed.headers, ...FULL_KEY }));
      expect(JSON.stringify(list)).toContain('"postgres_query"');
      expect(JSON.stringify(list)).not.toContain('[redacted]');
      const called = rpc('modern', 16, 'tools/call', { name: 'postgres_query', arguments: {} });
      const [answer] = await messagesOf(await post(`${plain.gatewayUrl}/mcp`, called.body, { ...called.headers, ...FULL_KEY }));
      expect(answer?.result).toMatchObject({ structuredContent: { postgres: 'postgres://host/db' } });
    } finally {
      await plain.close();
    }
  });

  it.each(['modern', 'legacy'] as const)(
    'reaches a %s caller with the secret replaced in a successful result too (security try-out: a tool echoed the service key)',
    async (era) => {
      const echoing = inMemoryFakeUpstream({
        era,
        tools: [
          {
            definition: {
              name: 'echo_headers',
              inputSchema: { type: 'object' },
              outputSchema: { type: 'object', properties: { seen: { type: 'string' } } },
            },
            call: async () => ({ content: [{ type: 'text', text: `ok service key ${SERVICE_KEY}` }], structuredContent: { seen: `key=${SERVICE_KEY}` } }),
          },
        ],
      });
      const quoting = inProcessGateway(notesConfig(), { upstreams: { notes: echoing } });
      try {
        const { headers, body } = rpc(era, 14, 'tools/call', { name: 'echo_headers', arguments: {} });
        const [answer] = await messagesOf(await post(`${quoting.gatewayUrl}/mcp`, body, { ...headers, ...FULL_KEY }));
        expect(answer?.result).toMatchObject({ content: [{ type: 'text', text: 'ok service key [redacted]' }], structuredContent: { seen: 'key=[redacted]' } });
        expect(JSON.stringify(answer)).not.toContain(SERVICE_KEY);
      } finally {
        await quoting.close();
      }
    },
  );
});
