/**
 * A 2026-07-28 `subscriptions/listen` stream open when the gateway closes ends cleanly: its chunked body
 * is terminated before the connection closes, so the client reads an ended stream and listens again
 * elsewhere (operator try-out: it was cut, curl exit 18, "transfer closed with outstanding read data").
 * The real gateway (startGateway, a real socket), its upstream in memory.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { fakeUpstream } from '../../fixtures/fake-upstream.ts';
import { followSse, openStream, rpc } from '../../helpers/raw-mcp.ts';
import { ANY_BEARER, anonymousGatewayConfig } from '../../helpers/stack.ts';

const upstream = fakeUpstream({ tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] });
let gateway: RunningGateway | undefined;
afterAll(async () => {
  await gateway?.close();
});

describe('a listen stream open at shutdown', () => {
  it('is ended, not cut, before the connection closes', async () => {
    gateway = await startGateway(
      anonymousGatewayConfig({
        shutdown: { drainMs: 0, graceMs: 200 },
        upstreams: [{ name: 'u', url: 'http://u.upstream.invalid/mcp', health: { intervalMs: 0 } }],
      }),
      { upstreamTransport: () => upstream.fetch },
    );
    const { headers, body } = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const stream = await openStream(`${gateway.url}/mcp`, body, { ...headers, ...ANY_BEARER });
    expect(stream.statusCode).toBe(200);
    const messages = followSse(stream);
    await messages.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    const outcome = new Promise<string>((resolve) => {
      stream.on('end', () => resolve('ended'));
      stream.on('aborted', () => resolve('cut'));
      stream.on('error', (error) => resolve(`cut: ${error.message}`));
    });
    await gateway.close();
    gateway = undefined;
    expect(await outcome).toBe('ended');
  });
});
