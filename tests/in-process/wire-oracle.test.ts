/**
 * The SDK as the oracle of the gateway's wire module (gateway/wire/): the SDK's own classifier, server,
 * client and codecs run beside the gateway's code on the same input, so a copy of an SDK rule cannot
 * drift from it unnoticed. Each part runs every request or result of tests/in-process/wire.test.ts
 * (tests/helpers/wire-cases.ts) plus a generated corpus (a seeded generator: the same cases every run).
 * - classification (http/classify.ts, wire/requests.ts): what the edge refuses on the SDK's behalf is
 *   what an SDK handler answers, byte for byte in the JSON-RPC error; a plain request (the fast path's)
 *   is one the SDK routes to the same era and serves; nothing the edge admits is refused by the SDK's
 *   entry (no HTTP 400).
 * - server codec (wire/server-codec.ts): a tools/call or tools/list answer the fast path writes is the
 *   JSON-RPC message an SDK Server answering the same result writes, both eras.
 * - revisions (wire/revisions.ts): the served revisions are those the SDK serves (server/discover, initialize).
 * - client codec (wire/client-codec.ts, sse.ts, param-value.ts): `Mcp-Name` and `Mcp-Param-*` values as
 *   the SDK client sends them; SSE streams read into the messages the SDK client transport reads, in
 *   any chunking; results decoded as the SDK client codec decodes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  Server,
  classifyInboundRequest,
  createMcpHandler,
  type CallToolResult,
  type McpHttpHandler,
  type Tool,
} from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { IncomingHttpHeaders } from 'node:http';
import { classifyPost, type PostDescription } from '../../gateway/http/classify.ts';
import { loadConfig } from '../../config/load.ts';
import {
  callToolAnswer,
  CACHE_HINTS,
  GATEWAY_SERVER_INFO,
  modernToolsListFields,
  projectionFor,
  toolsForEra,
  toolsListAnswer,
} from '../../gateway/wire/server-codec.ts';
import { LEGACY_REVISIONS, MODERN_REVISIONS } from '../../gateway/wire/revisions.ts';
import { encodeParamValue } from '../../gateway/wire/param-value.ts';
import { paramHeaders, paramHeaderValues } from '../../gateway/checks/mcp-param-headers.ts';
import { SseReader } from '../../gateway/wire/sse.ts';
import { settleResponse } from '../../gateway/wire/client-codec.ts';
import { sdkCodecFor } from '../../gateway/wire/sdk-codec.ts';
import { CASES, LEGACY_TOOLS, TOOLS, request as wireCaseRequest } from '../helpers/wire-cases.ts';

type Era = 'modern' | 'legacy';
const ERAS: readonly Era[] = ['legacy', 'modern'];
const MODERN = '2026-07-28';
const LIMITS = loadConfig({ env: {} }).limits;
const URL_BASE = 'http://127.0.0.1/mcp';

/** A small deterministic generator (mulberry32): the corpus is the same on every run. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
    int: (n: number) => Math.floor(next() * n),
  };
}

/** The answer of a request as a message: status, and the JSON-RPC message (a 2025 SSE answer's one `message` event). */
async function messageOf(response: Response): Promise<{ status: number; text: string; message: Record<string, unknown> | undefined }> {
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').startsWith('text/event-stream') ? /(?:^|\n)data: ([^\n]*)\n\n/.exec(text)?.[1] : text;
  let message: Record<string, unknown> | undefined;
  try {
    message = json ? (JSON.parse(json) as Record<string, unknown>) : undefined;
  } catch {
    message = undefined;
  }
  return { status: response.status, text: json ?? '', message };
}

/** The result the oracle server's tools/call handler answers next, and the tools its tools/list answers. */
let nextResult: Record<string, unknown> = { content: [] };
let nextTools: { tools: Tool[]; ttlMs: number } = { tools: [], ttlMs: 0 };

/**
 * An SDK handler in front of a plain SDK Server (the SDK's defaults, the gateway's identity and cache
 * hints): the oracle. Its tools/call answers {@link nextResult}, its tools/list {@link nextTools}, a
 * prompt, a resource and a ping answer too; nothing of the gateway runs in it.
 */
function oracleHandler(): McpHttpHandler {
  return createMcpHandler(
    ({ era }) => {
      const server = new Server(GATEWAY_SERVER_INFO, { capabilities: { tools: {}, prompts: {}, resources: {} }, cacheHints: CACHE_HINTS });
      // Projected for the era by the SDK server's own codec, as the gateway's arms project what they answer.
      server.setRequestHandler('tools/call', async () => server.projectCallToolResult(nextResult as CallToolResult, undefined));
      server.setRequestHandler('tools/list', async () => ({ tools: nextTools.tools, ...(era === 'modern' ? modernToolsListFields(nextTools.ttlMs) : {}) }));
      server.setRequestHandler('prompts/get', async () => ({ messages: [] }));
      server.setRequestHandler('resources/read', async (r) => ({ contents: [{ uri: r.params.uri, text: 'x' }] }));
      return server;
    },
    { legacy: 'stateless' },
  );
}

/** One POST as the corpus describes it. */
interface Post {
  name: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers as node:http hands them over: names lower-cased, values without surrounding whitespace (RFC 9110 §5.5), as fetch's Headers does too. */
const asNodeHeaders = (headers: Record<string, string>): IncomingHttpHeaders => Object.fromEntries(new Headers(headers).entries());

/** The POSTs of wire.test.ts, both eras, as its cases send them. */
async function wireCasePosts(): Promise<Post[]> {
  const posts: Post[] = [];
  for (const era of ERAS)
    for (const c of CASES.filter((c) => c.era === undefined || c.era === era)) {
      const req = wireCaseRequest(era, c.method, c.params, c.id, c.capabilities);
      posts.push({ name: `wire.test ${era}: ${c.rule}`, headers: Object.fromEntries(req.headers.entries()), body: JSON.parse(await req.text()) });
    }
  return posts;
}

const ENVELOPE = { [PROTOCOL_VERSION_META_KEY]: MODERN, [CLIENT_INFO_META_KEY]: { name: 'oracle', version: '1' }, [CLIENT_CAPABILITIES_META_KEY]: {} };

/** A generated corpus of POSTs around the revision ladder: methods, envelopes, and the four protocol headers, agreeing or not. */
function generatedPosts(count: number): Post[] {
  const g = generator(29);
  const methods: [string, Record<string, unknown> | undefined][] = [
    ['tools/list', undefined],
    ['tools/call', { name: 'echo', arguments: {} }],
    ['tools/call', { name: 'Zürich tool', arguments: {} }],
    ['tools/call', { name: ' padded', arguments: {} }],
    ['resources/read', { uri: 'file:///a b' }],
    ['prompts/get', { name: 'p' }],
    ['tasks/get', { taskId: 't-1' }],
    ['ping', undefined],
    ['initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } }],
    ['server/discover', undefined],
    ['notifications/initialized', undefined],
  ];
  const envelopes: (Record<string, unknown> | undefined)[] = [
    undefined,
    ENVELOPE,
    ENVELOPE,
    { [PROTOCOL_VERSION_META_KEY]: MODERN, [CLIENT_INFO_META_KEY]: { name: 'oracle', version: '1' } },
    { ...ENVELOPE, [CLIENT_INFO_META_KEY]: { name: 'x', version: '1', title: 5 } },
    { ...ENVELOPE, [PROTOCOL_VERSION_META_KEY]: '2025-06-18' },
    { ...ENVELOPE, [PROTOCOL_VERSION_META_KEY]: 5 },
    { ...ENVELOPE, progressToken: 'p1' },
    { 'example.com/note': 'legacy meta' },
  ];
  const versions = [undefined, MODERN, MODERN, '2025-11-25', '2025-03-26', '2024-11-05', '2099-01-01'];
  const posts: Post[] = [];
  for (let i = 0; i < count; i++) {
    const [method, params] = g.pick(methods);
    const meta = g.pick(envelopes);
    const version = g.pick(versions);
    const notification = method.startsWith('notifications/');
    const body: Record<string, unknown> = { jsonrpc: '2.0', ...(notification ? {} : { id: g.chance(0.5) ? i : `req-${i}` }), method };
    if (params || meta) body.params = { ...params, ...(meta ? { _meta: meta } : {}) };
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (version) headers['mcp-protocol-version'] = version;
    const methodHeader = g.pick([undefined, method, method, 'tools/list']);
    if (methodHeader) headers['mcp-method'] = methodHeader;
    const name =
      typeof params?.name === 'string'
        ? params.name
        : typeof params?.uri === 'string'
          ? params.uri
          : typeof params?.taskId === 'string'
            ? params.taskId
            : undefined;
    const nameHeader = g.pick([undefined, 'same', 'same', 'encoded', 'other', 'bad-sentinel', 'spaced']);
    if (nameHeader && name !== undefined) {
      headers['mcp-name'] =
        nameHeader === 'same'
          ? name
          : nameHeader === 'encoded'
            ? `=?base64?${Buffer.from(name).toString('base64')}?=`
            : nameHeader === 'other'
              ? 'other'
              : nameHeader === 'bad-sentinel'
                ? '=?base64?@@?='
                : ` ${name}\t`;
    }
    posts.push({ name: `generated #${i}: ${method} ${JSON.stringify(headers)} ${JSON.stringify(body.params ?? null)}`, headers, body });
  }
  // Bodies that are no single request: batches (one with a modern element), responses, scalars, an extra member.
  const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
  posts.push(
    {
      name: 'a 2025-03-26 batch',
      headers: legacyHeaders,
      body: [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ],
    },
    { name: 'a batch with a modern element', headers: legacyHeaders, body: [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: ENVELOPE } }] },
    { name: 'an empty batch', headers: legacyHeaders, body: [] },
    { name: 'a response', headers: legacyHeaders, body: { jsonrpc: '2.0', id: 7, result: {} } },
    { name: 'a scalar', headers: legacyHeaders, body: 42 },
    { name: 'an extra member', headers: legacyHeaders, body: { jsonrpc: '2.0', id: 1, method: 'ping', extra: true } },
    { name: 'no jsonrpc member', headers: legacyHeaders, body: { id: 1, method: 'ping' } },
  );
  return posts;
}

/** The edge's first refusal of a classified POST, in mcp-endpoint.ts's order, or undefined when it admits it. */
function edgeRefusal(post: PostDescription): string | undefined {
  if (post.notARequest) return 'not a request';
  if (post.limitBreach) return 'over a limit';
  if (post.unsupportedRevision !== undefined) return 'unsupported revision';
  if (post.batchRefused) return 'batch refused';
  if (post.ladderRejection) return 'ladder';
  if (post.headerRejection) return 'standard headers';
  return undefined;
}

describe('the SDK as the oracle of the gateway wire module', () => {
  let oracle: McpHttpHandler;
  beforeAll(() => {
    oracle = oracleHandler();
  });
  afterAll(async () => {
    await oracle?.close();
  });

  it('classification: the edge refuses on the SDK ladder exactly as the SDK answers, admits what the SDK admits, and routes plain requests as the SDK does', async () => {
    const posts = [...(await wireCasePosts()), ...generatedPosts(700)];
    const seen = { ladder: 0, headers: 0, plain: 0, admitted: 0 };
    for (const post of posts) {
      nextResult = { content: [{ type: 'text', text: 'ok' }] };
      const ours = classifyPost(post.body, asNodeHeaders(post.headers), LIMITS);
      const sdkRoute = classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader: post.headers['mcp-protocol-version'],
        mcpMethodHeader: post.headers['mcp-method'],
        mcpNameHeader: post.headers['mcp-name'],
        body: post.body,
      });
      const sdk = await messageOf(await oracle.fetch(new Request(URL_BASE, { method: 'POST', headers: post.headers, body: JSON.stringify(post.body) })));
      const refusal = edgeRefusal(ours);
      const context = `${post.name}\n  ours: ${refusal ?? 'admitted'}\n  SDK: ${sdk.status} ${sdk.text}`;
      if (refusal === 'ladder' || refusal === 'standard headers') {
        const r = (ours.ladderRejection ?? ours.headerRejection)!;
        seen[refusal === 'ladder' ? 'ladder' : 'headers']++;
        // -32020's data is ours: its kind and the two disagreeing values, short (wire/requests.ts shortMismatch), where the SDK repeats its message.
        // -32022's too: its kind, and its message only where a served 2025 revision is claimed in the envelope (wire/requests.ts routeOf);
        // and a -32600 the SDK gives no data: its kind, invalid_request.
        const sdkError = sdk.message?.error as { code: number; message: string; data?: { mismatch?: { header: string }; requested?: string } } | undefined;
        const expected =
          r.code === -32022 && sdkError?.code === -32022
            ? {
                ...sdkError,
                ...(LEGACY_REVISIONS.includes(sdkError.data?.requested ?? '') ? { message: r.message } : {}),
                data: { kind: 'unsupported_protocol_version', ...sdkError.data },
              }
            : r.code === -32020 && sdkError?.data?.mismatch
              ? {
                  ...sdkError,
                  data: {
                    kind: 'header_mismatch',
                    mismatch: { header: sdkError.data.mismatch.header, body: (r.data as { mismatch: { body: string } }).mismatch.body },
                  },
                }
              : // -32600 where the SDK names no data: ours names its kind, as the gateway's own -32600 refusals do.
                r.code === -32600 && sdkError?.code === -32600 && sdkError.data === undefined
                ? { ...sdkError, data: { kind: 'invalid_request' } }
                : sdkError;
        expect({ status: sdk.status, error: expected }, context).toEqual({
          status: r.httpStatus,
          error: { code: r.code, message: r.message, ...(r.data !== undefined ? { data: r.data } : {}) },
        });
      }
      if (refusal === undefined) {
        seen.admitted++;
        // Nothing the edge admits is refused by the SDK's entry (its refusals are HTTP 400).
        expect(sdk.status, context).not.toBe(400);
        if (sdkRoute.kind !== 'reject') expect(ours.era, context).toBe(sdkRoute.kind);
      }
      if (ours.plain) {
        seen.plain++;
        expect(sdkRoute.kind, context).toBe(ours.plain.era);
        expect({ status: sdk.status, error: sdk.message?.error }, context).toEqual({ status: 200, error: undefined });
      }
    }
    // The corpus reaches every branch it is meant to test.
    expect(Math.min(seen.ladder, seen.headers, seen.plain, seen.admitted)).toBeGreaterThan(10);
  });

  it('server codec: tools/call answers (projected for the era) are the SDK server’s, byte for byte, both eras', async () => {
    const g = generator(7);
    const results: Record<string, unknown>[] = [];
    const fakeCalls = [...TOOLS, ...LEGACY_TOOLS].map((t) => {
      try {
        return t.call?.({} as never, {} as never) as unknown;
      } catch {
        return undefined;
      }
    });
    for (const r of fakeCalls) if (r && typeof r === 'object' && !('then' in r)) results.push(r as Record<string, unknown>);
    const contents = [undefined, [], [{ type: 'text', text: 'hi' }], [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }]];
    const structured = [undefined, { n: 1 }, [1, 2], 'text', 7, null, { nested: { deep: [true] } }];
    const metas = [undefined, { 'example.com/k': 'v' }, { 'io.modelcontextprotocol/serverInfo': { name: 'other', version: '9' } }];
    for (let i = 0; i < 300; i++) {
      const result: Record<string, unknown> = {};
      const content = g.pick(contents);
      if (content !== undefined) result.content = content;
      const sc = g.pick(structured);
      if (sc !== undefined || g.chance(0.1)) result.structuredContent = sc;
      if (g.chance(0.3)) result.isError = g.chance(0.5);
      const meta = g.pick(metas);
      if (meta) result._meta = meta;
      if (g.chance(0.15)) result.extension = { kept: i };
      if (g.chance(0.1)) result.resultType = 'complete';
      if (g.chance(0.05)) Object.assign(result, { resultType: 'input_required', requestState: `round-${i}` });
      results.push(result);
    }
    let compared = 0;
    const skipped: string[] = [];
    for (const era of ERAS) {
      for (const [i, result] of results.entries()) {
        if (era === 'legacy' && result.resultType === 'input_required') continue;
        nextResult = result;
        const id = i % 2 ? i : `call "${i}" ✓`;
        const sdk = await messageOf(await oracle.fetch(wireRequest(era, 'tools/call', { name: 'echo', arguments: {} }, id)));
        // A result the SDK server refuses (its schema check) is not one the gateway sends either: the upstream client checked it.
        if (sdk.message?.error) {
          skipped.push(`${era} ${JSON.stringify(result)} -> ${JSON.stringify(sdk.message.error).slice(0, 200)}`);
          continue;
        }
        const projected = projectionFor(era)(result as CallToolResult, undefined) as Record<string, unknown>;
        expect(callToolAnswer(era, id, projected), `${era} ${JSON.stringify(result)}`).toBe(sdk.text);
        compared++;
      }
    }
    expect(compared, skipped.join('\n')).toBeGreaterThan(500);
  });

  it('server codec: tools/list answers are the SDK server’s, byte for byte, both eras', async () => {
    const g = generator(11);
    const toolSets: Tool[][] = [[...TOOLS, ...LEGACY_TOOLS].map((t) => t.definition)];
    const outputs = [undefined, { type: 'object', properties: { n: { type: 'number' } } }, { type: 'array', items: { type: 'number' } }, { type: 'string' }];
    for (let i = 0; i < 60; i++) {
      const tools: Tool[] = [];
      for (let j = 0; j < 1 + g.int(5); j++) {
        const tool: Record<string, unknown> = {
          name: `t${i}_${j}`,
          description: g.pick(['plain', 'Zürich "quoted" \\ ✓', '']),
          inputSchema: { type: 'object', properties: {} },
        };
        const out = g.pick(outputs);
        if (out) tool.outputSchema = out;
        if (g.chance(0.3)) tool.execution = { taskSupport: g.pick(['optional', 'required', 'forbidden']) };
        if (g.chance(0.3)) tool.annotations = { readOnlyHint: g.chance(0.5) };
        if (g.chance(0.2)) tool._meta = { 'example.com/x': j };
        tools.push(tool as Tool);
      }
      toolSets.push(tools);
    }
    for (const era of ERAS)
      for (const [i, tools] of toolSets.entries()) {
        nextTools = { tools, ttlMs: i * 1000 };
        const sdk = await messageOf(await oracle.fetch(wireRequest(era, 'tools/list', undefined, i)));
        expect(toolsListAnswer(era, i, JSON.stringify(toolsForEra(era, tools)), i * 1000).join(''), `${era} set ${i}`).toBe(sdk.text);
      }
  });

  it('revisions: the gateway serves the revisions the SDK serves', async () => {
    const discover = await messageOf(await oracle.fetch(wireRequest('modern', 'server/discover', undefined, 1)));
    expect((discover.message?.result as { supportedVersions?: string[] } | undefined)?.supportedVersions).toEqual([...MODERN_REVISIONS]);
    expect(LEGACY_REVISIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
    for (const version of LEGACY_REVISIONS) {
      const init = await oracle.fetch(
        new Request(URL_BASE, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
          }),
        }),
      );
      expect(((await messageOf(init)).message?.result as { protocolVersion?: string } | undefined)?.protocolVersion).toBe(version);
    }
  });
});

/** A request of `era` as the SDK clients send it, to the oracle. */
function wireRequest(era: Era, method: string, params: Record<string, unknown> | undefined, id: string | number): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let body: Record<string, unknown>;
  if (era === 'legacy') {
    headers['mcp-protocol-version'] = '2025-11-25';
    body = { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) };
  } else {
    headers['mcp-protocol-version'] = MODERN;
    headers['mcp-method'] = method;
    if (typeof params?.name === 'string') headers['mcp-name'] = encodeParamValue(params.name);
    body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } };
  }
  return new Request(URL_BASE, { method: 'POST', headers, body: JSON.stringify(body) });
}

describe('the SDK client as the oracle of the gateway client codec', () => {
  /** Strings around every rule of the header-value encoding: plain, spaces at the ends, tabs, non-ASCII, control characters, sentinel look-alikes, empty. */
  const VALUES = [
    'plain',
    'with space',
    ' leading',
    'trailing ',
    'tab\tinside',
    '\ttab first',
    'Zürich',
    '日本語',
    'emoji 😀',
    'line\nbreak',
    'nul\u0000',
    'del\u007f',
    '=?base64?aGk=?=',
    '=?base64?',
    '?=',
    '',
    'a'.repeat(300),
    '"quoted"',
    'back\\slash',
    '%41',
  ];

  it('Mcp-Name and Mcp-Param-* values are the ones the SDK client sends', async () => {
    const sent: Headers[] = [];
    const handler = createMcpHandler(
      () => {
        const server = new Server(GATEWAY_SERVER_INFO, { capabilities: { tools: {} } });
        server.setRequestHandler('tools/list', async () => ({
          tools: [
            {
              name: 'with_params',
              inputSchema: {
                type: 'object',
                properties: {
                  region: { type: 'string', 'x-mcp-header': 'Region' },
                  count: { type: 'integer', 'x-mcp-header': 'Count' },
                  flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
                },
              },
            },
          ],
        }));
        server.setRequestHandler('tools/call', async () => ({ content: [] }));
        return server;
      },
      { legacy: 'stateless' },
    );
    const client = new Client({ name: 'oracle-client', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(URL_BASE), {
        fetch: async (input, init) => {
          const req = new Request(input as string | URL, init);
          sent.push(req.headers);
          return handler.fetch(req);
        },
      }),
    );
    try {
      const tools = (await client.listTools()).tools;
      const scan = paramHeaders(tools[0]!.inputSchema);
      if (!scan.valid) throw new Error(scan.reason);
      for (const value of VALUES) {
        sent.length = 0;
        await client.callTool({ name: value, arguments: {} }).catch(() => undefined);
        expect(sent.at(-1)?.get('mcp-name'), JSON.stringify(value)).toBe(encodeParamValue(value));
        const args = { region: value, count: value.length, flag: value.length % 2 === 0 };
        sent.length = 0;
        await client.callTool({ name: 'with_params', arguments: args });
        const theirs = Object.fromEntries([...sent.at(-1)!.entries()].filter(([name]) => name.startsWith('mcp-param-')));
        const ours = Object.fromEntries(Object.entries(paramHeaderValues(scan.headers, args)).map(([name, v]) => [name.toLowerCase(), v]));
        expect(ours, JSON.stringify(value)).toEqual(theirs);
      }
    } finally {
      await client.close();
      await handler.close();
    }
  });

  it('an SSE stream is read into the messages the SDK client transport reads, in any chunking', async () => {
    const g = generator(3);
    const messages = (i: number) => [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: i, message: 'Zürich ✓ 😀' } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { multi: 'line\nvalue' } } },
      { jsonrpc: '2.0', id: 'ask-1', method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } } },
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: `answer ${i} 日本語` }] } },
    ];
    for (let i = 0; i < 120; i++) {
      const eol = g.pick(['\n', '\r\n']);
      const chosen = messages(i).filter((_, k) => k === 3 || g.chance(0.6));
      let body = g.chance(0.3) ? `: keep-alive${eol}${eol}` : '';
      for (const m of chosen) {
        const json = JSON.stringify(m);
        // The data of one event split over several data: lines (joined with \n, which JSON allows between tokens).
        const data = g.chance(0.3) ? json.replace(/,"/g, `,${eol}data: "`) : json;
        body += `${g.chance(0.5) ? `event: message${eol}` : ''}${g.chance(0.2) ? `id: ${i}${eol}` : ''}data: ${data}${eol}${eol}`;
      }
      // An event the stream ends in the middle of (no blank line after it) is discarded by both.
      if (g.chance(0.2)) body += `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":99}}${eol}`;
      const bytes = Buffer.from(body);
      const cuts = [...new Set([0, ...Array.from({ length: 1 + g.int(8) }, () => g.int(bytes.length)), bytes.length])].sort((a, b) => a - b);
      const chunks = cuts.slice(1).map((end, k) => bytes.subarray(cuts[k]!, end));

      const ours: unknown[] = [];
      const reader = new SseReader((data) => ours.push(JSON.parse(data)));
      for (const chunk of chunks) reader.write(chunk);
      reader.end();

      const theirs: unknown[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(URL_BASE), {
        fetch: async () =>
          new Response(
            new ReadableStream({
              start(controller) {
                for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
                controller.close();
              },
            }),
            { status: 200, headers: { 'content-type': 'text/event-stream' } },
          ),
      });
      const done = new Promise<void>((resolve) => {
        transport.onmessage = (message) => {
          theirs.push(message);
          if ('id' in message && message.id === 1) resolve();
        };
      });
      await transport.start();
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
      await done;
      // The rest of the stream (an unfinished event at most) is read before the answer is compared.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await transport.close();
      expect(ours, JSON.stringify(body)).toEqual(theirs);
    }
  });

  it('results are decoded as the SDK client codec decodes them', () => {
    const modern = sdkCodecFor(MODERN);
    const base = { content: [{ type: 'text', text: 'x' }] };
    const results: unknown[] = [
      { ...base, resultType: 'complete' },
      { ...base, resultType: 'complete', _meta: { k: 1 } },
      base,
      { ...base, resultType: 5 },
      { ...base, resultType: 'surprise' },
      { resultType: 'input_required', requestState: 's' },
      { resultType: 'input_required', inputRequests: { a: { method: 'elicitation/create', params: {} } } },
      { resultType: 'input_required' },
      { resultType: 'input_required', inputRequests: {} },
      { resultType: 'input_required', inputRequests: [] },
      [],
      'text',
      null,
    ];
    for (const raw of results) {
      const [error, result] = settleResponse({ jsonrpc: '2.0', id: 1, result: raw }, 'modern', { allowInputRequired: true });
      const theirs = modern.decodeResult('tools/call', raw);
      const context = JSON.stringify(raw);
      if (theirs.kind === 'invalid' || (theirs.kind !== 'complete' && theirs.kind !== 'input_required')) expect(error, context).toBeDefined();
      else {
        expect(error, context).toBeUndefined();
        if (theirs.kind === 'complete') expect(result, context).toEqual(theirs.result);
        else expect(result?.resultType, context).toBe('input_required');
      }
    }
  });
});
