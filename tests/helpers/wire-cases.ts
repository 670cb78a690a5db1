/**
 * The cases of tests/in-process/wire.test.ts (one per wire rule the SDK owns) and the requests they
 * send, shared with tests/in-process/wire-oracle.test.ts, which runs the SDK's own classifier and codec
 * beside the gateway's on each of them.
 */
import { expect } from 'vitest';
import { ProtocolError, type Tool } from '@modelcontextprotocol/server';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { IN_PROCESS_BASE } from './in-process.ts';
import { relayTools } from '../fixtures/fake-tools.ts';
import type { FakeTool } from '../fixtures/fake-upstream.ts';

export type Era = 'legacy' | 'modern';
export const CALLER = { authorization: 'Bearer wire-caller' };
/** The fake clock's start (Date only; timers run). */
export const T0 = Date.UTC(2026, 6, 28, 12, 0, 0);
/** The caller's scope entry lives this long (`scopes.ttlMs`); the 2025-era upstream's catalogue `cache.ttlMs` (60 s, no hints). */
export const SCOPE_TTL_MS = 30_000;
export const CATALOG_TTL_MS = 60_000;

export const tool = (name: string, extra: Partial<Tool> = {}) =>
  ({ name, description: `${name} (wire test)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true }, ...extra }) as Tool;
export const text = (t: string) => [{ type: 'text' as const, text: t }];

/** A non-object outputSchema root with what the SDK's 2025 wrap rewrites: `$schema`, `$defs` and a `$ref` into them. */
export const REF_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'array',
  items: { $ref: '#/$defs/point' },
  $defs: { point: { type: 'object', properties: { x: { type: 'number' }, label: { const: '#/$defs/point' } } } },
};

export const TOOLS: FakeTool[] = [
  {
    definition: tool('array_result', { outputSchema: { type: 'array', items: { type: 'number' } } }),
    call: () => ({ content: [], structuredContent: [1, 2, 3] as never }),
  },
  {
    definition: tool('object_result', { outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }),
    call: () => ({ content: text('{"n":1}'), structuredContent: { n: 1 } }),
  },
  { definition: tool('ref_result', { outputSchema: REF_SCHEMA }), call: () => ({ content: text('points'), structuredContent: [{ x: 1 }] as never }) },
  { definition: tool('plain_text'), call: () => ({ content: text('hello') }) },
  { definition: tool('escaped_text'), call: () => ({ content: text('Zürich ✓ "quoted" \\ line\nbreak \u2028 tab\t <script>') }) },
  { definition: tool('failing'), call: () => ({ content: text('platform said no'), isError: true }) },
  { definition: tool('own_meta'), call: () => ({ content: text('meta'), _meta: { 'example.com/trace': 'abc' } }) },
  { definition: tool('extra_fields'), call: () => ({ content: text('extra'), extension: { kept: true } }) as never },
  { definition: tool('no_content'), call: () => ({ structuredContent: { n: 2 } }) as never },
  {
    definition: tool('rejects'),
    call: () => {
      throw new ProtocolError(-32050, 'needs a ticket', { ticket: 'T-1' });
    },
  },
  ...relayTools().tools.filter((t) => ['ask_name', 'needs_sampling'].includes(t.definition.name)),
];

/** A 2025-era upstream (v1 SDK), which sends what a 2026-07-28 one would not: -32002, a tool's `execution`. */
export const LEGACY_TOOLS: FakeTool[] = [
  // A 2026-07-28 upstream's codec strips `execution` itself: a 2025 one sends it.
  { definition: tool('task_capable', { execution: { taskSupport: 'optional' } } as Partial<Tool>), call: () => ({ content: text('ran') }) },
  {
    definition: tool('vanished'),
    call: () => {
      throw new McpError(-32002, 'Resource not found: file:///gone', { uri: 'file:///gone' });
    },
  },
];

/** A request as the SDK clients put it on the wire (tests/fixtures/rpc-requests.ts documents the capture). */
export function request(
  era: Era,
  method: string,
  params?: Record<string, unknown>,
  id: string | number = 1,
  capabilities: Record<string, unknown> = {},
  extraHeaders: Record<string, string> = {},
): Request {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...CALLER, ...extraHeaders };
  let body: Record<string, unknown>;
  if (era === 'legacy') {
    headers['mcp-protocol-version'] = '2025-11-25';
    body = { method, ...(params ? { params } : {}), jsonrpc: '2.0', id };
  } else {
    headers['mcp-protocol-version'] = '2026-07-28';
    headers['mcp-method'] = method;
    if (typeof params?.name === 'string') headers['mcp-name'] = params.name;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    };
    body = { method, jsonrpc: '2.0', id, params: { ...params, _meta } };
  }
  return new Request(new URL('/mcp', IN_PROCESS_BASE), { method: 'POST', headers, body: JSON.stringify(body) });
}

const listed = (m: Record<string, unknown>, name: string) => (m.result as { tools: Tool[] }).tools.find((t) => t.name === name)!;
const resultOf = (m: Record<string, unknown>) => m.result as Record<string, unknown> & { content: { text?: string }[] };

export interface Case {
  rule: string;
  method: string;
  params?: Record<string, unknown>;
  id?: string | number;
  /** Only on this era (a 2026-07-28 rule). */
  era?: Era;
  /** Behind the 2025-era upstream. */
  legacyUpstream?: boolean;
  /** The caller's 2026-07-28 client capabilities. */
  capabilities?: Record<string, unknown>;
  /**
   * The fake clock, in ms after {@link T0}: `caller` (a bearer token of its own, so its scope entry and
   * catalogue copy are its own) lists tools on both gateways at `primeAt`, then the case runs at `at`.
   */
  clock?: { caller: string; primeAt: number; at: number };
  /** What the answer must show, so the case tests the rule and not only agreement. */
  check: (message: Record<string, unknown>, era: Era, status: number) => void;
}

export const CASES: Case[] = [
  {
    rule: "cache hints: tools/list is private, on 2026-07-28 only, 0 ms behind an upstream that says 0 (the SDK's default hint)",
    method: 'tools/list',
    check: (m, era) => {
      expect(resultOf(m).cacheScope).toBe(era === 'modern' ? 'private' : undefined);
      expect(resultOf(m).ttlMs).toBe(era === 'modern' ? 0 : undefined);
    },
  },
  {
    rule: "cache hints: a private tools/list's ttlMs is what is left of the caller's scope entry",
    era: 'modern',
    legacyUpstream: true,
    method: 'tools/list',
    // Scope entry and catalogue copy made 1,234 ms ago: the scope entry (30 s) ends first.
    clock: { caller: 'wire-aged', primeAt: 100_000, at: 101_234 },
    check: (m) => expect(resultOf(m).ttlMs).toBe(SCOPE_TTL_MS - 1234),
  },
  {
    rule: "cache hints: a private tools/list's ttlMs is what is left of the catalogue copy when that ends first",
    era: 'modern',
    legacyUpstream: true,
    method: 'tools/list',
    // 40 s on, the scope entry was renewed (it ended at 30 s): the catalogue copy (60 s) now ends first, in 20 s.
    clock: { caller: 'wire-late', primeAt: 200_000, at: 240_000 },
    check: (m) => expect(resultOf(m).ttlMs).toBe(CATALOG_TTL_MS - 40_000),
  },
  {
    rule: 'result type and identity on tools/list: resultType complete and serverInfo on 2026-07-28',
    method: 'tools/list',
    check: (m, era) => {
      expect(resultOf(m).resultType).toBe(era === 'modern' ? 'complete' : undefined);
      expect((resultOf(m)._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/serverInfo']).toEqual(
        era === 'modern' ? { name: 'mcp-catalog-gateway', version: '0.1.0' } : undefined,
      );
    },
  },
  {
    rule: "deleted fields: a tool's execution is not sent on 2026-07-28",
    legacyUpstream: true,
    method: 'tools/list',
    check: (m, era) => expect('execution' in listed(m, 'task_capable')).toBe(era === 'legacy'),
  },
  {
    rule: 'projection of tools/list: a non-object outputSchema root is wrapped as { result } on 2025 (SEP-2106)',
    method: 'tools/list',
    check: (m, era) => expect(listed(m, 'array_result').outputSchema?.type).toBe(era === 'legacy' ? 'object' : 'array'),
  },
  {
    rule: 'projection of tools/list: the 2025 wrap hoists $schema and rewrites $refs into the wrapped root',
    method: 'tools/list',
    check: (m, era) => {
      const schema = listed(m, 'ref_result').outputSchema as Record<string, unknown>;
      if (era === 'modern') return void expect(schema).toEqual(REF_SCHEMA);
      expect(schema.$schema).toBe(REF_SCHEMA.$schema);
      expect(JSON.stringify(schema)).toContain('"$ref":"#/properties/result/$defs/point"');
      // A data value that looks like a pointer is data: never rewritten.
      expect(JSON.stringify(schema)).toContain('"const":"#/$defs/point"');
    },
  },
  {
    rule: 'projection: a non-object structuredContent gets a text block, and { result } on 2025',
    method: 'tools/call',
    params: { name: 'array_result', arguments: {} },
    check: (m, era) => {
      expect(resultOf(m).content.at(-1)?.text).toBe('[1,2,3]');
      expect(resultOf(m).structuredContent).toEqual(era === 'legacy' ? { result: [1, 2, 3] } : [1, 2, 3]);
    },
  },
  {
    rule: 'projection: an object structuredContent passes as it is',
    method: 'tools/call',
    params: { name: 'object_result', arguments: {} },
    check: (m) => expect(resultOf(m).structuredContent).toEqual({ n: 1 }),
  },
  {
    rule: 'projection: a structuredContent under a non-object schema root with $refs is wrapped on 2025',
    method: 'tools/call',
    params: { name: 'ref_result', arguments: {} },
    check: (m, era) => expect(resultOf(m).structuredContent).toEqual(era === 'legacy' ? { result: [{ x: 1 }] } : [{ x: 1 }]),
  },
  {
    rule: 'result type and identity on tools/call: resultType complete, serverInfo on 2026-07-28',
    method: 'tools/call',
    params: { name: 'plain_text', arguments: {} },
    check: (m, era) => {
      expect(resultOf(m).resultType).toBe(era === 'modern' ? 'complete' : undefined);
      expect(resultOf(m).ttlMs).toBeUndefined();
    },
  },
  {
    rule: "identity beside the result's own _meta keys",
    method: 'tools/call',
    params: { name: 'own_meta', arguments: {} },
    check: (m, era) => {
      const meta = resultOf(m)._meta as Record<string, unknown>;
      expect(meta['example.com/trace']).toBe('abc');
      expect(meta['io.modelcontextprotocol/serverInfo'] !== undefined).toBe(era === 'modern');
    },
  },
  {
    rule: 'result type: input_required is kept on tools/call (2026-07-28)',
    era: 'modern',
    capabilities: { elicitation: { form: {} } },
    method: 'tools/call',
    params: { name: 'ask_name', arguments: {} },
    check: (m) => expect(resultOf(m)).toMatchObject({ resultType: 'input_required', requestState: 'round-1' }),
  },
  {
    rule: 'the CallToolResult schema: unknown fields kept',
    method: 'tools/call',
    params: { name: 'extra_fields', arguments: {} },
    check: (m) => expect(resultOf(m).extension).toEqual({ kept: true }),
  },
  {
    rule: 'the CallToolResult schema: content defaulted to []',
    method: 'tools/call',
    params: { name: 'no_content', arguments: {} },
    check: (m) => expect(resultOf(m).structuredContent).toEqual({ n: 2 }),
  },
  {
    rule: 'an isError result passes as it is',
    method: 'tools/call',
    params: { name: 'failing', arguments: {} },
    check: (m) => expect(resultOf(m)).toMatchObject({ isError: true, content: text('platform said no') }),
  },
  {
    rule: 'serialisation: escapes and non-ASCII text, a string id',
    method: 'tools/call',
    params: { name: 'escaped_text', arguments: {} },
    id: 'id "7" ✓',
    check: (m) => {
      expect(m.id).toBe('id "7" ✓');
      expect(resultOf(m).content[0]?.text).toContain('Zürich ✓');
    },
  },
  {
    rule: 'error framing: an unknown tool is -32602 with the nearest names in data',
    method: 'tools/call',
    params: { name: 'plain_txt', arguments: {} },
    check: (m) => expect(m.error).toMatchObject({ code: -32602, data: expect.anything() }),
  },
  {
    rule: "error framing: the upstream's JSON-RPC error with its code, message and data",
    method: 'tools/call',
    params: { name: 'rejects', arguments: {} },
    check: (m) => expect(m.error).toMatchObject({ code: -32050, message: 'needs a ticket', data: { ticket: 'T-1' } }),
  },
  {
    rule: 'error framing: -32021 (missing client capability) under HTTP 400 on 2026-07-28',
    era: 'modern',
    method: 'tools/call',
    params: { name: 'needs_sampling', arguments: {} },
    check: (m, _era, status) => {
      expect(m.error).toMatchObject({ code: -32021 });
      expect(status).toBe(400);
    },
  },
  {
    // The SDK's encoder sends every -32002 as -32602; the gateway keeps the 2025 code for 2025 callers
    // (gateway-server.ts, wire/error-translation.ts): both paths must agree on that too.
    rule: "error codes: a 2025 upstream's -32002 stays -32002 for 2025 callers, is -32602 on 2026-07-28",
    legacyUpstream: true,
    method: 'tools/call',
    params: { name: 'vanished', arguments: {} },
    check: (m, era) => expect(m.error).toMatchObject({ code: era === 'legacy' ? -32002 : -32602 }),
  },
  {
    rule: 'SSE framing: one SSE message event on the 2025 stateless leg, JSON on 2026-07-28',
    method: 'tools/call',
    params: { name: 'plain_text', arguments: {} },
    check: () => undefined,
  },
];
