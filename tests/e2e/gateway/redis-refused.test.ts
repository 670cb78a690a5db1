/**
 * A Redis that answers and refuses the configuration (wrong password, a database index it does not have)
 * stops the start, and refuses a reload to it, naming `cache.redisUrl` and Redis's reply, never the
 * password: waiting cannot fix it, and the gateway started and served every store degraded for good (a
 * try-out: /readyz said 503 "pin store cannot be read" forever). A Redis that does not answer is an
 * outage: the gateway starts. The real gateway (startGateway) and a real redis-server with a password.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';
import { hasRedis, startRedisAt } from '../../helpers/redis.ts';
import { waitFor } from '../../helpers/wait.ts';

const CONFORMANCE_CONFIG = new URL('../../../config/conformance.yaml', import.meta.url).pathname;
const PASSWORD = 'redis-refused-test-password';

let upstream: FakeUpstream;
let redis: ChildProcess | undefined;
let port: number;
beforeAll(async () => {
  upstream = await startFakeUpstream({ tools: [] });
  port = await freePort();
  if (hasRedis) redis = await startRedisAt(port, PASSWORD);
});
afterAll(async () => {
  redis?.kill('SIGKILL');
  await upstream?.close();
});

function config(redisUrl: string): GatewayConfig {
  return loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'fixture', url: upstream.url }],
      cache: { redisUrl, operationTimeoutMs: 1000 },
      oauth: { mode: 'off' },
      log: { level: 'silent' },
    },
  });
}

async function refusal(start: Promise<unknown>): Promise<ConfigError> {
  const error = await start.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).not.toContain(PASSWORD);
  return error as ConfigError;
}

describe.skipIf(!hasRedis)('a Redis that refuses the configuration', () => {
  it('stops the start on a wrong password or a database it does not have, naming cache.redisUrl and its reply', async () => {
    const wrong = await refusal(startGateway(config(`redis://:not-${PASSWORD}@127.0.0.1:${port}`)));
    expect(wrong.keyPath).toBe('cache.redisUrl');
    expect(wrong.message).toMatch(/cache\.redisUrl: Redis refused the connection \(WRONGPASS .*\); waiting cannot fix this/);
    const database = await refusal(startGateway(config(`redis://:${PASSWORD}@127.0.0.1:${port}/99`)));
    expect(database.message).toMatch(/Redis refused the connection \(ERR DB index is out of range\)/);
  });

  it('stops the start on a password sent to a Redis that has none', async () => {
    const open = await freePort();
    const passwordless = await startRedisAt(open);
    try {
      const error = await refusal(startGateway(config(`redis://:${PASSWORD}@127.0.0.1:${open}`)));
      expect(error.message).toMatch(/Redis refused the connection \(ERR AUTH .*called without any password configured/);
    } finally {
      passwordless.kill('SIGKILL');
    }
  });

  it('refuses a reload to it, the running configuration serving on', async () => {
    const gateway = await startGateway(config(`redis://:${PASSWORD}@127.0.0.1:${port}`));
    const ready = () => waitFor('the gateway ready', async () => (await fetch(`${gateway.url}/readyz`)).status === 200);
    try {
      await ready();
      await refusal(gateway.reload(config(`redis://:not-${PASSWORD}@127.0.0.1:${port}`)));
      await ready();
    } finally {
      await gateway.close();
    }
  });

  it('starts while Redis does not answer at all (an outage the stores ride out)', async () => {
    const gateway = await startGateway(config(`redis://127.0.0.1:${await freePort()}`));
    await gateway.close();
  });
});
