/**
 * The reference server's `close()` (its SIGTERM) ends within its grace whatever its clients do: a request
 * under way that never completes (a body that stops half-way) held `server.close()` until Node's
 * requestTimeout, five minutes (SRE try-out: the process outlived its SIGTERM by minutes, answering 500).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';

describe('the reference server closing', () => {
  it('ends within its grace while a request’s body never arrives', async () => {
    const platform = await startPlatform({ port: 0 });
    const upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
    const { hostname, port } = new URL(upstream.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc"`);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      await upstream.close();
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      socket.destroy();
      await platform.close();
    }
  }, 20_000);
});
