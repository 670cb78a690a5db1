/**
 * The line gateway/main.ts prints once it serves: a URL this machine can open, and for a wildcard bind the bind
 * itself (security try-out: `listen.host: 0.0.0.0` announced as http://127.0.0.1:<port> only, read as a loopback bind).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { freePort } from '../../helpers/free-port.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
let upstream: FakeUpstream | undefined;
let gateway: ChildProcess | undefined;

afterEach(async () => {
  if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
    gateway.kill('SIGKILL');
    await once(gateway, 'exit');
  }
  await upstream?.close();
});

/** The listening line of a gateway process bound to `host`. */
async function listeningLine(host: string): Promise<string> {
  upstream = await startFakeUpstream({ tools: [{ definition: { name: 'work', inputSchema: { type: 'object' } } as Tool }] });
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && name !== 'REDIS_URL'));
  let stderr = '';
  gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', 'config/conformance.yaml'], {
    cwd: ROOT,
    env: { ...env, GATEWAY_LISTEN_HOST: host, GATEWAY_LISTEN_PORT: String(port), GATEWAY_UPSTREAMS_0_URL: upstream.url },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  gateway.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor('the listening line', () => stderr.includes('reloads the configuration'), { timeoutMs: PROCESS_BUDGET_MS });
  gateway.kill('SIGTERM');
  await once(gateway, 'exit');
  return stderr
    .split('\n')
    .find((line) => line.startsWith('gateway listening on'))!
    .replace(/\d{2,}/g, 'N');
}

describe('the listening line', { timeout: PROCESS_BUDGET_MS * 2 }, () => {
  it('names a wildcard bind beside the URL to open', async () => {
    expect(await listeningLine('0.0.0.0')).toBe(
      'gateway listening on http://N.0.0.1:N/mcp (pid N: kill -HUP N reloads the configuration, bound to 0.0.0.0: every interface)',
    );
  });

  it('is the URL alone for a bind to one address', async () => {
    expect(await listeningLine('127.0.0.1')).toBe('gateway listening on http://N.0.0.1:N/mcp (pid N: kill -HUP N reloads the configuration)');
  });
});
