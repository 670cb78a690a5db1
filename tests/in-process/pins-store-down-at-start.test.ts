/**
 * A replica started while its Redis pin store is down: it cannot tell a changed definition from a first
 * sight, so it holds every tool (`unverified`). /readyz must then say not ready (503, naming the pin
 * store) so that a load balancer sends no traffic to a replica serving nothing; a listing must not wait
 * the pin store's budget on every request while Redis stays down; and once Redis answers the tools are
 * judged again without waiting for a request (none comes to a replica that is not ready). In process;
 * the recovery part with a real `redis-server` on the port that was down (skipped only outside CI).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { FakeTool } from '../fixtures/fake-upstream.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';
import { connectEra } from '../helpers/era-client.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';
import { freePort } from '../helpers/free-port.ts';
import { hasRedis, pong } from '../helpers/redis.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from '../helpers/wait.ts';

const me: FakeTool = {
  definition: { name: 'get_me', description: 'Who am I.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } as Tool,
  call: () => ({ content: [{ type: 'text', text: 'me' }] }),
};

let stack: InProcessGateway | undefined;
let redis: ChildProcess | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  redis?.kill('SIGKILL');
  redis = undefined;
});

async function listed(): Promise<Tool[]> {
  const client = await connectEra('modern', new URL('/mcp', stack!.gatewayUrl), FULL_KEY);
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

const readyz = async () => {
  const response = await stack!.fetch(new Request(`${stack!.gatewayUrl}/readyz`));
  return { status: response.status, body: (await response.json()) as { status: string; reasons?: string[]; held?: { reason: string }[] } };
};

describe('a replica whose Redis pin store is down when it starts', () => {
  it('is not ready while its tools are held unverified, lists without waiting the store budget, and is ready once Redis answers', async () => {
    const port = await freePort();
    // Long, so that a listing that waits for the store stands out from one under load. The first listing
    // waits once for the catalogue cache's connection (keyv's), which then stays bypassed for 5 s.
    const BUDGET_MS = 8000;
    stack = await inProcessStack({
      upstream: { tools: [me] },
      gateway: { oauth: { mode: 'off' }, cache: { store: 'redis', redisUrl: `redis://127.0.0.1:${port}`, operationTimeoutMs: BUDGET_MS } },
    });
    expect(await listed()).toEqual([]);
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not_ready');
    expect(down.body.reasons).toEqual([expect.stringMatching(/^the pin store \(Redis at cache\.redisUrl\) cannot be read: 1 tool\(s\) held as unverified/)]);
    expect(down.body.held).toMatchObject([{ upstream: 'fake', tool: 'get_me', reason: 'unverified' }]);
    // Judged again past the retry delay (2 s): the store is asked again and fails at once.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const started = Date.now();
    expect(await listed()).toEqual([]);
    // Before, each such listing waited for the first connection for the store's whole budget (8 s here).
    expect(Date.now() - started).toBeLessThan(BUDGET_MS / 2);
    if (!hasRedis) return;

    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor('redis-server to answer', () => pong(port), { timeoutMs: 5000 });
    // No request to /mcp meanwhile: the pin guard judges again on its own once its poll reaches Redis.
    await waitFor('the replica to be ready', async () => (await readyz()).status === 200, { timeoutMs: 15_000 });
    expect((await readyz()).body).toEqual({ status: 'ready' });
    expect((await listed()).map((t) => t.name)).toEqual(['get_me']);
  }, 60_000);
});
