/**
 * A CONNECT (RFC 9110 §9.3.6, a tunnel to the authority it names) over a real socket, which fetch cannot
 * send: on the main and the metrics listener it is answered 405 with a JSON-RPC error body, an empty
 * Allow and `connection: close`, like every other refusal (node-server.ts). Node, with no 'connect'
 * listener, closed the connection without a word.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ upstream: { tools: [] }, gateway: { metrics: { port: await freePort() }, upstreams: [{ health: { intervalMs: 0 } }] } });
});
afterAll(async () => {
  await stack?.close();
});

/** `text` written as it is on a fresh connection to `url`'s port: every byte of the answer, until the server closes. */
function rawExchange(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('CONNECT', () => {
  it.each([
    ['main', () => stack.gatewayUrl],
    ['metrics', () => stack.gateway.metricsUrl!],
  ])('is answered on the %s listener with 405, a JSON-RPC body and connection: close, and tunnels nothing', async (_name, url) => {
    // The socket stays open for writing: the answer must come, and the close, without the client's end.
    const answer = await rawExchange(url(), 'CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n');
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(head).toMatch(/\r\nallow: ?(\r\n|$)/i);
    expect(JSON.parse(body)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: expect.stringContaining('CONNECT'), data: { kind: 'method_not_allowed' } },
    });
    expect(answer).not.toContain('169.254.169.254');
  });
});
