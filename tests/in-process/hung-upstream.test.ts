/**
 * An upstream that accepts connections and never answers (a process stopped with SIGSTOP, a blackholed
 * port) costs the requests that do not need it nothing: with a healthy upstream beside it, calls to the
 * healthy one's tools, tools/list and search_tools answer while the hung one's reconnection attempts
 * (each as long as its handshake bound, 10 s here) or list refresh (its timeoutMs, 10 s) are under way.
 * Alone, a call to it fails within one handshake bound, with an error that names that bound, not after
 * four of them in a row (robustness try-out: 32 s with timeoutMs 8000).
 *
 * The gateway runs in process; the upstreams are real loopback sockets (the undici hop and the SDK
 * client's fetch both reach them). "Answers" is bounded generously: PATIENCE_MS is a fraction of the
 * 10 s each of those waits took before, so a slow machine passes and a stall does not.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { fakeUpstream, startFakeUpstream, startInterceptedUpstream, type FakeUpstream, type InterceptedUpstream } from '../fixtures/fake-upstream.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc, type JsonRpcMessage } from '../helpers/raw-mcp.ts';
import { waitFor } from '../helpers/wait.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;
/** What the hung upstream would cost a request that waits for it: its timeoutMs, and so its handshake bound (10 s at most). */
const HUNG_TIMEOUT_MS = 10_000;
/** How long a request that does not need the hung upstream may take here: far below the 10 s it waited before. */
const PATIENCE_MS = 3_000;

const echo: Tool = { name: 'echo', description: 'Echoes its text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
const lookup: Tool = { name: 'lookup', description: 'Looks a record up.', inputSchema: { type: 'object', properties: {} } };

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

/** A loopback port nothing listens on now (connections to it are refused). */
async function closedPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function gatewayFor(upstreams: DeepPartial<GatewayConfig['upstreams'][number]>[]): InProcessGateway {
  return inProcessGateway(
    loadConfig({ path: CONFORMANCE_CONFIG, env: {}, overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams, log: { level: 'silent' } } }),
  );
}

/** One request (2026-07-28 wire), or `stalled` when no answer came within PATIENCE_MS. */
async function within(gateway: InProcessGateway, path: '/mcp' | '/mcp/compact', method: string, params: Record<string, unknown> = {}) {
  const { headers, body } = rpc('modern', 1, method, params);
  const answer = post(`${gateway.gatewayUrl}${path}`, body, headers).then(messagesOf);
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), PATIENCE_MS)));
  try {
    const outcome = await Promise.race([answer, stalled]);
    return outcome === 'stalled' ? outcome : outcome[0]!;
  } finally {
    clearTimeout(timer);
    // A stalled request finishes on its own (the hung upstream's timeout); its outcome is not this test's.
    answer.catch(() => undefined);
  }
}

const resultOf = (message: JsonRpcMessage | 'stalled') => (message === 'stalled' ? message : (message.result as Record<string, unknown> | undefined));
const toolNames = (message: JsonRpcMessage | 'stalled'): string[] | 'stalled' =>
  message === 'stalled' ? message : ((message.result as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);

/** The requests that need only the healthy upstream `good`, each answered without waiting for the hung one. */
async function expectHealthyServed(gateway: InProcessGateway): Promise<void> {
  const call = await within(gateway, '/mcp', 'tools/call', { name: 'good__echo', arguments: { text: 'hi' } });
  expect(resultOf(call), 'tools/call of the healthy upstream').toMatchObject({ content: [{ type: 'text' }] });
  expect((resultOf(call) as { isError?: boolean }).isError).toBeFalsy();
  expect(toolNames(await within(gateway, '/mcp', 'tools/list')), 'tools/list').toContain('good__echo');
  const search = await within(gateway, '/mcp/compact', 'tools/call', { name: 'search_tools', arguments: { query: 'echoes text back' } });
  expect(resultOf(search), 'search_tools').not.toBe('stalled');
  expect(JSON.stringify(resultOf(search))).toContain('good__echo');
}

describe('a hung upstream beside a healthy one', () => {
  // Run in order: the hung upstream first (its sockets cut, a handshake the gateway's close would wait for fails at once).
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });

  it('that comes back hung after an outage: its reconnection attempts hold up no request for the healthy one', async () => {
    const good: FakeUpstream = await startFakeUpstream({
      tools: [{ definition: echo, call: (args) => ({ content: [{ type: 'text', text: String(args.text) }] }) }],
    });
    // Down at first (refused: the first connection fails at once), then back as a listener that never answers.
    const port = await closedPort();
    const gateway = gatewayFor([
      { name: 'good', url: good.url },
      { name: 'hung', url: `http://127.0.0.1:${port}/mcp`, timeoutMs: HUNG_TIMEOUT_MS, health: { intervalMs: 100 } },
    ]);
    let silent: Awaited<ReturnType<typeof blackhole>> | undefined;
    closers.push(
      async () => silent?.close(),
      () => gateway.close(),
      () => good.close(),
    );
    const hung = gateway.runtime.state.upstreams.find((u) => u.client.name === 'hung')!.client;
    expect(toolNames(await within(gateway, '/mcp', 'tools/list'))).toEqual(['good__echo']);
    await waitFor('the hung upstream to be down', () => hung.health().state === 'down');
    silent = await blackhole(port);
    // The health probe's reconnection attempt, connected and waiting for a handshake answer that never comes.
    await waitFor('a reconnection attempt to the hung upstream', () => hung.health().attempting);
    for (let round = 0; round < 3; round++) await expectHealthyServed(gateway);
    expect(hung.health().state).toBe('down');
  });

  for (const [mechanism, settings, lifetimeMs] of [
    // Its catalogue kept for 300 ms and the health probe off: past that, an expired copy serves while it is refreshed.
    ['an expired copy of its catalogue serves while the refresh waits', { catalog: { ttlMs: 300 }, health: { intervalMs: 0 } }, 300],
    // Its catalogue not to be kept (ttlMs 0), asked at once: the merged list waits for it only until the health probe finds it lost.
    [
      'a catalogue it says not to keep is waited for only until the probe finds it lost',
      { catalog: { ttlMs: 0 }, health: { intervalMs: 100, timeoutMs: 100 } },
      0,
    ],
  ] as const) {
    it(`that stops answering once connected: ${mechanism}`, async () => {
      const good = await startFakeUpstream({ tools: [{ definition: echo, call: (args) => ({ content: [{ type: 'text', text: String(args.text) }] }) }] });
      let hanging = false;
      const held = new Set<ServerResponse>();
      const stopped: InterceptedUpstream = await startInterceptedUpstream(
        fakeUpstream({ tools: [{ definition: lookup, call: () => ({ content: [] }) }] }),
        (_body, _req, res) => {
          if (!hanging) return false;
          held.add(res);
          return true;
        },
      );
      const gateway = gatewayFor([
        { name: 'good', url: good.url },
        { name: 'hung', url: stopped.url, timeoutMs: HUNG_TIMEOUT_MS, ...settings },
      ]);
      closers.push(
        async () => {
          for (const res of held) res.destroy();
          await stopped.close();
        },
        () => gateway.close(),
        () => good.close(),
      );
      expect(toolNames(await within(gateway, '/mcp', 'tools/list'))).toEqual(['good__echo', 'hung__lookup']);
      hanging = true;
      // Past the hung upstream's catalogue lifetime: the next merged read needs a refresh of it.
      const expired = Date.now() + lifetimeMs;
      await waitFor('its catalogue to expire', () => Date.now() > expired);
      for (let round = 0; round < 3; round++) await expectHealthyServed(gateway);
    });
  }
});

describe('an upstream that restarts and then lists slowly, beside a healthy one', () => {
  it('serves the copy from before the restart while the new list is fetched: no request for the healthy one waits', async () => {
    // Upstream try-out: an upstream restarted whose tools/list took minutes held every request, calls to the other
    // upstream's tools included, for its timeoutMs (29.7 s): a reconnection expired its copy without a lifetime left.
    const good = await startFakeUpstream({ tools: [{ definition: echo, call: (args) => ({ content: [{ type: 'text', text: String(args.text) }] }) }] });
    let restarted = false;
    const held = new Set<ServerResponse>();
    const slow: InterceptedUpstream = await startInterceptedUpstream(
      fakeUpstream({ tools: [{ definition: lookup, call: () => ({ content: [] }) }] }),
      (body, _req, res) => {
        if (!restarted || !body.includes('"tools/list"')) return false;
        held.add(res);
        return true;
      },
    );
    const gateway = gatewayFor([
      { name: 'good', url: good.url },
      // Its lists kept a minute (the fake says nothing of a lifetime): the copy had one when the restart came.
      { name: 'slow', url: slow.url, timeoutMs: HUNG_TIMEOUT_MS, catalog: { ttlMs: 60_000 }, health: { intervalMs: 100, timeoutMs: 200 } },
    ]);
    try {
      expect(toolNames(await within(gateway, '/mcp', 'tools/list'))).toEqual(['good__echo', 'slow__lookup']);
      const client = gateway.runtime.state.upstreams.find((u) => u.client.name === 'slow')!.client;
      // The restart: connections refused until the probe finds it down, then back, its lists slow from then on.
      const { port } = slow.server.address() as AddressInfo;
      slow.server.closeAllConnections();
      await new Promise((resolve) => slow.server.close(resolve));
      await waitFor('the upstream to be found down', () => client.health().state === 'down');
      restarted = true;
      await new Promise<void>((resolve) => slow.server.listen(port, '127.0.0.1', resolve));
      await waitFor('the upstream to be back', () => client.health().state === 'up');
      for (let round = 0; round < 3; round++) await expectHealthyServed(gateway);
      // The copy from before the restart is what serves its tools meanwhile.
      expect(toolNames(await within(gateway, '/mcp', 'tools/list'))).toEqual(['good__echo', 'slow__lookup']);
    } finally {
      for (const res of held) res.destroy();
      await slow.close();
      await gateway.close();
      await good.close();
    }
  });
});

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
