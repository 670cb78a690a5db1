/**
 * Node server timeouts (issue 18; config server.*): a client that trickles its headers or its body, or
 * leaves a kept-alive connection idle, is cut off at the configured bound instead of Node's defaults
 * (headers 60 s, request 300 s), and a refused request still gets a JSON-RPC body (408).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] },
    gateway: { server: { headersTimeoutMs: 1000, requestTimeoutMs: 1500, keepAliveTimeoutMs: 1000 } },
  });
});
afterAll(async () => {
  await stack?.close();
});

/** Opens a raw connection, writes `first`, and resolves with everything read until the server closes it (or rejects after `boundMs`). */
function until(first: string, boundMs: number, keepWriting?: (socket: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(stack.gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(first);
      keepWriting?.(socket);
    });
    let text = '';
    const bound = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${boundMs} ms`));
    }, boundMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => {
      clearTimeout(bound);
      resolve(text);
    });
    socket.on('error', () => undefined);
  });
}

const jsonBody = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { jsonrpc: string; error: { code: number; message: string } };

describe('server timeouts', () => {
  it('answers 408 with a JSON-RPC body to a client that never finishes its headers', async () => {
    const text = await until('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: app', 8000);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(jsonBody(text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringContaining('server.headersTimeoutMs') } });
  });

  it('cuts off a client that trickles its body past server.requestTimeoutMs', async () => {
    let timer: NodeJS.Timeout | undefined;
    const text = await until(
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nx-cpz-key: k\r\nx-cpz-secret: s\r\ncontent-length: 1000\r\n\r\n{',
      8000,
      (socket) => void (timer = setInterval(() => socket.writable && socket.write(' '), 200)),
    ).finally(() => clearInterval(timer));
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle kept-alive connection after server.keepAliveTimeoutMs', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const text = await until(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\nx-cpz-key: k\r\nx-cpz-secret: s\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      // Node's own default is 5 s: closing well before it is the configured 1 s at work.
      3500,
    );
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
  });
});
