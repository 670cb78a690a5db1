/**
 * The HTTP edge of POST /mcp (spec 2026-07-28 basic/transports/streamable-http; RFC 9728; RFC 6750):
 * bad input gets a clear answer with the right status and JSON-RPC code, and nothing reaches the
 * upstream; the no-credential 401 points at the protected resource metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessStack, routedFetch, type InProcessGateway as Stack } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'edge', 'x-cpz-secret': 'edge-secret' };
const LEGACY = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const listRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

let stack: Stack;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] },
    // No health probe: `forwarded()` counts every message the upstream receives, and a probe's ping would be one.
    gateway: { limits: { bodyBytes: 4096 }, authorizationServers: ['https://auth.example.com'], upstreams: [{ health: { intervalMs: 0 } }] },
  });
});
afterAll(async () => {
  await stack?.close();
});

const post = (body: string | object, headers: Record<string, string>) =>
  routedFetch(stack.mcpUrl, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
const forwarded = () => stack.fake!.received.length;

describe('POST /mcp at the edge', () => {
  it('answers 401 with a Bearer challenge carrying resource_metadata when no credential is sent', async () => {
    const response = await post(listRequest, LEGACY);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32001);
  });

  it('answers 401 when only the key half of the key pair is sent', async () => {
    const response = await post(listRequest, { ...LEGACY, 'x-cpz-key': 'edge' });
    expect(response.status).toBe(401);
  });

  it('serves RFC 9728 protected resource metadata for /mcp and for the origin', async () => {
    const forMcp = await (await routedFetch(`${stack.gatewayUrl}/.well-known/oauth-protected-resource/mcp`)).json();
    // The configured server, then the built-in one (oauth.mode builtin in the reference config) with its scopes.
    expect(forMcp).toMatchObject({
      resource: `${stack.gatewayUrl}/mcp`,
      authorization_servers: ['https://auth.example.com', stack.gatewayUrl],
      bearer_methods_supported: ['header'],
    });
    expect(forMcp.scopes_supported).toContain('accounts:read');
    const forOrigin = await (await routedFetch(`${stack.gatewayUrl}/.well-known/oauth-protected-resource`)).json();
    expect(forOrigin).toMatchObject({ resource: stack.gatewayUrl });
  });

  it('answers 413 with a JSON-RPC error for a body over limits.bodyBytes and forwards nothing', async () => {
    const before = forwarded();
    const big = { ...listRequest, params: { padding: 'x'.repeat(8192) } };
    const response = await post(big, { ...LEGACY, ...KEY });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('4096') }, id: null });
    expect(forwarded()).toBe(before);
  });

  it('answers 415 for a Content-Type other than application/json', async () => {
    const response = await post(JSON.stringify(listRequest), { ...LEGACY, ...KEY, 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32000);
  });

  it('answers 400/-32700 for a body that is not JSON', async () => {
    const response = await post('{"jsonrpc":', { ...LEGACY, ...KEY });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('says where the JSON breaks, never quoting the body (try-out: no position)', async () => {
    const cases: [string, string][] = [
      ['{"jsonrpc":"2.0",}', 'Parse error: the body is not valid JSON at line 1, column 18'],
      ['{\n  "jsonrpc": "2.0",\n  "id": 01\n}', 'Parse error: the body is not valid JSON at line 3, column 10'],
      ['{"jsonrpc":"2.0"} trailing', 'Parse error: the body is not valid JSON at line 1, column 19'],
      ['{"jsonrpc":', 'Parse error: the body is not valid JSON: it ends before the JSON value does'],
      [
        '\ufeff{"jsonrpc":"2.0"}',
        'Parse error: the body is not valid JSON: it starts with a byte order mark (U+FEFF), which JSON text must not (RFC 8259 §8.1)',
      ],
      ['{"secret-looking":NaN}', 'Parse error: the body is not valid JSON'],
    ];
    for (const [body, message] of cases) {
      const response = await post(body, { ...LEGACY, ...KEY });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message, body).toBe(message);
    }
  });

  it('answers 400/-32700 for an empty body (not valid JSON, JSON-RPC 2.0 §5.1) and forwards nothing', async () => {
    const before = forwarded();
    for (const empty of ['', ' \n']) {
      const response = await post(empty, { ...LEGACY, ...KEY });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700, message: expect.stringMatching(/^Parse error/) }, id: null });
    }
    expect(forwarded()).toBe(before);
  });

  describe.each([
    ['2025-06-18', {}],
    [
      '2026-07-28',
      {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'edge', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    ],
  ])('malformed params under %s', (version, envelope) => {
    const headers = {
      ...LEGACY,
      ...KEY,
      'mcp-protocol-version': version,
      ...(version === '2026-07-28' ? { 'mcp-method': 'tools/call', 'mcp-name': 'echo' } : {}),
    };
    /** The one JSON-RPC answer of a POST (JSON or SSE body). */
    const answerOf = async (response: Response) => {
      const text = await response.text();
      const data = text.startsWith('{')
        ? text
        : text
            .split('\n')
            .find((line) => line.startsWith('data:'))!
            .slice(5);
      return JSON.parse(data) as { id: number; error: { code: number; message: string; data: { path: string } } };
    };

    it.each([[[]], [null], ['x']])('answers tools/call with arguments %j by one -32602 line naming /arguments, calling nothing upstream', async (args) => {
      const calls = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
      const before = calls();
      const response = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: args, ...envelope } }, headers);
      const answer = await answerOf(response);
      expect(answer).toMatchObject({ id: 7, error: { code: -32602, message: 'Invalid params: /arguments must be an object', data: { path: '/arguments' } } });
      expect(calls()).toBe(before);
    });

    it('answers a tools/list with a non-string cursor by -32602 naming /cursor, not -32603', async () => {
      const response = await post(
        { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { cursor: 5, ...envelope } },
        { ...headers, 'mcp-method': 'tools/list' },
      );
      const answer = await answerOf(response);
      expect(answer.error).toMatchObject({ code: -32602, message: 'Invalid params: /cursor must be a string', data: { path: '/cursor' } });
    });
  });

  it.each(['2025-06-18', '2025-11-25', '2026-07-28'])('answers 400/-32600 to a JSON-RPC batch under MCP-Protocol-Version %s', async (version) => {
    const before = forwarded();
    const response = await post([listRequest, { ...listRequest, id: 2 }], { ...LEGACY, ...KEY, 'mcp-protocol-version': version });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
    expect(forwarded()).toBe(before);
  });

  it('answers a 2025-era request whose Accept is application/json alone with a JSON body, not 406', async () => {
    const response = await post(listRequest, { ...LEGACY, ...KEY, accept: 'application/json' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'echo' }] } });
  });

  it('answers a notification with 202 and no body', async () => {
    const response = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { ...LEGACY, ...KEY });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('answers 403 to a foreign Origin and to a foreign Host (DNS-rebinding protection on a loopback bind)', async () => {
    const origin = await post(listRequest, { ...LEGACY, ...KEY, origin: 'https://evil.example' });
    expect(origin.status).toBe(403);
    // The runtime reads Host from the request as node:http would. A probe path answers any Host, unless a browser asks.
    const status = async (path: string, headers: Record<string, string>) => (await stack.fetch(new Request(`${stack.gatewayUrl}${path}`, { headers }))).status;
    expect(await status('/.well-known/oauth-protected-resource/mcp', { host: 'evil.example:80' })).toBe(403);
    expect(await status('/healthz', { host: 'evil.example:80', 'sec-fetch-site': 'same-origin' })).toBe(403);
    expect(await status('/healthz', { host: '10.1.2.3:80' })).toBe(200);
  });

  it('answers a CORS preflight from a local origin allowing the MCP and credential headers', async () => {
    const response = await routedFetch(stack.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'mcp-protocol-version, x-cpz-key, mcp-param-region',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const allowed = response.headers.get('access-control-allow-headers')!.split(', ');
    expect(allowed).toEqual(
      expect.arrayContaining([
        'mcp-protocol-version',
        'mcp-method',
        'mcp-name',
        'mcp-session-id',
        'authorization',
        'x-cpz-key',
        'x-cpz-secret',
        'mcp-param-region',
      ]),
    );
    expect(response.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
  });

  it('advertises in a CORS preflight only the methods each path serves: POST on /mcp, GET on the metadata', async () => {
    const preflight = (url: string | URL, method: string) =>
      routedFetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': method, 'access-control-request-headers': 'mcp-protocol-version' },
      });
    for (const url of [stack.mcpUrl, stack.compactUrl]) {
      expect((await preflight(url, 'POST')).headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    }
    // Exact paths only (strict routing): `/mcp/` is not the MCP endpoint, so its preflight promises no POST.
    expect((await preflight(`${stack.mcpUrl}/`, 'POST')).headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
    const metadata = await preflight(`${stack.gatewayUrl}/.well-known/oauth-protected-resource/mcp`, 'GET');
    expect(metadata.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
    // What the /mcp preflight leaves out is indeed not served there.
    for (const method of ['GET', 'DELETE']) expect((await routedFetch(stack.mcpUrl, { method, headers: KEY })).status).toBe(405);
  });

  it('names what an MCP endpoint serves in Allow on any OPTIONS, a preflight or not (RFC 9110 §9.3.7), and nothing it does not know elsewhere', async () => {
    for (const url of [stack.mcpUrl, stack.compactUrl]) {
      const plain = await routedFetch(url, { method: 'OPTIONS' });
      expect(plain.status).toBe(204);
      expect(plain.headers.get('allow')).toBe('POST, OPTIONS');
    }
    expect((await routedFetch(`${stack.gatewayUrl}/no/such/path`, { method: 'OPTIONS' })).headers.get('allow')).toBeNull();
  });

  it('answers GET and DELETE on /mcp with 405 (stateless: no sessions, no standalone stream)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await routedFetch(stack.mcpUrl, { method, headers: { accept: 'text/event-stream', ...KEY } });
      expect(response.status).toBe(405);
      // As the SDK answers it (README, compatibility notes): Allow names POST, a JSON-RPC -32000 body without data.
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
  });

  it('generates an X-Request-Id when none is sent and echoes a sent one', async () => {
    const generated = await routedFetch(`${stack.gatewayUrl}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await routedFetch(`${stack.gatewayUrl}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
  });
});
