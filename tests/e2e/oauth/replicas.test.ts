/**
 * Two gateway replicas sharing Redis behind one URL (a round-robin proxy, as nginx is in
 * docker-compose.yml): every step of the sign-in and every MCP request may land on either replica,
 * the token works on both, and after both restart. Drives tests/helpers/oauth-check.ts, which .ci/compose.sh
 * runs against the real compose stack. Needs `redis-server` on PATH.
 */
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { check, issue, listWithToken } from '../../helpers/oauth-check.ts';

describe.skipIf(!hasRedis)('built-in OAuth across two replicas behind one URL', () => {
  let redis: RedisServer;
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let upstream: Awaited<ReturnType<typeof startUpstreamServer>>;
  let proxy: Server;
  let base: string;
  let replicas: RunningGateway[] = [];
  const hits = [0, 0];
  const logs = new LogCapture();
  let redisUrl: string;

  const startReplicas = async () => {
    replicas = [];
    for (let i = 0; i < 2; i++) {
      const config = loadConfig({
        env: {},
        overrides: {
          listen: { port: 0 },
          publicUrl: base,
          upstreams: [{ url: upstream.url }],
          scopes: { endpoint: `${platform.url}/v1/me` },
          // A store budget a loaded 2-core machine meets (an OAuth write took over the 1 s floor there).
          cache: { redisUrl, operationTimeoutMs: 5_000 },
        },
      });
      replicas.push(await startGateway(config, { logDestination: logs }));
    }
  };

  beforeAll(async () => {
    redis = await startRedis();
    redisUrl = redis.url;
    platform = await startPlatform({ port: 0 });
    upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
    let next = 0;
    proxy = createServer((req, res) => {
      const index = next++ % 2;
      hits[index]!++;
      const target = new URL(replicas[index]!.url);
      const forward = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await startReplicas();
  });
  afterAll(async () => {
    for (const r of replicas) await r.close();
    proxy?.closeAllConnections();
    proxy?.close();
    await upstream?.close();
    await platform?.close();
    await redis?.kill();
  });

  it('signs in through either replica, and the token and its refresh work on both, before and after a restart of both', async () => {
    const saved = await issue(base);
    expect(hits[0]).toBeGreaterThan(0);
    expect(hits[1]).toBeGreaterThan(0);
    for (const replica of replicas) expect((await listWithToken(replica.url, saved.access)).status).toBe(200);
    const refreshed = await check(base, saved, 4);
    for (const r of replicas) await r.close();
    await startReplicas();
    for (const replica of replicas) expect((await listWithToken(replica.url, refreshed.access)).status).toBe(200);
    await check(base, refreshed, 4);
    expect(logs.text).not.toContain(saved.access);
    expect(logs.text).not.toContain('demo-secret-data');
  });
});
