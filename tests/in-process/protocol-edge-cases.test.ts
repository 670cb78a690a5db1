/**
 * Protocol edge cases through the gateway in process, with the fake upstream's relay tools behind it over HTTP
 * (the undici hop forwards, as in production; spec 2026-07-28 basic/transports/streamable-http, basic/versioning, basic/patterns; 2025-11-25
 * for the legacy leg). Raw requests, so the tests see exactly the bytes a client would.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, inProcessGatewayOver, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { ACCEPT_BOTH, FULL_KEY, LEGACY, MODERN, followSse, messagesOf, openStream, post, rpc } from '../helpers/raw-mcp.ts';
import { startRelayUpstream } from '../fixtures/fake-tools.ts';

let upstream: Awaited<ReturnType<typeof startRelayUpstream>>;
let gateway: InProcessGateway;

beforeAll(async () => {
  upstream = await startRelayUpstream();
  gateway = inProcessGatewayOver(upstream.url);
});
afterAll(async () => {
  try {
    await gateway?.close();
  } finally {
    await upstream?.close();
  }
});

const LEGACY_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

describe.each(['/mcp', '/mcp/compact'])('gateway %s', (path) => {
  const url = () => `${gateway.gatewayUrl}${path}`;

  it('answers a notification with 202 and an empty body', async () => {
    const { headers, body } = rpc('legacy', undefined, 'notifications/initialized');
    const response = await post(url(), body, headers);
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it.each(['2024-10-07', '2024-11-05', '2025-06-18', LEGACY, MODERN])(
    'refuses a JSON-RPC batch with 400/-32600 under MCP-Protocol-Version %s',
    async (version) => {
      const { headers } = rpc('legacy', 1, 'tools/list');
      const batch = [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }));
      const response = await post(url(), batch, { ...headers, 'mcp-protocol-version': version });
      expect(response.status).toBe(400);
      const [answer] = await messagesOf(response);
      expect(answer?.error?.code).toBe(-32600);
    },
  );

  it('refuses a 2025-03-26 batch with two requests under one id, naming both, instead of answering one', async () => {
    const { headers } = rpc('legacy', 1, 'tools/list');
    const batch = [1, 2, 1].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
    const response = await post(url(), batch, { ...headers, 'mcp-protocol-version': '2025-03-26' });
    expect(response.status).toBe(400);
    const [answer] = await messagesOf(response);
    expect(answer?.error?.code).toBe(-32600);
    expect(answer?.error?.message).toBe('Invalid Request: the body is a batch whose requests /0/id and /2/id are both 1, not a JSON-RPC request object');
    const distinct = await post(
      url(),
      [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' })),
      { ...headers, 'mcp-protocol-version': '2025-03-26' },
    );
    expect(distinct.status).toBe(200);
    expect((await messagesOf(distinct)).map((m) => m.id).sort()).toEqual([1, 2]);
  });

  it('refuses a header/_meta protocol version disagreement with 400/-32020', async () => {
    const { headers, body } = rpc('modern', 1, 'tools/list');
    const response = await post(url(), body, { ...headers, 'mcp-protocol-version': LEGACY });
    expect(response.status).toBe(400);
    const [answer] = await messagesOf(response);
    expect(answer?.error?.code).toBe(-32020);
    expect(answer?.id).toBe(1);
  });

  // 2026-07-28 basic/versioning: UnsupportedProtocolVersionError; data.supported as server/discover, the message both eras;
  // 2025-11-25 basic/transports: an unsupported MCP-Protocol-Version header is 400 as well.
  it.each([
    ['a claim and header of 2099-01-01', 'modern', '2099-01-01', '2099-01-01'],
    ['a header of 2099-01-01 on a body without _meta', 'legacy', '2099-01-01', undefined],
    ['a header of 1999-01-01 on a body without _meta', 'legacy', '1999-01-01', undefined],
    ['a header that is no revision at all', 'legacy', 'latest', undefined],
    // `curl -H 'MCP-Protocol-Version;'`: before (try-out), read as no header by the edge and refused by the SDK's 2025 leg (-32000, id null).
    ['an empty header on a body without _meta', 'legacy', '', undefined],
  ] as const)('refuses %s with 400/-32022 naming every served revision', async (_what, era, header, claim) => {
    const { headers, body } = rpc(era, 7, 'tools/list');
    if (claim) (body.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'] = claim;
    const response = await post(url(), body, { ...headers, 'mcp-protocol-version': header });
    expect(response.status).toBe(400);
    const requested = claim ?? header;
    const supported = ['2026-07-28', ...LEGACY_REVISIONS];
    expect(await messagesOf(response)).toEqual([
      {
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32022,
          message: `Unsupported protocol version: "${requested}"; this gateway serves ${supported.join(', ')}`,
          data: { kind: 'unsupported_protocol_version', supported: ['2026-07-28'], requested },
        },
      },
    ]);
  });

  it('refuses a served 2025 revision claimed in the 2026-07-28 envelope with 400/-32022 saying where it is served (wire try-out)', async () => {
    const { headers, body } = rpc('modern', 7, 'tools/list');
    (body.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'] = '2025-11-25';
    const response = await post(url(), body, { ...headers, 'mcp-protocol-version': '2025-11-25' });
    expect(response.status).toBe(400);
    const [answer] = (await messagesOf(response)) as { error: { code: number; message: string; data: unknown } }[];
    expect(answer!.error.code).toBe(-32022);
    expect(answer!.error.message).toBe(
      'Unsupported protocol version: "2025-11-25" in the _meta envelope, which only 2026-07-28 requests carry; 2025-11-25 is served after initialize, without the envelope',
    );
    expect(answer!.error.data).toEqual({ kind: 'unsupported_protocol_version', supported: ['2026-07-28'], requested: '2025-11-25' });
  });

  it('names the kind of a malformed message the SDK refuses (a response carrying both result and error): invalid_request (client try-out: no data.kind)', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const { headers } = rpc(era, 1, 'ping');
      delete headers['mcp-method'];
      const response = await post(url(), { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } }, headers);
      expect(response.status, era).toBe(400);
      const [answer] = (await messagesOf(response)) as { error: { code: number; data?: unknown } }[];
      expect(answer!.error, era).toMatchObject({ code: -32600, data: { kind: 'invalid_request' } });
    }
  });

  it('refuses the same at once when that envelope holds nothing else (client try-out: told first to add clientCapabilities, then the revision)', async () => {
    for (const method of ['tools/list', 'ping']) {
      const body = { jsonrpc: '2.0', id: 8, method, params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } };
      const response = await post(url(), body, { ...rpc('legacy', 8, method).headers, 'mcp-protocol-version': '2025-11-25' });
      expect(response.status, method).toBe(400);
      const [answer] = (await messagesOf(response)) as { error: { code: number; message: string } }[];
      expect(answer!.error).toMatchObject({
        code: -32022,
        message: expect.stringContaining('"2025-11-25" in the _meta envelope, which only 2026-07-28 requests carry'),
      });
    }
  });

  it.each(['latest', ''])('refuses a batch under the MCP-Protocol-Version header %j with 400/-32022, as a single request', async (header) => {
    const { headers } = rpc('legacy', 1, 'tools/list');
    const batch = [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
    const response = await post(url(), batch, { ...headers, 'mcp-protocol-version': header });
    expect(response.status).toBe(400);
    expect(await messagesOf(response)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32022,
          message: `Unsupported protocol version: ${JSON.stringify(header)}; this gateway serves ${['2026-07-28', ...LEGACY_REVISIONS].join(', ')}`,
          data: { kind: 'unsupported_protocol_version', supported: ['2026-07-28'], requested: header },
        },
      },
    ]);
  });

  it('answers initialize asking for 2026-07-28 with a legacy revision', async () => {
    const response = await post(
      url(),
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'compat', version: '1' } } },
      { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...FULL_KEY },
    );
    expect(response.status).toBe(200);
    const [answer] = await messagesOf(response);
    expect(LEGACY_REVISIONS).toContain(answer?.result?.protocolVersion);
  });

  it.each(['modern', 'legacy'] as const)('ignores an invented Mcp-Session-Id (%s) and mints none', async (era) => {
    const { headers, body } = rpc(era, 3, 'tools/list');
    const response = await post(url(), body, { ...headers, 'mcp-session-id': 'invented-session-0001' });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const [answer] = await messagesOf(response);
    expect(answer?.result?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'echo' })]));
  });

  it.each([
    ['modern', 'application/json'],
    ['modern', '*/*'],
    ['legacy', 'application/json'],
    ['legacy', '*/*'],
  ] as const)('answers a %s request with Accept: %s as JSON', async (era, accept) => {
    const { headers, body } = rpc(era, 4, 'tools/call', { name: 'echo', arguments: { value: 'json please' } });
    const response = await post(url(), body, { ...headers, accept });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = (await response.json()) as { id: number; result: { content: { text: string }[] } };
    expect(answer.id).toBe(4);
    expect(answer.result.content[0]?.text).toBe('json please');
  });

  it.each(['modern', 'legacy'] as const)('gives each of 12 concurrent %s tools/call with JSON-RPC id 1 its own answer', async (era) => {
    const values = Array.from({ length: 12 }, (_, i) => `call-${i}-${era}`);
    const answers = await Promise.all(
      values.map(async (value) => {
        const { headers, body } = rpc(era, 1, 'tools/call', { name: 'echo', arguments: { value } });
        const messages = await messagesOf(await post(url(), body, headers));
        const final = messages.find((message) => message.id === 1);
        return (final?.result?.content as { text: string }[] | undefined)?.[0]?.text;
      }),
    );
    expect(answers).toEqual(values);
  });

  it.each(['modern', 'legacy'] as const)('streams %s progress with the client progressToken before the result, unbuffered and uncompressed', async (era) => {
    const token = `client-token-${era}-${path}`;
    const { headers, body } = rpc(era, 9, 'tools/call', { name: 'gated_progress', arguments: {}, _meta: { progressToken: token } });
    const stream = await openStream(url(), body, { ...headers, 'accept-encoding': 'gzip, deflate, br' });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['content-encoding']).toBeUndefined();
    const sse = followSse(stream);
    // The upstream holds the result until the gate opens, so this progress can only be here if the
    // gateway relayed it while the call was still running (not buffered until the end).
    const first = await sse.waitFor((message) => message.method === 'notifications/progress');
    expect(first.params?.progressToken).toBe(token);
    expect(sse.seen.some((message) => message.id === 9)).toBe(false);
    upstream.releaseGate();
    const result = await sse.waitFor((message) => message.id === 9);
    expect(result.result?.content).toEqual([{ type: 'text', text: 'released' }]);
    const progress = sse.seen.filter((message) => message.method === 'notifications/progress');
    expect(progress.map((message) => message.params?.progressToken)).toEqual([token, token]);
    expect(sse.seen.indexOf(result)).toBe(sse.seen.length - 1);
  });
});

describe('cancellation of an in-flight tools/call reaches the upstream', () => {
  const cancelledUpstreamIds = () => [
    ...upstream.abortedCalls,
    ...upstream.received.filter((r) => r.method === 'notifications/cancelled').map((r) => r.params.requestId as string | number),
  ];

  async function expectUpstreamCancelled(startedBefore: number, abort: () => void) {
    await vi.waitFor(() => expect(upstream.startedCalls.length).toBe(startedBefore + 1), { timeout: 10_000 });
    const upstreamId = upstream.startedCalls[startedBefore]!;
    abort();
    // The upstream must see the cancellation of ITS request id (not the client's).
    await vi.waitFor(() => expect(cancelledUpstreamIds()).toContain(upstreamId), { timeout: 10_000 });
  }

  it('from a v1 client (2025-11-25, notifications/cancelled)', async () => {
    const client = new V1Client({ name: 'compat-v1', version: '1.0.0' });
    await client.connect(new V1Transport(new URL(`${gateway.gatewayUrl}/mcp`), { requestInit: { headers: { ...FULL_KEY } }, fetch: routedFetch }));
    try {
      const controller = new AbortController();
      const started = upstream.startedCalls.length;
      const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, { signal: controller.signal }).catch((error) => error);
      await expectUpstreamCancelled(started, () => controller.abort('test cancels'));
      expect(await call).toBeInstanceOf(Error);
    } finally {
      await client.close();
    }
  });

  it('from a v2 client pinned to 2026-07-28 (closing the response stream)', async () => {
    const client = new Client({ name: 'compat-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.gatewayUrl}/mcp`), { requestInit: { headers: { ...FULL_KEY } }, fetch: routedFetch }),
    );
    try {
      const controller = new AbortController();
      const started = upstream.startedCalls.length;
      const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, { signal: controller.signal }).catch((error) => error);
      await expectUpstreamCancelled(started, () => controller.abort('test cancels'));
      expect(await call).toBeInstanceOf(Error);
    } finally {
      await client.close();
    }
  });
});

/**
 * A gateway over an upstream whose read-only slow_read runs until the upstream's request is aborted or `finish` is
 * called: `running` once it started, `state.aborted` whether the abort came.
 */
function slowReadGateway() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const state = { aborted: false };
  const slow = inMemoryFakeUpstream({
    tools: [
      {
        definition: { name: 'slow_read', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        call: async (_args, { mcpReq }) => {
          started();
          const aborted = new Promise<void>((resolve) => mcpReq.signal.addEventListener('abort', () => ((state.aborted = true), resolve()), { once: true }));
          await Promise.race([finished, aborted]);
          return { content: [{ type: 'text', text: state.aborted ? 'cancelled' : 'done' }] };
        },
      },
    ],
  });
  return { own: inProcessGateway({}, { upstreams: { slow } }), running, finish, state };
}

describe('a read cancelled by a 2025-11-25 notifications/cancelled', () => {
  it('is answered as not answering, not as never executed: it had started (client try-out)', async () => {
    const { own, running, finish } = slowReadGateway();
    try {
      const { headers, body } = rpc('legacy', 'cancel-me', 'tools/call', { name: 'slow_read', arguments: {} });
      // The 2025 answer opens once there is something to send on it: asked, not awaited, before the cancel.
      const opened = openStream(String(own.mcpUrl), body, headers);
      await running;
      const cancel = rpc('legacy', undefined, 'notifications/cancelled', { requestId: 'cancel-me', reason: 'test cancels' });
      expect((await post(String(own.mcpUrl), cancel.body, cancel.headers)).status).toBe(202);
      const answer = await followSse(await opened).waitFor((m) => m.id === 'cancel-me');
      expect(answer.result).toMatchObject({
        isError: true,
        content: [{ text: expect.stringMatching(/^Tool "slow_read" did not answer: the request was cancelled/) }],
      });
    } finally {
      finish();
      await own.close();
    }
  });
});

describe('a 2026-07-28 notifications/cancelled', () => {
  it('has no effect on a 2025-era call of the same id (protocol try-out: it cancelled one)', async () => {
    const { own, running, finish, state } = slowReadGateway();
    try {
      const { headers, body } = rpc('legacy', 'shared-id', 'tools/call', { name: 'slow_read', arguments: {} });
      const opened = openStream(String(own.mcpUrl), body, headers);
      await running;
      const cancel = rpc('modern', undefined, 'notifications/cancelled', { requestId: 'shared-id', reason: 'not yours' });
      expect((await post(String(own.mcpUrl), cancel.body, cancel.headers)).status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(state.aborted).toBe(false);
      finish();
      const answer = await followSse(await opened).waitFor((m) => m.id === 'shared-id');
      expect(answer.result).toMatchObject({ content: [{ text: 'done' }] });
    } finally {
      finish();
      await own.close();
    }
  });
});
