import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { rpcCall, parseAnswer, type Era, type RpcCall } from '../../fixtures/rpc-requests.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { LogCapture } from '../../helpers/log-capture.ts';

/**
 * The fast path (gateway/http/fast-path.ts) answers plain tools/list and tools/call requests without the
 * SDK's per-request server. Its promise is the SDK's answer: two gateways over the same upstream, one
 * with `dispatch.fastPath: false`, must give the same status, content type and JSON-RPC message for
 * every request, the plain ones and those the fast path declines. Which path answered is visible on
 * the wire: the fast path sends a Content-Length, the SDK handler streams (chunked).
 */
const KEYS = {
  full: { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'demo-secret-full' },
  data: { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' },
  identity: { 'x-cpz-key': 'cpz_demo_identity', 'x-cpz-secret': 'demo-secret-identity' },
};

interface Case {
  name: string;
  path: '/mcp' | '/mcp/compact';
  key: keyof typeof KEYS;
  method: string;
  params?: Record<string, unknown>;
  /** Whether the fast path should answer it (else it declines and the SDK does), or on which era only. */
  plain: boolean | Era;
  /**
   * On this era the request breaks the SDK's revision ladder (its classifier or the SEP-2243 standard
   * headers), which the edge answers for both gateways as the SDK's entry would (wire/requests.ts).
   */
  refusedAtEdge?: Era | 'both';
  /** Changes the request after it is built (headers, body) to make it non-plain. */
  tweak?: (call: RpcCall, era: Era) => RpcCall;
}

const CASES: Case[] = [
  { name: 'tools/list, full key', path: '/mcp', key: 'full', method: 'tools/list', plain: true },
  { name: 'tools/list, data key', path: '/mcp', key: 'data', method: 'tools/list', plain: true },
  { name: 'tools/list, identity key', path: '/mcp', key: 'identity', method: 'tools/list', plain: true },
  { name: 'compact tools/list, data key', path: '/mcp/compact', key: 'data', method: 'tools/list', plain: true },
  {
    name: 'tools/call list_accounts',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: { limit: 1 } },
    plain: true,
  },
  { name: 'tools/call without arguments', path: '/mcp', key: 'full', method: 'tools/call', params: { name: 'list_accounts' }, plain: true },
  {
    name: 'tools/call invalid arguments (isError)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: { limit: 'x' } },
    plain: true,
  },
  {
    name: 'tools/call unknown tool (-32602, nearest names)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_acounts', arguments: {} },
    plain: true,
  },
  {
    name: 'search_tools',
    path: '/mcp/compact',
    key: 'data',
    method: 'tools/call',
    params: { name: 'search_tools', arguments: { query: 'open positions' } },
    plain: true,
  },
  {
    name: 'call_tool',
    path: '/mcp/compact',
    key: 'full',
    method: 'tools/call',
    params: { name: 'call_tool', arguments: { name: 'list_connections', arguments: { limit: 1 } } },
    plain: true,
  },
  {
    name: 'call_tool of a write (refused)',
    path: '/mcp/compact',
    key: 'full',
    method: 'tools/call',
    params: { name: 'call_tool', arguments: { name: 'place_order', arguments: {} } },
    plain: true,
  },
  {
    name: 'string id',
    path: '/mcp',
    key: 'data',
    method: 'tools/call',
    params: { name: 'list_positions', arguments: { limit: 1 } },
    plain: true,
    tweak: (c) => ({ ...c, body: c.body.replace('"id":1', '"id":"req-7"') }),
  },
  {
    name: 'search_tools with a blank query (isError built by the gateway)',
    path: '/mcp/compact',
    key: 'data',
    method: 'tools/call',
    params: { name: 'search_tools', arguments: { query: ' ' } },
    plain: true,
  },
  { name: 'tools/list with a cursor (SDK path)', path: '/mcp', key: 'full', method: 'tools/list', params: { cursor: 'abc' }, plain: false },
  {
    name: 'arguments not an object (SDK path)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: [1] },
    plain: false,
  },
  {
    name: 'progress token (SDK path)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: { limit: 1 } },
    plain: false,
    tweak: (c) => {
      const body = JSON.parse(c.body) as { params: { _meta?: Record<string, unknown> } };
      body.params._meta = { ...body.params._meta, progressToken: 'p1' };
      return { ...c, body: JSON.stringify(body) };
    },
  },
  {
    name: 'Mcp-Name disagreeing with the body (the SDK ladder, at the edge, on 2026-07-28)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: {} },
    plain: false,
    refusedAtEdge: 'modern',
    tweak: (c, era) => (era === 'modern' ? { ...c, headers: { ...c.headers, 'mcp-name': 'list_orders' } } : withLegacyMeta(c)),
  },
  {
    name: 'Accept in upper case (media types are case-insensitive, RFC 9110 §8.3.1: the fast path answers)',
    path: '/mcp',
    key: 'full',
    method: 'tools/list',
    plain: true,
    tweak: (c) => ({ ...c, headers: { ...c.headers, accept: 'APPLICATION/JSON, TEXT/EVENT-STREAM' } }),
  },
  {
    name: 'Accept without SSE (JSON: the fast path answers on 2026-07-28, the SDK path collapses the 2025 SSE answer)',
    path: '/mcp',
    key: 'full',
    method: 'tools/call',
    params: { name: 'list_accounts', arguments: { limit: 1 } },
    plain: 'modern',
    tweak: (c) => ({ ...c, headers: { ...c.headers, accept: 'application/json' } }),
  },
  {
    name: 'Accept refusing SSE with q=0 (JSON on both eras)',
    path: '/mcp',
    key: 'full',
    method: 'tools/list',
    plain: 'modern',
    tweak: (c) => ({ ...c, headers: { ...c.headers, accept: 'application/json, text/event-stream;q=0' } }),
  },
  {
    name: 'Accept refusing JSON with q=0 (SSE on both eras)',
    path: '/mcp',
    key: 'full',
    method: 'tools/list',
    plain: 'legacy',
    tweak: (c) => ({ ...c, headers: { ...c.headers, accept: 'application/json;q=0, text/event-stream' } }),
  },
  {
    name: 'Accept: text/html (406 at the edge on both eras)',
    path: '/mcp',
    key: 'full',
    method: 'tools/list',
    plain: false,
    refusedAtEdge: 'both',
    tweak: (c) => ({ ...c, headers: { ...c.headers, accept: 'text/html' } }),
  },
  ...(['clientInfo', 'clientCapabilities'] as const).map(
    (field): Case => ({
      name: `an envelope ${field} breaking its spec type (the SDK ladder, at the edge: 400 on 2026-07-28)`,
      path: '/mcp',
      key: 'full',
      method: 'tools/call',
      params: { name: 'list_accounts', arguments: { limit: 1 } },
      plain: false,
      refusedAtEdge: 'modern',
      tweak: (c, era) => {
        if (era === 'legacy') return withLegacyMeta(c);
        const body = JSON.parse(c.body) as { params: { _meta: Record<string, unknown> } };
        body.params._meta[`io.modelcontextprotocol/${field}`] = field === 'clientInfo' ? { name: 'x', version: '1', title: 5 } : { sampling: 5 };
        return { ...c, body: JSON.stringify(body) };
      },
    }),
  ),
];

/**
 * A 2025-era call with a `_meta` key of its own: the fast path leaves any legacy `_meta` to the SDK.
 * (Malformed members and unsupported revisions are refused at the edge for both gateways alike.)
 */
function withLegacyMeta(c: RpcCall): RpcCall {
  const body = JSON.parse(c.body) as { params: { _meta?: Record<string, unknown> } };
  body.params._meta = { ...body.params._meta, 'example.com/note': 'sdk path' };
  return { ...c, body: JSON.stringify(body) };
}

interface Answer {
  status: number;
  type: string;
  fastPath: boolean;
  message: unknown;
}

async function send(call: RpcCall): Promise<Answer> {
  const response = await fetch(call.url, { method: 'POST', headers: call.headers, body: call.body });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, type, fastPath: response.headers.get('content-length') !== null, message: text ? parseAnswer(text) : undefined };
}

/** The default `scopes.ttlMs`: the reference upstream's catalogue lives longer (public, 5 min), so a caller's scope entry bounds its tools/list. */
const SCOPE_TTL_MS = 60_000;

/**
 * The answer with a 2026-07-28 tools/list's `ttlMs` checked and set aside: it is what is left of each
 * gateway's own scope entry and catalogue copy, made at different moments (mcp/server.ts privateTtlMs);
 * tests/in-process/wire.test.ts holds both paths to the same value under a faked clock. Nowhere else.
 */
function withoutTtl(answer: Answer, era: Era, method: string): Answer {
  const result = (answer.message as { result?: Record<string, unknown> } | undefined)?.result;
  if (!result || !('ttlMs' in result)) return answer;
  expect({ era, method }).toEqual({ era: 'modern', method: 'tools/list' });
  expect(result.ttlMs).toBeGreaterThan(0);
  expect(result.ttlMs).toBeLessThanOrEqual(SCOPE_TTL_MS);
  return { ...answer, message: { ...(answer.message as object), result: { ...result, ttlMs: '<checked>' } } };
}

describe('fast path: the same answers as the SDK handler', () => {
  let stack: Stack;
  let sdkOnly: RunningGateway;

  beforeAll(async () => {
    stack = await startStack();
    const config = loadConfig({
      env: {},
      overrides: {
        listen: { host: '127.0.0.1', port: 0 },
        upstreams: [{ url: stack.upstreamUrl }],
        scopes: { endpoint: `${stack.platformUrl}/v1/me` },
        dispatch: { fastPath: false },
        // As the stack's gateway (tests/helpers/stack.ts): config/cpzai.yaml's code mode off.
        compact: { codeMode: { enabled: false } },
        log: { level: 'info' },
      },
    });
    sdkOnly = await startGateway(config, { logDestination: new LogCapture() });
  });
  afterAll(async () => {
    await sdkOnly?.close();
    await stack?.close();
  });

  for (const era of ['legacy', 'modern'] as const) {
    for (const c of CASES) {
      it(`${era}: ${c.name}`, async () => {
        const build = (base: string) => {
          const call = rpcCall(era, `${base}${c.path}`, KEYS[c.key], c.method, c.params);
          return c.tweak ? c.tweak(call, era) : call;
        };
        const fast = withoutTtl(await send(build(stack.gatewayUrl)), era, c.method);
        const sdk = withoutTtl(await send(build(sdkOnly.url)), era, c.method);
        // The fast path and the edge write a Content-Length; the SDK handler streams.
        const atEdge = c.refusedAtEdge === era || c.refusedAtEdge === 'both';
        expect(sdk.fastPath).toBe(atEdge);
        expect(fast.fastPath).toBe(c.plain === true || c.plain === era || atEdge);
        if (atEdge) expect(fast.status).toBeGreaterThanOrEqual(400);
        expect({ status: fast.status, type: fast.type, message: fast.message }).toEqual({ status: sdk.status, type: sdk.type, message: sdk.message });
        // The same bytes, key order included (toEqual ignores it).
        expect(JSON.stringify(fast.message)).toBe(JSON.stringify(sdk.message));
      });
    }
  }

  it('counts fast-path answers in mcp_requests_total like the SDK path', async () => {
    const count = async (base: string) => {
      const text = await (await fetch(`${base}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('mcp_requests_total{') &&
            l.includes('endpoint="full"') &&
            l.includes('era="legacy"') &&
            l.includes('method="tools/call"') &&
            l.includes('outcome="error"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await count(stack.gatewayUrl);
    await send(rpcCall('legacy', stack.mcpUrl, KEYS.full, 'tools/call', { name: 'no_such_tool' }));
    expect(await count(stack.gatewayUrl)).toBe(before + 1);
  });
});
