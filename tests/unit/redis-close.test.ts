/**
 * store/redis-connection.ts `closeRedisConnection` over a Redis that accepts the connection and never
 * answers: it returns within its budget, the pending command is rejected, and the connection is dropped
 * (review: close() then destroy() left the socket open, destroy() throwing once close() had marked it
 * closed). And over a Redis that answers, the commands sent before the close are answered first.
 */
import { createServer, type Socket } from 'node:net';
import { createClient } from '@redis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeRedisConnection, type RedisConnection } from '../../gateway/store/redis-connection.ts';
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.ts';
import { waitFor } from '../helpers/wait.ts';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

describe('closeRedisConnection', () => {
  it('drops the connection to a Redis that never answers, the pending command rejected', async () => {
    const sockets: Socket[] = [];
    const closed: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('close', () => closed.push(socket));
      // Read (and drop) what the client sends, so its end is seen.
      socket.resume();
      socket.on('error', () => {});
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    // Its handshake (CLIENT SETINFO) is never answered: connect() never resolves; the connection is open all the same.
    void client.connect().catch(() => {});
    await waitFor('the connection', () => sockets.length === 1);
    const pending = client.get('k').then(
      () => 'answered',
      () => 'rejected',
    );
    await closeRedisConnection(client as unknown as RedisConnection, 200);
    expect(await pending).toBe('rejected');
    await waitFor('the server to see the connection closed', () => closed.length === 1, { timeoutMs: 5_000 });
  });
});

describe.skipIf(!hasRedis)('closeRedisConnection over a real redis-server', () => {
  // Its own redis-server: CI starts none on 6379 (this test, once on the local one, failed there).
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.kill();
  });

  it('lets a Redis that answers answer what was sent before it', async () => {
    const client = createClient({ url: redis.url });
    client.on('error', () => {});
    await client.connect();
    const key = `redis-close-test:${process.pid}`;
    const set = client.set(key, 'v', { EX: 60 });
    await closeRedisConnection(client as unknown as RedisConnection, 2_000);
    expect(await set).toBe('OK');
    expect(client.isOpen).toBe(false);
  });
});
