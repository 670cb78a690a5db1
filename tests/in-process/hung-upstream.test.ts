/**
 * An upstream that accepts connections and never answers (a process stopped with SIGSTOP, a blackholed
 * port), alone behind the gateway: a call to it fails within one handshake bound, with an error that
 * names that bound, not after four of them in a row (robustness try-out: 32 s with timeoutMs 8000).
 *
 * The gateway runs in process; the upstream is a real loopback socket. The bound asserted is generous
 * (two handshake bounds), so a slow machine passes and one bound per step of the request does not.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc } from '../helpers/raw-mcp.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;

/** A listener that accepts every connection and never answers: a stopped or wedged server. */
async function blackhole(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function gatewayFor(upstreams: DeepPartial<GatewayConfig['upstreams'][number]>[]): InProcessGateway {
  return inProcessGateway(
    loadConfig({ path: CONFORMANCE_CONFIG, env: {}, overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams, log: { level: 'silent' } } }),
  );
}

describe('a hung upstream alone', () => {
  it('fails a call within one handshake bound, naming it, rather than one per step of the request', async () => {
    const silent = await blackhole();
    const timeoutMs = 3_000;
    const gateway = gatewayFor([{ name: 'hung', url: `http://127.0.0.1:${silent.port}/mcp`, timeoutMs }]);
    try {
      const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'lookup', arguments: {} });
      const answer = post(`${gateway.gatewayUrl}/mcp`, body, headers).then(messagesOf);
      let timer: NodeJS.Timeout | undefined;
      // Two bounds' worth is the ceiling: describing the upstream, fetching its catalogue and the call each waited a bound of their own (4 x 3 s).
      const ceiling = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), 2 * timeoutMs)));
      const outcome = await Promise.race([answer, ceiling]);
      clearTimeout(timer);
      answer.catch(() => undefined);
      expect(outcome, 'an answer within one handshake bound').not.toBe('stalled');
      expect(JSON.stringify(outcome)).toContain(`did not answer the handshake within ${timeoutMs} ms, the lesser of its timeoutMs and 10 s`);
    } finally {
      await silent.close();
      await gateway.close();
    }
  });
});
