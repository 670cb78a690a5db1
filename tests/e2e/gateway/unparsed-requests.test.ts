/**
 * Requests the gateway answers before any handler runs (node-server.ts: headers over `limits.headerBytes`,
 * headers not received within `server.headersTimeoutMs`, a malformed request, a CONNECT) have an access line
 * and an `http_request_duration_seconds` observation like every other answer (edge.ts
 * `unparsedRequestAccounting`; SRE try-out: header floods and slow clients left neither).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ upstream: { tools: [] }, gateway: { server: { headersTimeoutMs: 1000 } } });
});
afterAll(() => stack?.close());

/** Sends `payload` (or nothing) on a fresh connection; resolves with the answer's status line once it closes. */
function raw(payload?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(stack.gatewayUrl);
    const socket = connect(Number(port), hostname, () =>
      payload === undefined ? socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n') : socket.end(payload),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text.split('\r\n')[0]!));
    socket.on('error', reject);
  });
}

describe('requests answered before any handler ran', () => {
  it('each has its access line (route unmatched, Node’s code as reason) and its metric', async () => {
    expect(await raw(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nx-pad: ${'p'.repeat(20_000)}\r\ncontent-length: 2\r\n\r\n{}`)).toMatch(/ 431 /);
    expect(await raw('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nbad header line\r\n\r\n')).toMatch(/ 400 /);
    expect(await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).toMatch(/ 405 /);
    // Headers begun and never finished: 408 once server.headersTimeoutMs has passed.
    expect(await raw()).toMatch(/ 408 /);
    await expect
      .poll(
        () =>
          stack.logs
            .records('request')
            .filter((r) => r.path === '')
            .map((r) => [r.status, r.method, r.reason, r.client]),
        { timeout: 5_000 },
      )
      .toEqual([
        [431, 'unknown', 'HPE_HEADER_OVERFLOW', '127.0.0.1'],
        [400, 'unknown', expect.stringMatching(/^HPE_/), '127.0.0.1'],
        [405, 'CONNECT', undefined, '127.0.0.1'],
        [408, 'unknown', 'ERR_HTTP_REQUEST_TIMEOUT', '127.0.0.1'],
      ]);
    const metrics = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    for (const [method, status] of [
      ['unknown', 431],
      ['unknown', 400],
      ['CONNECT', 405],
      ['unknown', 408],
    ])
      expect(metrics).toMatch(new RegExp(`^http_request_duration_seconds_count\\{route="unmatched",method="${method}",status_code="${status}"\\} 1$`, 'm'));
  });
});
