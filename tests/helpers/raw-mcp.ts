import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { isInProcess, routedFetch } from './in-process.ts';

/** The full demo key (platform seed); any credential works where no scope endpoint is configured. */
export const FULL_KEY = { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'demo-secret-full' } as const;
export const DATA_KEY = { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' } as const;
export const IDENTITY_KEY = { 'x-cpz-key': 'cpz_demo_identity', 'x-cpz-secret': 'demo-secret-identity' } as const;
export const DEMO_KEYS = { full: FULL_KEY, data: DATA_KEY, identity: IDENTITY_KEY } as const;

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
export const ACCEPT_BOTH = 'application/json, text/event-stream';

export type JsonRpcMessage = {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

/**
 * One JSON-RPC request as a client of `era` sends it over Streamable HTTP: for 2026-07-28 the `_meta`
 * envelope plus the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers (spec basic/transports
 * "Request Metadata"); for 2025-11-25 the MCP-Protocol-Version header alone.
 */
export function rpc(era: 'modern' | 'legacy', id: string | number | undefined, method: string, params: Record<string, unknown> = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...FULL_KEY };
  const body: JsonRpcMessage = { jsonrpc: '2.0', method, params: { ...params } };
  if (id !== undefined) body.id = id;
  if (era === 'modern') {
    headers['mcp-protocol-version'] = MODERN;
    headers['mcp-method'] = method;
    const name = params.name ?? params.uri;
    if (typeof name === 'string') headers['mcp-name'] = name;
    const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
    body.params!._meta = {
      ...meta,
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'compat-tests', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
  } else {
    headers['mcp-protocol-version'] = LEGACY;
  }
  return { headers, body };
}

/** Parses a whole response: a JSON body, or every `data:` message of an SSE body, in order. */
export async function messagesOf(response: Response): Promise<JsonRpcMessage[]> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return parseSse(text);
  return text ? [JSON.parse(text) as JsonRpcMessage] : [];
}

/** The JSON-RPC messages in complete SSE events of `text` (events end with a blank line). */
export function parseSse(text: string): JsonRpcMessage[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data) as JsonRpcMessage);
}

/** POSTs one body (object or batch array) and returns the fetch Response. */
export function post(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return routedFetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** A raw response body as it arrives, with its status and headers (lower-case names), as node:http gives them. */
export type OpenStream = Readable & Pick<IncomingMessage, 'statusCode' | 'headers'>;

/**
 * POSTs with node:http (no automatic decompression, exact headers) and hands back the raw response
 * as soon as its headers arrive, so a test can read the body piece by piece while the server works.
 * An in-process gateway's URL is served by its runtime, the body streamed the same way.
 */
export async function openStream(url: string, body: unknown, headers: Record<string, string>): Promise<OpenStream> {
  if (isInProcess(url)) {
    const response = await routedFetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    const stream = response.body ? Readable.fromWeb(response.body as NodeReadableStream) : Readable.from([]);
    return Object.assign(stream, { statusCode: response.status, headers: Object.fromEntries(response.headers) });
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * Follows the SSE messages of a raw response as they arrive. `waitFor(match)` resolves with the first
 * message (already seen or still to come) that matches, and rejects if the stream ends without one.
 */
export function followSse(stream: Readable) {
  const seen: JsonRpcMessage[] = [];
  const waiters: { match: (m: JsonRpcMessage) => boolean; resolve: (m: JsonRpcMessage) => void; reject: (e: Error) => void }[] = [];
  let buffer = '';
  let ended = false;
  const settle = () => {
    for (const waiter of [...waiters]) {
      const found = seen.find(waiter.match);
      if (found) waiter.resolve(found);
      else if (ended) waiter.reject(new Error(`SSE stream ended without the awaited message; got ${JSON.stringify(seen).slice(0, 400)}`));
      else continue;
      waiters.splice(waiters.indexOf(waiter), 1);
    }
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    const end = buffer.lastIndexOf('\n\n');
    if (end < 0) return;
    seen.push(...parseSse(buffer.slice(0, end + 2)));
    buffer = buffer.slice(end + 2);
    settle();
  });
  stream.on('end', () => {
    ended = true;
    settle();
  });
  return {
    seen,
    waitFor: (match: (m: JsonRpcMessage) => boolean) =>
      new Promise<JsonRpcMessage>((resolve, reject) => {
        waiters.push({ match, resolve, reject });
        settle();
      }),
  };
}
