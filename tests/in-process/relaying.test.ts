/**
 * What the gateway relays between a caller and its upstream, with real clients, the gateway in process and
 * the fake upstream's relay tools behind it over HTTP, so the undici hop carries the forwards as in
 * production (conformance gaps of 2026-11-30): in-band input requests (2026-07-28
 * InputRequiredResult) with the caller's client capabilities; the upstream's JSON-RPC errors with their
 * data's keys unchanged (the gateway's kind and upstream beside); log messages at the caller's level; the 2025 session methods (logging/setLevel,
 * resources/subscribe, forwarded to a 2025-era upstream); SEP-2243 Mcp-Param-* headers checked on the
 * gateway's side and built for the upstream.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessGatewayOver, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { startFakeUpstream, type FakeUpstream } from '../fixtures/fake-upstream.ts';
import { FULL_KEY, MODERN, messagesOf, post, rpc, type JsonRpcMessage } from '../helpers/raw-mcp.ts';
import { legacyLogsTool, startRelayUpstream } from '../fixtures/fake-tools.ts';

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

/** Upstream-side tools/call messages of `tool`, in arrival order. */
const upstreamCalls = (tool: string) => upstream.received.filter((r) => r.method === 'tools/call' && r.params.name === tool);
const metaOf = (message: { params?: Record<string, unknown> }) => (message.params?._meta ?? {}) as Record<string, unknown>;
const textOf = (message: JsonRpcMessage | undefined) => (message?.result?.content as { text: string }[] | undefined)?.[0]?.text;

async function connectModern(url: string, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'relay-v2', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { ...FULL_KEY } }, fetch: routedFetch }));
  return client;
}

async function connectLegacy(url: string): Promise<V1Client> {
  const client = new V1Client({ name: 'relay-v1', version: '1.0.0' });
  await client.connect(new V1Transport(new URL(url), { requestInit: { headers: { ...FULL_KEY } }, fetch: routedFetch }));
  return client;
}

describe.each(['/mcp', '/mcp/compact'])('gateway %s', (path) => {
  const url = () => `${gateway.gatewayUrl}${path}`;

  it('relays an input_required result and the retry: a v2 client fulfils the elicitation in-band', async () => {
    const client = await connectModern(url(), { elicitation: { form: {} } });
    try {
      client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
      const before = upstreamCalls('ask_name').length;
      const result = await client.callTool({ name: 'ask_name', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada (state round-1)' }]);
      const [first, retry] = upstreamCalls('ask_name').slice(before);
      // The upstream saw the caller's capabilities (not the gateway's own) and the retry's fields byte for byte.
      expect(metaOf(first!)['io.modelcontextprotocol/clientCapabilities']).toEqual({ elicitation: { form: {} } });
      expect(retry!.params.requestState).toBe('round-1');
      expect(retry!.params.inputResponses).toEqual({ name: { action: 'accept', content: { name: 'Ada' } } });
    } finally {
      await client.close();
    }
  });

  it('answers a raw 2026-07-28 call with resultType input_required, as the upstream asked', async () => {
    const { headers, body } = rpc('modern', 21, 'tools/call', { name: 'ask_name', arguments: {} });
    (body.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'] = { elicitation: {} };
    const response = await post(url(), body, headers);
    expect(response.status).toBe(200);
    const answer = (await messagesOf(response)).find((m) => m.id === 21);
    expect(answer?.result?.resultType).toBe('input_required');
    expect(answer?.result?.requestState).toBe('round-1');
    expect(answer?.result?.inputRequests).toEqual({ name: expect.objectContaining({ method: 'elicitation/create' }) });
  });

  it('relays the upstream -32021 with its requiredCapabilities and HTTP 400 for a caller that declared none', async () => {
    const { headers, body } = rpc('modern', 22, 'tools/call', { name: 'needs_sampling', arguments: {} });
    const response = await post(url(), body, headers);
    expect(response.status).toBe(400);
    const [answer] = await messagesOf(response);
    expect(answer?.id).toBe(22);
    expect(answer?.error?.code).toBe(-32021);
    expect(answer?.error?.data).toEqual({ requiredCapabilities: { sampling: {} }, kind: 'upstream_rejected', upstream: 'fixture' });
  });

  it.each(['modern', 'legacy'] as const)(
    "relays an upstream JSON-RPC error (%s) with code, message and data, the gateway's kind and upstream beside",
    async (era) => {
      const { headers, body } = rpc(era, 23, 'resources/read', { uri: 'test://missing' });
      const [direct] = await messagesOf(await post(upstream.url, body, headers));
      const [relayed] = await messagesOf(await post(url(), body, headers));
      expect(direct?.error?.code).toBeTypeOf('number');
      const data = { ...(direct?.error?.data as object), kind: 'upstream_rejected', upstream: 'fixture' };
      // The upstream (SDK v2) answers a missing resource -32602 with data.uri in either era; a 2025-era caller is told
      // -32002, its revision's resource-not-found (wire/error-translation.ts), the upstream's code beside it.
      expect(relayed?.error).toEqual(
        era === 'legacy' && direct?.error?.code === -32602
          ? { ...direct.error, code: -32002, data: { ...data, upstreamCode: -32602 } }
          : { ...direct?.error, data },
      );
    },
  );

  it('relays upstream log messages to a 2026-07-28 caller at the logLevel it asked for, and none without one', async () => {
    const call = async (id: number, logLevel?: string) => {
      const { headers, body } = rpc('modern', id, 'tools/call', {
        name: 'log_steps',
        arguments: {},
        ...(logLevel ? { _meta: { 'io.modelcontextprotocol/logLevel': logLevel } } : {}),
      });
      const messages = await messagesOf(await post(url(), body, headers));
      expect(textOf(messages.find((m) => m.id === id))).toBe('logged');
      return messages.filter((m) => m.method === 'notifications/message').map((m) => m.params?.data);
    };
    expect(await call(24, 'info')).toEqual(['step 2', 'step 3']);
    expect(metaOf(upstreamCalls('log_steps').at(-1)!)['io.modelcontextprotocol/logLevel']).toBe('info');
    expect(await call(25)).toEqual([]);
  });

  it('serves a v1 client logging/setLevel and relays every log message of its calls (2025-11-25)', async () => {
    const client = await connectLegacy(url());
    try {
      expect(client.getServerCapabilities()?.logging).toEqual({});
      const logs: unknown[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params.data));
      expect(await client.setLoggingLevel('debug')).toEqual({});
      const result = await client.callTool({ name: 'log_steps', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'logged' }]);
      expect(logs).toEqual(['step 1', 'step 2', 'step 3']);
    } finally {
      await client.close();
    }
  });

  it('serves a v1 client resources/subscribe and unsubscribe for an upstream that declares subscriptions', async () => {
    const client = await connectLegacy(url());
    try {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      expect(await client.subscribeResource({ uri: 'test://watched' })).toEqual({});
      expect(await client.unsubscribeResource({ uri: 'test://watched' })).toEqual({});
    } finally {
      await client.close();
    }
    const modern = await connectModern(url());
    try {
      // On 2026-07-28 `subscribe` promises resourceSubscriptions on subscriptions/listen, which the gateway
      // relays to this 2026-07-28 upstream's own listen stream (tests/compat/resource-subscriptions.test.ts).
      expect(modern.getServerCapabilities()?.resources?.subscribe).toBe(true);
    } finally {
      await modern.close();
    }
  });

  describe('Mcp-Param-* headers (SEP-2243)', () => {
    const callRegional = (id: number, args: Record<string, unknown>, param?: string) => {
      const { headers, body } = rpc('modern', id, 'tools/call', { name: 'regional_echo', arguments: args });
      return post(url(), body, param === undefined ? headers : { ...headers, 'mcp-param-region': param });
    };

    it.each([
      ['a plain value', 'eu-west'],
      ['a Base64 sentinel value', `=?base64?${Buffer.from('eu-west').toString('base64')}?=`],
    ])('accepts %s that matches the body and forwards the header upstream', async (_what, param) => {
      const before = upstreamCalls('regional_echo').length;
      const response = await callRegional(31, { region: 'eu-west', text: 'hi' }, param);
      expect(response.status).toBe(200);
      expect(textOf((await messagesOf(response)).find((m) => m.id === 31))).toBe('eu-west:hi');
      expect(
        upstreamCalls('regional_echo')
          .slice(before)
          .map((r) => r.headers['mcp-param-region']),
      ).toEqual(['eu-west']);
    });

    it.each([
      ['disagrees with the body', 'us-east'],
      ['is missing while the body has a value', undefined],
      ['is invalid Base64', '=?base64?ZXUtd2VzdA?='],
    ])('refuses a header that %s with 400/-32020 before anything reaches the upstream', async (_what, param) => {
      const before = upstreamCalls('regional_echo').length;
      const response = await callRegional(32, { region: 'eu-west', text: 'hi' }, param);
      expect(response.status).toBe(400);
      const [answer] = await messagesOf(response);
      expect(answer?.id).toBe(32);
      expect(answer?.error?.code).toBe(-32020);
      expect(answer?.error?.message).toContain('Mcp-Param-Region');
      expect(upstreamCalls('regional_echo').length).toBe(before);
    });

    it('needs no header when the argument is absent', async () => {
      const response = await callRegional(33, { text: 'no region' });
      expect(response.status).toBe(200);
      expect(textOf((await messagesOf(response)).find((m) => m.id === 33))).toBe('-:no region');
    });

    it('builds the header for the upstream from a 2025-era call, which carries none', async () => {
      const before = upstreamCalls('regional_echo').length;
      const { headers, body } = rpc('legacy', 34, 'tools/call', { name: 'regional_echo', arguments: { region: 'Zürich', text: 'grüezi' } });
      const response = await post(url(), body, headers);
      expect(textOf((await messagesOf(response)).find((m) => m.id === 34))).toBe('Zürich:grüezi');
      expect(
        upstreamCalls('regional_echo')
          .slice(before)
          .map((r) => r.headers['mcp-param-region']),
      ).toEqual([`=?base64?${Buffer.from('Zürich').toString('base64')}?=`]);
    });

    it('works with a v2 client, which mirrors the argument itself from tools/list', async () => {
      const client = await connectModern(url());
      try {
        const { tools } = await client.listTools();
        const listed = tools.find((t) => t.name === 'regional_echo');
        expect((listed?.inputSchema.properties?.region as Record<string, unknown>)['x-mcp-header']).toBe('Region');
        const result = await client.callTool({ name: 'regional_echo', arguments: { region: 'eu-north', text: 'hej' } });
        expect(result.content).toEqual([{ type: 'text', text: 'eu-north:hej' }]);
      } finally {
        await client.close();
      }
    });
  });
});

describe('Mcp-Param-* headers of a tool /mcp/compact does not list (read-only: found with search_tools)', () => {
  const compactUrl = () => `${gateway.gatewayUrl}/mcp/compact`;

  it('builds the header for the upstream when the tool runs through call_tool', async () => {
    const before = upstreamCalls('regional_lookup').length;
    const { headers, body } = rpc('modern', 41, 'tools/call', {
      name: 'call_tool',
      arguments: { name: 'regional_lookup', arguments: { region: 'ap-south', text: 'x' } },
    });
    const response = await post(compactUrl(), body, headers);
    expect(textOf((await messagesOf(response)).find((m) => m.id === 41))).toBe('ap-south:x');
    expect(
      upstreamCalls('regional_lookup')
        .slice(before)
        .map((r) => r.headers['mcp-param-region']),
    ).toEqual(['ap-south']);
  });

  it('does not refuse a direct call without the header (its caller had no definition to mirror), and sends the upstream one built from the body', async () => {
    const client = await connectModern(compactUrl());
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('regional_lookup');
      const before = upstreamCalls('regional_lookup').length;
      const result = await client.callTool({ name: 'regional_lookup', arguments: { region: 'sa-east', text: 'oi' } });
      expect(result.content).toEqual([{ type: 'text', text: 'sa-east:oi' }]);
      expect(
        upstreamCalls('regional_lookup')
          .slice(before)
          .map((r) => r.headers['mcp-param-region']),
      ).toEqual(['sa-east']);
    } finally {
      await client.close();
    }
  });

  it('is checked on /mcp, which lists it', async () => {
    const { headers, body } = rpc('modern', 42, 'tools/call', { name: 'regional_lookup', arguments: { region: 'sa-east' } });
    const response = await post(`${gateway.gatewayUrl}/mcp`, body, headers);
    expect(response.status).toBe(400);
    expect((await messagesOf(response))[0]?.error?.code).toBe(-32020);
  });
});

describe('in front of a 2025-era upstream (v1 SDK, stateless)', () => {
  let legacyUpstream: FakeUpstream;
  let legacyGateway: InProcessGateway;
  beforeAll(async () => {
    legacyUpstream = await startFakeUpstream({
      era: 'legacy',
      tools: [legacyLogsTool],
      logging: true,
      listChanged: true,
      resources: { 'test://watched': 'watched' },
    });
    legacyGateway = inProcessGatewayOver(legacyUpstream.url);
  });
  afterAll(async () => {
    try {
      await legacyGateway?.close();
    } finally {
      await legacyUpstream?.close();
    }
  });
  const received = (method: string) => legacyUpstream.received.filter((r) => r.method === method);

  it('forwards logging/setLevel, resources/subscribe and unsubscribe with the caller credential', async () => {
    const client = await connectLegacy(`${legacyGateway.gatewayUrl}/mcp`);
    try {
      expect(await client.setLoggingLevel('warning')).toEqual({});
      expect(await client.subscribeResource({ uri: 'test://watched' })).toEqual({});
      expect(await client.unsubscribeResource({ uri: 'test://watched' })).toEqual({});
    } finally {
      await client.close();
    }
    expect(received('logging/setLevel').map((r) => [r.params.level, r.caller])).toEqual([['warning', FULL_KEY['x-cpz-key']]]);
    expect(received('resources/subscribe').map((r) => [r.params.uri, r.caller])).toEqual([['test://watched', FULL_KEY['x-cpz-key']]]);
    expect(received('resources/unsubscribe').map((r) => r.params.uri)).toEqual(['test://watched']);
  });

  it('relays the log messages of a call to a v1 client, and to a 2026-07-28 caller at its logLevel', async () => {
    const client = await connectLegacy(`${legacyGateway.gatewayUrl}/mcp`);
    try {
      const logs: unknown[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params.data));
      await client.callTool({ name: 'legacy_logs', arguments: {} });
      expect(logs).toEqual(['legacy info', 'legacy debug']);
    } finally {
      await client.close();
    }
    const { headers, body } = rpc('modern', 51, 'tools/call', { name: 'legacy_logs', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
    const messages = await messagesOf(await post(`${legacyGateway.gatewayUrl}/mcp`, body, headers));
    expect(textOf(messages.find((m) => m.id === 51))).toBe('legacy logged');
    expect(messages.filter((m) => m.method === 'notifications/message').map((m) => m.params?.data)).toEqual(['legacy info']);
    // A 2025-era upstream gets no 2026 envelope keys.
    const lastCall = received('tools/call').at(-1)!;
    expect(Object.keys((lastCall.params._meta ?? {}) as object).filter((k) => k.startsWith('io.modelcontextprotocol/'))).toEqual([]);
  });
});
