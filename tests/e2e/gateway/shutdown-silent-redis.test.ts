/**
 * SIGTERM on the real gateway process (gateway/main.ts) whose Redis accepts connections and never answers
 * (a hung server, a black-holing proxy): the process still closes and exits 0 (operator try-out: it never
 * did; the rate limiter's close waited for Redis without a bound). And a second signal during a close
 * exits at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;

let upstream: FakeUpstream | undefined;
let silent: Server | undefined;
const held: Socket[] = [];
let gateway: ChildProcess | undefined;

afterEach(async () => {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
  }
  for (const socket of held.splice(0)) socket.destroy();
  await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
  await upstream?.close();
});

/** A gateway process over a Redis that accepts and never answers; resolves once it listens. */
async function startOverSilentRedis(extraEnv: Record<string, string> = {}): Promise<{ stderr: () => string; stdout: () => string }> {
  upstream = await startFakeUpstream({ tools: [{ definition: { name: 'work', inputSchema: { type: 'object' } } as Tool }] });
  silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  const redisPort = (silent.address() as { port: number }).port;
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && name !== 'REDIS_URL'));
  let stderr = '';
  let stdout = '';
  gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', 'config/conformance.yaml'], {
    cwd: ROOT,
    env: {
      ...env,
      GATEWAY_LISTEN_PORT: String(port),
      GATEWAY_UPSTREAMS_0_URL: upstream.url,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      // Every store on Redis: the rate limiter's counters too (its close was the unbounded one).
      GATEWAY_RATE_LIMITS_STORE: 'redis',
      GATEWAY_RATE_LIMITS_REQUESTS: '{"points":1000,"durationMs":60000}',
      GATEWAY_SHUTDOWN_DRAIN_MS: '0',
      GATEWAY_LOG_LEVEL: 'info',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout!.on('data', (chunk) => (stdout += chunk));
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor('the gateway to listen', () => stderr.includes('gateway listening on'), { timeoutMs: PROCESS_BUDGET_MS });
  // Its stores have connected to the silent Redis (and wait for its answers).
  await waitFor('the stores to connect', () => held.length >= 2, { timeoutMs: PROCESS_BUDGET_MS });
  return { stderr: () => stderr, stdout: () => stdout };
}

describe('a gateway whose Redis never answers', { timeout: PROCESS_BUDGET_MS * 3 }, () => {
  it('closes and exits 0 on SIGTERM, its Redis connections given up after cache.operationTimeoutMs', async () => {
    const { stdout } = await startOverSilentRedis();
    const exited = once(gateway!, 'exit') as Promise<[number | null, string | null]>;
    gateway!.kill('SIGTERM');
    // Bounded by the test's own budget only: before the fix the process never exited.
    expect(await exited).toEqual([0, null]);
    expect(stdout()).toContain('"gateway closed"');
  });

  it('exits at once, 1, on a second signal while it closes', async () => {
    // Each store's close waits its whole budget for this Redis: the close takes seconds, the second signal comes first.
    const { stderr, stdout } = await startOverSilentRedis({ GATEWAY_CACHE_OPERATION_TIMEOUT_MS: '10000' });
    const exited = once(gateway!, 'exit') as Promise<[number | null, string | null]>;
    gateway!.kill('SIGINT');
    await waitFor('the close to begin', () => stderr().includes('SIGINT: closing the gateway'));
    gateway!.kill('SIGINT');
    expect(await exited).toEqual([1, null]);
    expect(stderr()).toContain('SIGINT again: exiting now, without finishing the close');
    expect(stdout()).not.toContain('"gateway closed"');
  });
});
