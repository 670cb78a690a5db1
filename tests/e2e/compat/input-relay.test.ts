/**
 * Server-to-client requests of a 2025-era upstream relayed to the gateway's callers (issue 18): the
 * upstream (fixtures/fake-tools.ts startAskingUpstream: the fake upstream, legacy era, sessionful) asks
 * for an elicitation, a sampling or the roots in the middle of a call, on the call's stream.
 * - A 2026-07-28 caller gets an InputRequiredResult (spec 2026-07-28 basic/patterns/mrtr) and its retry
 *   resumes the same upstream call with the answers; driven by the v2 client, which fulfils input
 *   requests through its registered handlers and retries by itself.
 * - A 2025-era caller gets the upstream's request on its call's own SSE stream under an id the gateway
 *   issues, and answers in a POST of its own (2025-11-25 basic/transports), tied back by that id and
 *   the credential; driven by the v1 client, and raw where a test needs the wire (another credential,
 *   a caller that goes away).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { fetchWithHeaders } from '../../helpers/clients.ts';
import { startAskingUpstream } from '../../fixtures/fake-tools.ts';
import { startFakeUpstream } from '../../fixtures/fake-upstream.ts';
import { DATA_KEY, FULL_KEY, followSse, messagesOf, openStream, post, rpc } from '../../helpers/raw-mcp.ts';
import { startGatewayOver } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait.ts';

let upstream: Awaited<ReturnType<typeof startAskingUpstream>>;
let gateway: RunningGateway;
const url = () => `${gateway.url.replace(/\/mcp$/, '')}/mcp`;

beforeAll(async () => {
  upstream = await startAskingUpstream();
  gateway = await startGatewayOver(upstream.url);
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function modernClient(capabilities: Record<string, unknown>, seen: { method: string; params: unknown }[]): Promise<Client> {
  const client = new Client({ name: 'relay-tests', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  // The v2 client accepts a handler only for a capability it declares.
  if (capabilities.elicitation)
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push({ method: 'elicitation/create', params: request.params });
      return { action: 'accept', content: { name: 'Ada' } };
    });
  if (capabilities.sampling)
    client.setRequestHandler('sampling/createMessage', async (request) => {
      seen.push({ method: 'sampling/createMessage', params: request.params });
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'gateways relay' } };
    });
  if (capabilities.roots)
    client.setRequestHandler('roots/list', async () => {
      seen.push({ method: 'roots/list', params: {} });
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
  await client.connect(new StreamableHTTPClientTransport(new URL(url()), { fetch: fetchWithHeaders(FULL_KEY) }));
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('an upstream question quoting a secret of its configuration', () => {
  it('reaches the caller with the secret replaced, as its errors do (review)', async () => {
    const serving = gateway;
    // The key this gateway sends the upstream happens to be words of the upstream's question.
    gateway = await startGatewayOver(upstream.url, { headers: { 'X-Api-Key': 'your name' } });
    try {
      const seen: { method: string; params: unknown }[] = [];
      const client = await modernClient({ elicitation: { form: {} } }, seen);
      try {
        expect(text(await client.callTool({ name: 'ask_name', arguments: {} }))).toBe('hello Ada');
      } finally {
        await client.close();
      }
      expect(seen[0]!.params).toMatchObject({ message: 'What is [redacted]?' });
    } finally {
      await gateway.close();
      gateway = serving;
    }
  });
});

describe('a 2025-era upstream asking mid-call, a 2026-07-28 caller answering in band', () => {
  it('relays elicitation, sampling and roots, and the one upstream call finishes with the answers', async () => {
    const seen: { method: string; params: unknown }[] = [];
    const client = await modernClient({ elicitation: { form: {} }, sampling: {}, roots: {} }, seen);
    // This test's answers: the file's other tests' upstream calls are answered too.
    const answered = upstream.answers.length;
    try {
      expect(text(await client.callTool({ name: 'ask_name', arguments: {} }))).toBe('hello Ada');
      expect(text(await client.callTool({ name: 'summarise', arguments: {} }))).toBe('summary: gateways relay');
      expect(text(await client.callTool({ name: 'count_roots', arguments: {} }))).toBe('1 roots: file:///work');
    } finally {
      await client.close();
    }
    expect(seen.map((s) => s.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
    expect(seen[0]!.params).toMatchObject({ message: 'What is your name?', requestedSchema: { properties: { name: { type: 'string' } } } });
    const answers = upstream.answers.slice(answered);
    expect(answers.map((a) => a.tool)).toEqual(['ask_name', 'summarise', 'count_roots']);
    expect(answers[0]!.answer).toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  // The upstream's tool fails on the refusal; the caller is told what to declare: -32021 (2026-07-28 basic/index
  // §Error Codes; protocol try-out: it read as an isError result quoting the upstream's internal error).
  it('never asks a caller for what its capabilities do not offer: the upstream gets a refusal, the caller -32021 naming the capability', async () => {
    const seen: { method: string; params: unknown }[] = [];
    const client = await modernClient({}, seen);
    try {
      const failure = await client.callTool({ name: 'ask_name', arguments: {} }).then(
        () => undefined,
        (error: unknown) => error as { code?: number; data?: { requiredCapabilities?: unknown } },
      );
      expect(failure?.code).toBe(-32021);
      expect(failure?.data?.requiredCapabilities).toEqual({ elicitation: { form: {} } });
    } finally {
      await client.close();
    }
    expect(seen).toEqual([]);
  });

  // Only the upstream's own failure of the call is read as the refusal's: a call that then outlives the upstream's
  // timeoutMs may have run (a write), and its caller is told that, not -32021 (review of the -32021 change).
  it('keeps a timeout after the refusal as a timeout, not -32021', async () => {
    const waiting = await startFakeUpstream({
      era: 'legacy',
      sessions: true,
      tools: [
        {
          definition: { name: 'ask_then_wait', description: 'Asks for a name, then works past any timeout', inputSchema: { type: 'object' } },
          call: async (_args, { mcpReq }) => {
            await mcpReq.ask!({
              method: 'elicitation/create',
              params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } },
            }).catch(() => undefined);
            await new Promise((resolve) => setTimeout(resolve, 3_000));
            return { content: [{ type: 'text', text: 'done' }] };
          },
        },
      ],
    });
    const serving = gateway;
    gateway = await startGatewayOver(waiting.url, { timeoutMs: 400 });
    try {
      const client = await modernClient({}, []);
      try {
        const answer = await client.callTool({ name: 'ask_then_wait', arguments: {} }).then(
          (result) => ({ result: result as { isError?: boolean; content?: { text?: string }[] } }),
          (error: unknown) => ({ error: error as { code?: number; message?: string } }),
        );
        expect('error' in answer ? answer.error.code : undefined).not.toBe(-32021);
        expect(JSON.stringify(answer)).toMatch(/did not answer in time/);
      } finally {
        await client.close();
      }
    } finally {
      await gateway.close();
      gateway = serving;
      await waiting.close();
    }
  });
});

describe('a requestState retried under another name (security try-out)', () => {
  it('is refused on either endpoint, and the call it names still finishes with its own retry', async () => {
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
    const first = rpc('modern', 1, 'tools/call', { name: 'ask_name', arguments: {} });
    (first.body.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'] = meta['io.modelcontextprotocol/clientCapabilities'];
    const [asked] = await messagesOf(await post(url(), first.body, first.headers));
    const result = asked!.result as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    expect(result.resultType).toBe('input_required');
    const [key] = Object.keys(result.inputRequests);
    const retry = (name: string, path: string) => {
      const { body, headers } = rpc('modern', 2, 'tools/call', {
        name,
        arguments: {},
        requestState: result.requestState,
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Eve' } } },
      });
      return post(url().replace(/\/mcp$/, path), body, headers).then(messagesOf);
    };
    const answered = upstream.answers.length;
    for (const [name, path] of [
      ['summarise', '/mcp'],
      ['count_roots', '/mcp/compact'],
    ] as const) {
      const [refused] = await retry(name, path);
      expect(refused!.result).toMatchObject({
        isError: true,
        _meta: { 'ai.cpz.gateway/error': 'invalid_arguments' },
        content: [{ text: expect.stringContaining('requestState names no call waiting for input') }],
      });
    }
    expect(upstream.answers.length).toBe(answered);
    const [done] = await retry('ask_name', '/mcp');
    expect((done!.result as { content: { text: string }[] }).content[0]!.text).toBe('hello Eve');
  });
});

type Seen = { method: string; id: string | number; params: unknown };

/** A v1 (2025-era) client declaring `capabilities`, answering each declared method as the v2 one above does. */
async function legacyClient(
  capabilities: ClientCapabilities,
  seen: Seen[],
  elicit: () => Promise<Record<string, unknown>> = async () => ({ action: 'accept', content: { name: 'Ada' } }),
  target = url(),
): Promise<V1Client> {
  const client = new V1Client({ name: 'relay-v1', version: '1.0.0' }, { capabilities });
  if (capabilities.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      seen.push({ method: request.method, id: extra.requestId, params: request.params });
      return elicit() as never;
    });
  if (capabilities.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      seen.push({ method: request.method, id: extra.requestId, params: request.params });
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'gateways relay' } };
    });
  if (capabilities.roots)
    client.setRequestHandler(ListRootsRequestSchema, async (request, extra) => {
      seen.push({ method: request.method, id: extra.requestId, params: request.params });
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
  await client.connect(new V1Transport(new URL(target), { requestInit: { headers: { ...FULL_KEY } } }));
  return client;
}

const ALL = { elicitation: {}, sampling: {}, roots: {} };
const GATEWAY_ID = /^gw-ask-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The answer POST of a 2025-era client: one JSON-RPC response, with the caller's credential. */
const answerPost = (id: unknown, result: Record<string, unknown>, key: Record<string, string> = FULL_KEY) =>
  post(url(), { jsonrpc: '2.0', id, result }, { ...rpc('legacy', 1, 'ping').headers, ...key });

describe('a 2025-era upstream asking mid-call, a 2025-era caller answering on the call stream', () => {
  // A plain tools/call takes the fast path (fast-path.ts); a progress token takes the SDK path (mcp/server.ts).
  describe.each([
    ['the fast path', '/mcp', undefined],
    ['the SDK path', '/mcp', { onprogress: () => {} }],
    // config/conformance.yaml lists no anchors and the fixture's tools are not read-only: /mcp/compact offers them directly.
    ['the fast path', '/mcp/compact', undefined],
  ])('through %s on %s', (_path, endpoint, options) => {
    it('relays elicitation, sampling and roots as requests with gateway-issued ids; the one upstream call finishes with the answers', async () => {
      const seen: Seen[] = [];
      const client = await legacyClient(ALL, seen, undefined, `${gateway.url}${endpoint}`);
      const before = upstream.answers.length;
      try {
        expect(text(await client.callTool({ name: 'ask_name', arguments: {} }, undefined, options))).toBe('hello Ada');
        expect(text(await client.callTool({ name: 'summarise', arguments: {} }, undefined, options))).toBe('summary: gateways relay');
        expect(text(await client.callTool({ name: 'count_roots', arguments: {} }, undefined, options))).toBe('1 roots: file:///work');
      } finally {
        await client.close();
      }
      expect(seen.map((s) => s.method)).toEqual(['elicitation/create', 'sampling/createMessage', 'roots/list']);
      expect(seen[0]!.params).toMatchObject({ message: 'What is your name?', requestedSchema: { properties: { name: { type: 'string' } } } });
      // The gateway's own ids (not the upstream's small integers), one per question.
      for (const { id } of seen) expect(String(id)).toMatch(GATEWAY_ID);
      expect(new Set(seen.map((s) => s.id)).size).toBe(3);
      expect(upstream.answers.slice(before)).toEqual([
        { tool: 'ask_name', answer: { action: 'accept', content: { name: 'Ada' } } },
        { tool: 'summarise', answer: { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'gateways relay' } } },
        { tool: 'count_roots', answer: { roots: [{ uri: 'file:///work', name: 'work' }] } },
      ]);
    });
  });

  it("accepts the answer only from the caller's credential: another one, or an id never issued, gets 400 as unknown", async () => {
    const { headers, body } = rpc('legacy', 7, 'tools/call', { name: 'ask_name', arguments: {} });
    const stream = await openStream(url(), body, headers);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const sse = followSse(stream);
    const asked = await sse.waitFor((m) => m.method === 'elicitation/create');
    expect(String(asked.id)).toMatch(GATEWAY_ID);

    const refusals = [
      await answerPost(asked.id, { action: 'accept', content: { name: 'Mallory' } }, DATA_KEY),
      await answerPost(`gw-ask-${crypto.randomUUID()}`, { action: 'accept', content: { name: 'Mallory' } }),
    ];
    const bodies = await Promise.all(refusals.map((r) => r.json()));
    expect(refusals.map((r) => r.status)).toEqual([400, 400]);
    for (const refused of bodies) expect(refused).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    // One answer for both: nothing tells an id of another credential from one never issued.
    expect(bodies[0].error.message).toBe(bodies[1].error.message);

    const accepted = await answerPost(asked.id, { action: 'accept', content: { name: 'Grace' } });
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe('');
    const final = await sse.waitFor((m) => m.id === 7);
    expect(final.result?.content).toEqual([{ type: 'text', text: 'hello Grace' }]);
    // Answered once: the same answer again is unknown.
    expect((await answerPost(asked.id, { action: 'accept', content: { name: 'Grace' } })).status).toBe(400);
  });

  it('gives the question up when the caller goes away: the upstream call is cancelled and a late answer is unknown', async () => {
    const { headers, body } = rpc('legacy', 8, 'tools/call', { name: 'ask_name', arguments: {} });
    const stream = await openStream(url(), body, headers);
    const asked = await followSse(stream).waitFor((m) => m.method === 'elicitation/create');
    const cancelled = () => cancelledCount(gateway.url);
    const before = await cancelled();
    stream.destroy();
    await waitFor('the upstream call to be cancelled', async () => (await cancelled()) > before);
    expect((await answerPost(asked.id, { action: 'accept', content: { name: 'Late' } })).status).toBe(400);
  });

  it('refuses the upstream (-32601) when the answer is JSON, which carries nothing but the response', async () => {
    const { headers, body } = rpc('legacy', 9, 'tools/call', { name: 'ask_name', arguments: {} });
    const response = await post(url(), body, { ...headers, accept: 'application/json' });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = (await response.json()) as { id: number; result: { isError?: boolean; content: { text: string }[] } };
    expect(answer.id).toBe(9);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]!.text).toMatch(/-32601/);
  });

  it('relays to a client that did not declare the capability, which refuses it itself (-32601): nothing is kept of its initialize', async () => {
    const seen: Seen[] = [];
    const client = await legacyClient({}, seen);
    // What the v1 client answers a method it has no handler for, observed.
    client.fallbackRequestHandler = async (request) => {
      seen.push({ method: request.method, id: request.id, params: request.params });
      throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    };
    try {
      const result = (await client.callTool({ name: 'summarise', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/-32601/);
    } finally {
      await client.close();
    }
    expect(seen.map((s) => s.method)).toEqual(['sampling/createMessage']);
  });
});

describe('a 2025-era caller that never answers', () => {
  let quick: RunningGateway;
  beforeAll(async () => {
    quick = await startGatewayOver(upstream.url, { timeoutMs: 1500 });
  });
  afterAll(async () => {
    await quick?.close();
  });

  it("gets an error result once the upstream's timeoutMs is spent, and its late answer is unknown", async () => {
    const seen: Seen[] = [];
    let release!: (answer: Record<string, unknown>) => void;
    const held = new Promise<Record<string, unknown>>((resolve) => (release = resolve));
    const lateAnswers: unknown[] = [];
    const client = await legacyClient({ elicitation: {} }, seen, () => held, `${quick.url}/mcp`);
    client.onerror = (error) => lateAnswers.push(error.message);
    try {
      const result = (await client.callTool({ name: 'ask_name', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/did not answer in time/);
      expect(seen.map((s) => s.method)).toEqual(['elicitation/create']);
      // The client answers after all: its POST is refused as unknown (400; the v1 client reports the body on onerror).
      release({ action: 'accept', content: { name: 'Late' } });
      await waitFor('the late answer to be refused', () => lateAnswers.some((m) => String(m).includes('no request this gateway is waiting on')));
      // The gateway still relays the next question.
      release = () => {};
      const next = await legacyClient({ elicitation: {} }, [], async () => ({ action: 'accept', content: { name: 'Ada' } }), `${quick.url}/mcp`);
      try {
        expect(text(await next.callTool({ name: 'ask_name', arguments: {} }))).toBe('hello Ada');
      } finally {
        await next.close();
      }
    } finally {
      await client.close();
    }
  });
});

/** mcp_upstream_errors_total{kind="cancelled"} of the gateway at `base` (metrics on the same port). */
async function cancelledCount(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mcp_upstream_errors_total{') && l.includes('kind="cancelled"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
