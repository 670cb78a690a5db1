/**
 * One case per wire rule the SDK owns, answered by the fast path and by the SDK path (a second gateway
 * with `dispatch.fastPath: false`) in process: the same status, content type and bytes. Cache hints
 * (2026-07-28 tools/list), projection by era (non-object structuredContent, a non-object outputSchema
 * root), JSON-RPC error framing (-32602 with data), SSE framing (the 2025 stateless leg).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, IN_PROCESS_BASE, type InProcessGateway } from '../helpers/in-process.ts';
import type { FakeUpstreamOptions } from '../fixtures/fake-upstream.ts';

type Era = 'legacy' | 'modern';
const CALLER = { authorization: 'Bearer wire-caller' };

const tool = (name: string, outputSchema?: Record<string, unknown>) =>
  ({
    name,
    description: `${name} (wire test)`,
    inputSchema: { type: 'object', properties: {} },
    ...(outputSchema ? { outputSchema } : {}),
    annotations: { readOnlyHint: true },
  }) as Tool;

const upstream: FakeUpstreamOptions = {
  tools: [
    { definition: tool('array_result', { type: 'array', items: { type: 'number' } }), call: () => ({ content: [], structuredContent: [1, 2, 3] as never }) },
    {
      definition: tool('object_result', { type: 'object', properties: { n: { type: 'number' } } }),
      call: () => ({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }),
    },
    { definition: tool('plain_text'), call: () => ({ content: [{ type: 'text', text: 'hello' }] }) },
  ],
};

/** A request as the SDK clients put it on the wire (tests/fixtures/rpc-requests.ts documents the capture). */
function request(era: Era, path: string, method: string, params?: Record<string, unknown>): Request {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...CALLER };
  let body: Record<string, unknown>;
  if (era === 'legacy') {
    headers['mcp-protocol-version'] = '2025-11-25';
    body = { method, ...(params ? { params } : {}), jsonrpc: '2.0', id: 1 };
  } else {
    headers['mcp-protocol-version'] = '2026-07-28';
    headers['mcp-method'] = method;
    if (typeof params?.name === 'string') headers['mcp-name'] = params.name;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    body = { method, jsonrpc: '2.0', id: 1, params: { ...params, _meta } };
  }
  return new Request(new URL(path, IN_PROCESS_BASE), { method: 'POST', headers, body: JSON.stringify(body) });
}

interface Answer {
  status: number;
  type: string;
  fastPath: boolean;
  text: string;
}

async function answer(gateway: InProcessGateway, req: Request): Promise<Answer> {
  const response = await gateway.fetch(req);
  // The fast path sends a Content-Length; the SDK handler streams.
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    fastPath: response.headers.get('content-length') !== null,
    text: await response.text(),
  };
}

/** The JSON-RPC message of an answer: the body, or the data of its one SSE `message` event. */
function messageOf(a: Answer): string {
  return a.type.startsWith('text/event-stream') ? /^event: message\ndata: (.*)\n\n$/s.exec(a.text)![1]! : a.text;
}

let fast: InProcessGateway;
let sdk: InProcessGateway;
beforeAll(() => {
  fast = inProcessGateway({}, { fake: upstream });
  sdk = inProcessGateway({ dispatch: { fastPath: false } }, { fake: upstream });
});
afterAll(async () => {
  await fast?.close();
  await sdk?.close();
});

const CASES: { rule: string; method: string; params?: Record<string, unknown>; check: (message: Record<string, unknown>, era: Era) => void }[] = [
  {
    rule: 'cache hints: tools/list is private, 0 ms, on 2026-07-28 only',
    method: 'tools/list',
    check: (m, era) => expect((m.result as Record<string, unknown>).cacheScope).toBe(era === 'modern' ? 'private' : undefined),
  },
  {
    rule: 'projection of tools/list: a non-object outputSchema root is wrapped as { result } on 2025 (SEP-2106)',
    method: 'tools/list',
    check: (m, era) => {
      const array = (m.result as { tools: Tool[] }).tools.find((t) => t.name === 'array_result')!;
      expect(array.outputSchema?.type).toBe(era === 'legacy' ? 'object' : 'array');
    },
  },
  {
    rule: 'projection: a non-object structuredContent gets a text block, and { result } on 2025',
    method: 'tools/call',
    params: { name: 'array_result', arguments: {} },
    check: (m, era) => {
      const result = m.result as { structuredContent: unknown; content: { text?: string }[] };
      expect(result.content.at(-1)?.text).toBe('[1,2,3]');
      expect(result.structuredContent).toEqual(era === 'legacy' ? { result: [1, 2, 3] } : [1, 2, 3]);
    },
  },
  {
    rule: 'projection: an object structuredContent passes as it is',
    method: 'tools/call',
    params: { name: 'object_result', arguments: {} },
    check: (m) => expect((m.result as { structuredContent: unknown }).structuredContent).toEqual({ n: 1 }),
  },
  {
    rule: 'error framing: an unknown tool is -32602 with the nearest names in data',
    method: 'tools/call',
    params: { name: 'plain_txt', arguments: {} },
    check: (m) => expect(m.error).toMatchObject({ code: -32602 }),
  },
];

describe('the wire rules the SDK owns: fast path and SDK path give the same bytes', () => {
  for (const era of ['legacy', 'modern'] as const) {
    for (const c of CASES) {
      it(`${era}: ${c.rule}`, async () => {
        const a = await answer(fast, request(era, '/mcp', c.method, c.params));
        const b = await answer(sdk, request(era, '/mcp', c.method, c.params));
        expect(a.fastPath).toBe(true);
        expect(b.fastPath).toBe(false);
        expect({ status: a.status, type: a.type }).toEqual({ status: b.status, type: b.type });
        expect(messageOf(a)).toBe(messageOf(b));
        c.check(JSON.parse(messageOf(a)) as Record<string, unknown>, era);
      });
    }
    it(`${era}: SSE framing: ${era === 'legacy' ? 'the 2025 stateless leg answers one SSE message event' : '2026-07-28 answers application/json'}`, async () => {
      const a = await answer(fast, request(era, '/mcp', 'tools/call', { name: 'plain_text', arguments: {} }));
      const b = await answer(sdk, request(era, '/mcp', 'tools/call', { name: 'plain_text', arguments: {} }));
      expect(a.type).toBe(b.type);
      expect(a.type.startsWith(era === 'legacy' ? 'text/event-stream' : 'application/json')).toBe(true);
      expect(a.text).toBe(b.text);
    });
  }
});
