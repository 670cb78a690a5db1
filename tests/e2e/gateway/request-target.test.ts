/**
 * The request's target over a real socket (what fetch cannot send): a Host header carrying user
 * information (`user:password@host`), a numeric host in another notation than a dotted quad
 * (`2130706433`, which a URL parser reads as 127.0.0.1), and an absolute-form request-target
 * (RFC 9112 §3.2.2: `POST http://host/mcp`) on every kind of route: the MCP POST served outside Koa, the
 * Koa routes, the authorization server, the console, /metrics and the probes. A malformed target is 400
 * `malformed_target` naming why, never a 5xx, and the value never reaches the answer or a log line; an
 * absolute-form target is served as its origin-form with its authority checked as the Host.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startStack, type Stack } from '../../helpers/stack.ts';

const ADMIN = 'console-admin-token-request-target';
const SECRET = 'demo-secret-full-request-target';
let stack: Stack;
let port: number;

beforeAll(async () => {
  stack = await startStack({
    upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] },
    gateway: {
      console: { adminToken: ADMIN },
      oauth: { mode: 'builtin', tokenSecret: 'test-secret-0123456789abcdef-request-target', scopes: ['a:read'] },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
  });
  port = Number(new URL(stack.gatewayUrl).port);
});
afterAll(async () => {
  await stack?.close();
});

interface Answer {
  status: number;
  body: string;
}

/** One request exactly as given: `target` as the request line's target, `host` as the Host header (none when undefined). */
function send(method: string, target: string, host: string | undefined, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path: target, setHost: false, headers: { ...(host === undefined ? {} : { host }), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `text` written as it is on a fresh connection (Node's client sends one Host at most): the answer's bytes. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** `text` written on a fresh connection left open for writing: the answer's bytes once the server ends the connection. */
function halfOpenExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => {
      socket.destroy();
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
/** A route of each kind: the MCP POST (outside Koa), Koa routes, the authorization server, the console, metrics, a probe. */
const ROUTES: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
  { method: 'POST', path: '/mcp', headers: MCP, body: LIST },
  { method: 'POST', path: '/mcp/compact', headers: MCP, body: LIST },
  { method: 'GET', path: '/mcp' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' },
  { method: 'GET', path: '/.well-known/oauth-authorization-server' },
  { method: 'POST', path: '/oauth/register', headers: { 'content-type': 'application/json' }, body: '{}' },
  { method: 'GET', path: '/oauth/authorize?client_id=x' },
  { method: 'GET', path: '/console', headers: { authorization: `Bearer ${ADMIN}` } },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/nope' },
];
const kindOf = (answer: Answer) => (JSON.parse(answer.body) as { error: { data: { kind: string } } }).error.data.kind;

describe('the request target', () => {
  it('answers 400 malformed_target to a Host with user information on every route, and never writes it anywhere', async () => {
    const host = `cpz_demo_full:${SECRET}@127.0.0.1:${port}`;
    for (const route of ROUTES) {
      const answer = await send(route.method, route.path, host, route.headers, route.body);
      expect(answer.status, `${route.method} ${route.path}`).toBe(400);
      expect(kindOf(answer)).toBe('malformed_target');
      expect(JSON.parse(answer.body).error.message).toBe(
        'Bad Request: the Host header is refused: it carries user information (user:password@), which a Host never does (RFC 9110 §7.2, RFC 9112 §3.2)',
      );
      expect(answer.body).not.toContain(SECRET);
    }
    expect(stack.logs.text).not.toContain(SECRET);
    expect(stack.logs.text).not.toContain('unhandled request error');
  });

  it('answers 400 to numeric hosts other than a dotted quad, which a URL parser reads as 127.0.0.1', async () => {
    for (const host of ['2130706433', `2130706433:${port}`, '0x7f.1', '127.1', '0177.0.0.1', '127.0.0.01', '[::1%25lo]', '127.0.0.1:99999', 'a b']) {
      const answer = await send('POST', '/mcp', host, MCP, LIST);
      expect(answer.status, host).toBe(400);
      expect(kindOf(answer), host).toBe('malformed_target');
    }
  });

  it('serves an absolute-form target as its origin-form, its authority taken as the Host (RFC 9112 §3.2.2)', async () => {
    for (const route of ROUTES) {
      const own = await send(route.method, route.path, `127.0.0.1:${port}`, route.headers, route.body);
      const absolute = await send(route.method, `http://127.0.0.1:${port}${route.path}`, 'evil.example', route.headers, route.body);
      expect(absolute.status, `${route.method} ${route.path}`).toBe(own.status);
      expect(own.status).toBeLessThan(500);
    }
    // The authority is checked as the Host is: a foreign one is refused, whatever the Host header says.
    const foreign = await send('POST', 'http://evil.example/mcp', `127.0.0.1:${port}`, MCP, LIST);
    expect(foreign.status).toBe(403);
    expect(kindOf(foreign)).toBe('forbidden_host');
    const userinfo = await send('POST', `http://cpz_demo_full:${SECRET}@127.0.0.1:${port}/mcp`, `127.0.0.1:${port}`, MCP, LIST);
    expect(userinfo.status).toBe(400);
    expect(kindOf(userinfo)).toBe('malformed_target');
    expect(stack.logs.text).not.toContain(SECRET);
  });

  it('answers 400 to a request with two Host headers on every route (RFC 9112 §3.2), whichever comes first', async () => {
    for (const route of ROUTES)
      for (const hosts of [
        [`127.0.0.1:${port}`, 'evil.example'],
        ['evil.example', `127.0.0.1:${port}`],
      ]) {
        const head = [`${route.method} ${route.path} HTTP/1.1`, ...hosts.map((h) => `Host: ${h}`)];
        for (const [name, value] of Object.entries(route.headers ?? {})) head.push(`${name}: ${value}`);
        const body = route.body ?? '';
        head.push(`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close');
        const answer = await rawExchange(`${head.join('\r\n')}\r\n\r\n${body}`);
        expect(answer.split(' ')[1], `${route.method} ${route.path} ${hosts[0]}`).toBe('400');
      }
  });

  it('answers 400 malformed_target with a JSON-RPC body to an HTTP/1.1 request without a Host, or with an empty one, on every route (RFC 9112 §3.2; try-out: a bare 400)', async () => {
    for (const route of ROUTES)
      for (const host of [undefined, '']) {
        const answer = await send(route.method, route.path, host, route.headers, route.body);
        expect(answer.status, `${route.method} ${route.path} ${host}`).toBe(400);
        expect(kindOf(answer)).toBe('malformed_target');
        expect(JSON.parse(answer.body).error.message).toContain('the request carries no Host header');
      }
  });

  it('closes the connection after an MCP answer when the request says Connection: close (RFC 9112 §9.6), the SDK-path answers too (client try-out: they said keep-alive and held the socket for the keep-alive timeout)', async () => {
    const call = (era: string, method: string, params: object = {}) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      const head = [
        `POST /mcp HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        'X-CPZ-Key: closing',
        'X-CPZ-Secret: closing-secret',
        `MCP-Protocol-Version: ${era}`,
        ...(era === '2026-07-28' ? [`Mcp-Method: ${method}`] : []),
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
      ];
      return halfOpenExchange(`${head.join('\r\n')}\r\n\r\n${body}`);
    };
    const modern = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } };
    for (const [era, method, params] of [
      ['2025-11-25', 'ping', {}],
      ['2025-11-25', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }],
      ['2025-11-25', 'no/such_method', {}],
      ['2025-11-25', 'tools/list', {}],
      ['2026-07-28', 'server/discover', modern],
      ['2026-07-28', 'tools/list', modern],
    ] as const) {
      const answer = await call(era, method, params);
      expect(answer.split(' ')[1], `${era} ${method}`).toBe('200');
      // The gateway ended the exchange (the client never closed its side), and said so.
      expect(answer.toLowerCase(), `${era} ${method}`).toMatch(/\r\nconnection: close\r\n/);
      expect(answer.toLowerCase()).not.toContain('connection: keep-alive');
    }
  });

  it('answers 400 to a target of another scheme or no known form', async () => {
    const ftp = await send('POST', `ftp://127.0.0.1:${port}/mcp`, `127.0.0.1:${port}`, MCP, LIST);
    expect(ftp.status).toBe(400);
    expect(JSON.parse(ftp.body).error).toMatchObject({ message: expect.stringContaining('must be an http or https URL'), data: { kind: 'malformed_target' } });
    // Node's own parser refuses these before the gateway sees them (node-server.ts: 400, -32600).
    for (const target of ['mcp', `127.0.0.1:${port}`]) expect((await send('POST', target, `127.0.0.1:${port}`, MCP, LIST)).status, target).toBe(400);
  });
});
