/**
 * A bounded, deterministic fuzz of POST /mcp (issue 18, Done when): a few thousand malformed bodies and
 * headers from a fixed seed, through real HTTP. For every case: no HTTP 5xx, no hang (5 s), and an
 * answer that is JSON-RPC (a JSON error/result object, an SSE stream of them, or 202 with no body for a
 * notification). Where JSON-RPC 2.0 §5.1 names the kind of malformation, the code must be that one:
 * -32700 for a body that is not JSON, -32600 for JSON that is not a valid request object, -32601 for an
 * unknown method. The oracle below is this test's own reading of JSON-RPC 2.0 and MCP (id: string or
 * number, never null), independent of the gateway's code.
 */
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { seeded } from '../../../search/semantic/seeded-random.ts';
import { JSON_DEPTH_CEILING } from '../../../gateway/checks/input-limits.ts';

const SEED = 0x18_2026;
const CASES = 3000;
const HANG_MS = 5000;

const KEY = { 'x-cpz-key': 'fuzz', 'x-cpz-secret': 'fuzz-secret' };
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '', 'bogus'];
/** The revisions the gateway serves: any other, in the header or a `_meta` claim, is -32022. */
const SERVED = new Set(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']);
const METHODS = [
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'initialize',
  'ping',
  'server/discover',
  'completion/complete',
  'logging/setLevel',
  'no/such',
  'notifications/initialized',
  'notifications/cancelled',
];
const VALID_LEGACY = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
const KNOWN = new Set([
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

interface Case {
  kind: string;
  body: Buffer | string;
  headers: Record<string, string>;
  /** The §5.1 code this case must get, when the oracle knows it. */
  code?: number;
  /** The HTTP status it must get, when fixed (e.g. 415 for an unsupported Content-Encoding). */
  status?: number;
}

/** What JSON-RPC 2.0 §5.1 says about a body, as far as it can be told without knowing the method's params. */
function oracle(text: string, version: string): number | 'notification' | 'batch' | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return -32700;
  }
  if (Array.isArray(value)) return value.length === 0 ? -32600 : 'batch';
  if (value === null || typeof value !== 'object') return -32600;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return 'result' in m || 'error' in m ? undefined : -32600;
  // MCP basic §Requests: params is an object (JSON-RPC 2.0 §4.2 would allow an array).
  if ('params' in m && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) return -32600;
  if ('id' in m && typeof m.id !== 'string' && !Number.isInteger(m.id)) return -32600;
  // Members JSON-RPC 2.0 §4 does not define: the gateway refuses them, as the SDK behind it would.
  if (Object.keys(m).some((k) => !['jsonrpc', 'id', 'method', 'params'].includes(k))) return -32600;
  // A revision the gateway does not serve, claimed in _meta or else in the header: UnsupportedProtocolVersionError.
  const meta = (m.params as { _meta?: unknown } | undefined)?._meta;
  const claim = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'] : undefined;
  // A header disagreeing with the claim is a HeaderMismatch (-32020) first.
  const requested = typeof claim === 'string' ? (version === '' || version === claim ? claim : undefined) : version;
  if (requested !== undefined && requested !== '' && !SERVED.has(requested)) return -32022;
  if (!('id' in m)) return 'notification';
  // Unknown method: -32601, under a revision the server accepts (a bogus MCP-Protocol-Version is refused first).
  if (!KNOWN.has(m.method) && !m.method.startsWith('notifications/')) return VALID_LEGACY.has(version) ? -32601 : undefined;
  return undefined;
}

function headersFor(version: string): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...KEY, ...(version ? { 'mcp-protocol-version': version } : {}) };
}

function validMessage(rand: () => number, version: string): Record<string, unknown> {
  const method = METHODS[Math.floor(rand() * METHODS.length)]!;
  const params: Record<string, unknown> =
    method === 'tools/call' ? { name: 'echo', arguments: { text: 'hi' } } : method === 'resources/read' ? { uri: 'test://x' } : {};
  if (version === '2026-07-28') params._meta = MODERN_META;
  return method.startsWith('notifications/') ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id: Math.floor(rand() * 1000), method, params };
}

const nest = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);
const junk = (rand: () => number, n: number) => Array.from({ length: n }, () => String.fromCharCode(Math.floor(rand() * 0x7f))).join('');

/** The cases, deterministic for the seed: mutations of valid messages plus targeted malformations. */
function generate(count: number): Case[] {
  const rand = seeded(SEED);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const cases: Case[] = [
    { kind: 'deep-array-4500', body: nest(4500, '[', ']'), headers: headersFor('2025-11-25'), code: -32600, status: 400 },
    { kind: 'deep-array-4500-no-version', body: nest(4500, '[', ']'), headers: headersFor(''), code: -32600, status: 400 },
    {
      kind: 'deep-object-in-params',
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${nest(4500, '{"a":', '}')}}}`,
      headers: headersFor('2025-11-25'),
      code: -32602,
      status: 400,
    },
    { kind: 'deep-top-object', body: nest(4500, '{"a":', '}'), headers: headersFor('2025-11-25'), code: -32600, status: 400 },
    // The 2026-07-28 envelope itself 4,500 deep, on the fast path's methods (protocol try-out: JSON.stringify of it overflowed, 200 -32603).
    ...(['tools/list', 'tools/call'] as const).map((method) => ({
      kind: `deep-envelope-${method}`,
      body: `{"jsonrpc":"2.0","id":1,"method":"${method}","params":{${method === 'tools/call' ? '"name":"echo","arguments":{},' : ''}"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":${nest(4500, '[', ']')}}}}}`,
      headers: { ...headersFor('2026-07-28'), 'mcp-method': method, ...(method === 'tools/call' ? { 'mcp-name': 'echo' } : {}) },
      code: -32602,
      status: 400,
    })),
    { kind: 'gzip-unsupported-encoding', body: 'x', headers: { ...headersFor('2025-11-25'), 'content-encoding': 'compress' }, status: 415 },
    { kind: 'unknown-encoding', body: '{}', headers: { ...headersFor('2025-11-25'), 'content-encoding': 'zstd-ish' }, status: 415 },
    {
      kind: 'gzip-supported',
      body: gzipSync(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })),
      headers: { ...headersFor('2025-11-25'), 'content-encoding': 'gzip' },
    },
    { kind: 'empty', body: '', headers: headersFor('2025-11-25'), code: -32700, status: 400 },
    { kind: 'empty-batch', body: '[]', headers: headersFor(''), code: -32600, status: 400 },
    { kind: 'null-id', body: '{"jsonrpc":"2.0","id":null,"method":"ping"}', headers: headersFor('2025-11-25'), code: -32600, status: 400 },
  ];
  while (cases.length < count) {
    const version = pick(VERSIONS);
    const headers = headersFor(version);
    const base = JSON.stringify(validMessage(rand, version));
    const strategy = Math.floor(rand() * 12);
    let body: string;
    let kind: string;
    switch (strategy) {
      case 0:
        kind = 'truncated';
        body = base.slice(0, Math.floor(rand() * base.length));
        break;
      case 1: {
        kind = 'byte-flip';
        const at = Math.floor(rand() * base.length);
        body = base.slice(0, at) + junk(rand, 1) + base.slice(at + 1);
        break;
      }
      case 2: {
        kind = 'insert-junk';
        const at = Math.floor(rand() * base.length);
        body = base.slice(0, at) + junk(rand, 1 + Math.floor(rand() * 8)) + base.slice(at);
        break;
      }
      case 3:
        kind = 'scalar';
        body = pick(['1', '"x"', 'null', 'true', 'false', '-0', '1e999', '"\\ud800"']);
        break;
      case 4: {
        kind = 'envelope-field';
        const m = JSON.parse(base);
        const field = pick(['jsonrpc', 'method', 'id', 'params']);
        m[field] = pick<unknown>([null, 7, 'x', [], {}, true, '1.0', -1.5]);
        body = JSON.stringify(m);
        break;
      }
      case 5: {
        kind = 'envelope-missing';
        const m = JSON.parse(base);
        delete m[pick(['jsonrpc', 'method', 'id', 'params'])];
        body = JSON.stringify(m);
        break;
      }
      case 6:
        kind = 'deep';
        if (rand() < 0.5) body = nest(65 + Math.floor(rand() * 5000), '[', ']');
        else {
          const depth = 65 + Math.floor(rand() * 3000);
          body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":${nest(depth, '[', ']')}}}}`;
          // Past the depth no later step could handle (checks/input-limits.ts JSON_DEPTH_CEILING), tool
          // arguments are refused at the edge before the revision is read; below it, they are the call's.
          if (depth + 1 > JSON_DEPTH_CEILING - 2) kind = 'deep-arguments';
        }
        break;
      case 7:
        kind = 'batch';
        body = JSON.stringify(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => (rand() < 0.7 ? JSON.parse(base) : pick<unknown>([1, 'x', null, {}]))));
        break;
      case 8:
        kind = 'long-string';
        {
          const m = JSON.parse(base);
          m.params = { ...(m.params ?? {}), padding: 'y'.repeat(600_000) };
          body = JSON.stringify(m);
        }
        break;
      case 9:
        kind = 'unknown-method';
        {
          const m = JSON.parse(base);
          m.method = `x/${junk(rand, 6).replace(/[^a-z]/gi, 'q')}`;
          body = JSON.stringify(m);
        }
        break;
      case 10:
        kind = 'params-wrong-type';
        {
          const m = JSON.parse(base);
          m.params = {
            ...(m.params ?? {}),
            name: pick<unknown>([1, null, [], { x: 1 }]),
            uri: pick<unknown>([1, null, []]),
            cursor: pick<unknown>([1, {}, 'x']),
          };
          body = JSON.stringify(m);
        }
        break;
      default:
        kind = 'valid';
        body = base;
    }
    const expected = oracle(body, version);
    const c: Case = { kind, body, headers };
    if (typeof expected === 'number') c.code = expected;
    // A valid request with a string over limits.stringLength in params: refused as such before its method is looked up.
    if (kind === 'long-string' || kind === 'deep-arguments') c.code = -32602;
    // A batch under a revision the gateway does not serve is refused as such; under one without batching
    // (all but 2025-03-26, which a request without the header is read as) it is an Invalid Request.
    // A nesting over limits.jsonDepth outside tool arguments is refused before anything else is read.
    if (expected === 'batch' && kind === 'deep') c.code = -32600;
    else if (expected === 'batch' && version !== '' && !SERVED.has(version)) c.code = -32022;
    else if (expected === 'batch' && version !== '' && version !== '2025-03-26') c.code = -32600;
    // Header mutations, on a share of the cases.
    const h = rand();
    if (h < 0.05) c.headers = { ...c.headers, 'content-type': pick(['text/plain', 'application/jsonx', 'multipart/form-data', '']) };
    else if (h < 0.08) c.headers = { ...c.headers, accept: pick(['text/html', '*/*', 'application/json', '']) };
    else if (h < 0.11) c.headers = { ...c.headers, 'mcp-method': pick(['tools/call', 'x', '']), 'mcp-name': junk(rand, 4).replace(/[^a-z]/gi, 'n') };
    else if (h < 0.13) c.headers = { ...c.headers, 'x-cpz-secret': '' };
    if (h < 0.13) delete c.code; // HTTP-level refusals (415, 406, 401, -32020) come first and have no §5.1 code.
    if (c.headers['content-type'] === '') delete c.headers['content-type'];
    cases.push(c);
  }
  return cases;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function send(url: string, c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: c.headers, agent, signal: AbortSignal.timeout(HANG_MS) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: String(res.headers['content-type'] ?? ''), text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(c.body);
  });
}

interface Rpc {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** The JSON-RPC messages of an answer, or a reason it is not JSON-RPC. */
function rpcMessages(answer: Answer): Rpc[] | string {
  let messages: unknown[];
  try {
    if (answer.contentType.startsWith('text/event-stream')) {
      messages = answer.text
        .split(/\r?\n\r?\n/)
        .map((e) =>
          e
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join(''),
        )
        .filter(Boolean)
        .map((d) => JSON.parse(d));
    } else {
      const parsed = JSON.parse(answer.text) as unknown;
      messages = Array.isArray(parsed) ? parsed : [parsed];
    }
  } catch {
    return `not JSON: ${answer.text.slice(0, 80)}`;
  }
  for (const m of messages as Rpc[]) {
    if (m?.jsonrpc !== '2.0' || !('id' in m)) return `not a JSON-RPC response: ${JSON.stringify(m).slice(0, 120)}`;
    if ('error' in m ? !Number.isInteger(m.error?.code) || typeof m.error?.message !== 'string' : !('result' in m))
      return `bad JSON-RPC response: ${JSON.stringify(m).slice(0, 120)}`;
  }
  return messages as Rpc[];
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] }, gateway: { log: { level: 'warn' } } });
});
afterAll(async () => {
  agent.destroy();
  await stack?.close();
});

describe(`POST /mcp under ${CASES} malformed bodies and headers (seed ${SEED})`, () => {
  it('never answers 5xx, never hangs, always answers JSON-RPC, with the §5.1 code of each kind', { timeout: 240_000 }, async () => {
    const cases = generate(CASES);
    const failures: string[] = [];
    const byKind = new Map<string, number>();
    for (const [i, c] of cases.entries()) {
      byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1);
      let answer: Answer;
      try {
        answer = await send(stack.mcpUrl, c);
      } catch (error) {
        failures.push(`#${i} ${c.kind}: no answer (${(error as Error).name}: ${(error as Error).message})`);
        continue;
      }
      const label = `#${i} ${c.kind} -> ${answer.status}`;
      if (answer.status >= 500) failures.push(`${label}: 5xx ${answer.text.slice(0, 120)}`);
      if (c.status !== undefined && answer.status !== c.status) failures.push(`${label}: expected HTTP ${c.status}`);
      if (answer.status === 202 && answer.text === '') continue;
      const messages = rpcMessages(answer);
      if (typeof messages === 'string') {
        failures.push(`${label}: ${messages}`);
        continue;
      }
      if (c.code !== undefined) {
        const code = messages[0]?.error?.code;
        if (code !== c.code)
          failures.push(
            `${label}: expected ${c.code}, got ${code ?? 'a result'}: ${answer.text.slice(0, 160)}${process.env.FUZZ_VERBOSE ? ` BODY ${String(c.body).slice(0, 200)}` : ''}`,
          );
      }
    }
    if (process.env.FUZZ_VERBOSE) console.log(failures.join('\n'));
    expect({ failures: failures.slice(0, 25), count: failures.length }).toEqual({ failures: [], count: 0 });
    // The strategies all ran.
    expect([...byKind.keys()].length).toBeGreaterThanOrEqual(16);
    expect(stack.logs.lines.filter((l) => (l as { level?: number }).level! >= 50)).toEqual([]);
  });
});

describe('malformed HTTP below the JSON-RPC layer', () => {
  const raw = (payload: string) =>
    new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(stack.mcpUrl);
      const socket = connect(Number(port), hostname, () => socket.end(payload));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(HANG_MS, () => reject(new Error('hang')));
    });

  it('answers headers over limits.headerBytes with 431 and a JSON-RPC body', async () => {
    const text = await raw(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-pad: ${'p'.repeat(20_000)}\r\ncontent-length: 2\r\n\r\n{}`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('limits.headerBytes') },
    });
    // Answered before any handler ran, it is counted all the same (SRE try-out: it was not; its access line: unparsed-requests.test.ts).
    const metrics = await (await fetch(`${new URL(stack.mcpUrl).origin}/metrics`)).text();
    expect(metrics).toMatch(/^http_request_duration_seconds_count\{route="unmatched",method="unknown",status_code="431"\} 1$/m);
  });

  it('answers a malformed request line with 400 and a JSON-RPC body', async () => {
    const text = await raw('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nbad header line\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });
});
