/**
 * A stdio upstream that starts and never answers holds a caller's first request at most its handshake bound
 * (config/README: callers "wait for its first connection after start or reload (at most the handshake
 * bound)"). The SDK's version probe runs on a sibling process and the initialize after it waited the bound
 * again: 21.9 s for a 10 s bound (operator try-out). The bound is now the whole handshake's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { connectV2, namesOf } from '../../helpers/clients.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { ANY_BEARER } from '../../helpers/stack.ts';

const BOUND_MS = 1_500;
let replay: ReplayUpstream;
let gateway: RunningGateway;
beforeAll(async () => {
  replay = await startReplayUpstream({ tools: [{ name: 'ping', inputSchema: { type: 'object' } }] });
  const config = loadConfig({
    env: {},
    overrides: {
      listen: { port: 0 },
      anonymous: true,
      upstreams: [
        { name: 'replay', url: replay.url, forwardCredentials: false },
        { name: 'silent', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], timeoutMs: BOUND_MS },
      ],
    },
  });
  delete config.scopes.endpoint;
  gateway = await startGateway(config, { logDestination: new LogCapture() });
});
afterAll(async () => {
  await gateway?.close();
  await replay?.close();
});

describe('a stdio upstream that never answers the handshake', () => {
  it("holds the first tools/list no longer than its bound (not the probe's bound and then the handshake's)", async () => {
    const started = performance.now();
    const client = await connectV2(`${gateway.url}/mcp`, ANY_BEARER);
    try {
      expect(namesOf(await client.listTools())).toEqual(['replay__ping']);
    } finally {
      await client.close();
    }
    // The attempt began when the gateway started, before this request: twice the bound was the old floor.
    expect(performance.now() - started).toBeLessThan(1.6 * BOUND_MS);
  });
});
