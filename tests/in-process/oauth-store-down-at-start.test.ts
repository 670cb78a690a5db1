/**
 * The built-in authorization server started while its Redis is down: an outage, not a configuration
 * error, so the gateway starts (it ended the process after 10 s, a CrashLoopBackOff for as long as the
 * outage lasts), `/readyz` answers 503 naming the OAuth store, and it serves once Redis answers. Without
 * `oauth.tokenSecret` the sealing key lives in Redis: the authorization server starts once it can read
 * it. A Redis that answers and refuses the credentials is a configuration error: refused at start. In
 * process; Redis itself (on the port that was down) only with `redis-server` (skipped only outside CI).
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { freePort } from '../helpers/free-port.ts';
import { hasRedis, startRedisAt } from '../helpers/redis.ts';
import { waitFor } from '../helpers/wait.ts';

let gateway: InProcessGateway | undefined;
let redis: ChildProcess | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  redis?.kill('SIGKILL');
  redis = undefined;
});

const tools = [{ definition: { name: 'get_me', inputSchema: { type: 'object' } } as Tool, call: () => ({ content: [{ type: 'text' as const, text: 'me' }] }) }];

function start(port: number, oauth: DeepPartial<GatewayConfig['oauth']>, password = ''): InProcessGateway {
  return inProcessGateway(
    {
      cache: { store: 'redis', redisUrl: `redis://${password ? `:${password}@` : ''}127.0.0.1:${port}`, operationTimeoutMs: 1000 },
      // The pin store would hold the tools for the same outage: left out to watch the authorization server alone.
      pinning: { mode: 'off', lint: 'off' },
      oauth: { mode: 'builtin', ...oauth },
      upstreams: [{ health: { intervalMs: 0 } }],
    },
    { fake: { tools } },
  );
}

async function readyz(): Promise<{ status: number; body: { status: string; reasons?: string[] } }> {
  await gateway!.runtime.warm();
  const response = await gateway!.fetch(new Request(`${gateway!.gatewayUrl}/readyz`));
  return { status: response.status, body: (await response.json()) as { status: string; reasons?: string[] } };
}

async function startRedisOn(port: number, password?: string): Promise<void> {
  redis = await startRedisAt(port, password);
}

describe('the built-in authorization server whose Redis is down at start', () => {
  it('with oauth.tokenSecret: starts at once, is not ready naming the OAuth store, and is ready once Redis answers', async () => {
    const port = await freePort();
    gateway = start(port, { tokenSecret: 'test-secret-0123456789abcdef-down-at-start' });
    await gateway.runtime.startOAuth(gateway.gatewayUrl);
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not_ready');
    expect(down.body.reasons).toContainEqual(expect.stringMatching(/^the OAuth store \(Redis at cache\.redisUrl\) cannot be reached \(connect ECONNREFUSED/));
    // The authorization server answers meanwhile: its metadata needs no store.
    expect((await gateway.fetch(new Request(`${gateway.gatewayUrl}/.well-known/oauth-authorization-server`))).status).toBe(200);
    if (!hasRedis) return;
    await startRedisOn(port);
    await waitFor('the gateway to be ready', async () => (await readyz()).status === 200, { timeoutMs: 15_000 });
    expect((await readyz()).body).toEqual({ status: 'ready' });
  }, 30_000);

  it.skipIf(!hasRedis)(
    'without oauth.tokenSecret: waits for the sealing key in Redis (503 meanwhile), then starts',
    async () => {
      const port = await freePort();
      gateway = start(port, {});
      let started = false;
      const starting = gateway.runtime.startOAuth(gateway.gatewayUrl).then(() => (started = true));
      await waitFor('a failed attempt to read the sealing key', () => gateway!.logs.records('oauth: Redis at cache.redisUrl cannot be reached').length > 0, {
        timeoutMs: 10_000,
      });
      const down = await readyz();
      expect(down.status).toBe(503);
      expect(down.body.reasons).toContain('the authorization server has not started yet: it waits for its Redis store at cache.redisUrl');
      expect(started).toBe(false);
      await startRedisOn(port);
      await starting;
      await waitFor('the gateway to be ready', async () => (await readyz()).status === 200, { timeoutMs: 15_000 });
    },
    30_000,
  );

  it.skipIf(!hasRedis)('a Redis that refuses the credentials is a configuration error: the start is refused', async () => {
    const port = await freePort();
    await startRedisOn(port, 'the-right-password');
    gateway = start(port, { tokenSecret: 'test-secret-0123456789abcdef-down-at-start' }, 'a-wrong-password');
    await expect(gateway.runtime.startOAuth(gateway.gatewayUrl)).rejects.toThrow(/^oauth: Redis at cache\.redisUrl refused the connection \(WRONGPASS/);
  });
});
