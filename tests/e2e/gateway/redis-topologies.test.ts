/**
 * Redis as operators run it (gateway/store/redis-connection.ts), each with Debian's own redis-server and
 * redis-sentinel: TLS with a client certificate (`rediss://` + cache.redis.tls files; the server built
 * with TLS, `--tls-auth-clients yes`), a master found through Sentinel and followed across a failover,
 * and a three-node Cluster. In each, two gateways share one credential's scope entry (the scope endpoint
 * is asked once), and every connection carries its name (CLIENT LIST). A client without a certificate,
 * or trusting another CA, gets no connection: the store fails open (counted), callers are still served.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { DeepPartial } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';
import { freePort } from '../../helpers/free-port.ts';
import { inProcessGateway, type InProcessGateway } from '../../helpers/in-process.ts';
import { hasRedis, pong, startRedis, type RedisServer } from '../../helpers/redis.ts';
import { waitFor } from '../../helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'redis-topologies-'));
const KEY = { 'x-cpz-key': 'topology-key', 'x-cpz-secret': 'topology-secret' };
const TOOLS = [{ definition: { name: 'quote', inputSchema: { type: 'object' } } as Tool }];
const CACHE_KEY = 'topology-cache-key-0123456789abcdef0123';
let endpoint: ScopeEndpoint;
const gateways: InProcessGateway[] = [];

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ 'topology-key': ['quotes:read'], 'warm-up-key': ['quotes:read'] });
});
afterAll(async () => {
  await closeGateways();
  await endpoint?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Closes the gateways made so far: each describe before it stops its Redis (Sentinel's client would keep asking). */
async function closeGateways(): Promise<void> {
  await Promise.allSettled(gateways.splice(0).map((g) => g.close()));
}

/** An in-process gateway over an in-memory upstream, its scope entries in Redis as `cache` says. */
function gateway(cache: DeepPartial<GatewayConfig['cache']>): InProcessGateway {
  const g = inProcessGateway(
    // A first connection through Sentinel or a cluster takes several round trips: a budget for a loaded machine, not the 500 ms
    // default, and a scope lookup that waits for it (the store's budget is inside the lookup's).
    {
      scopes: { endpoint: endpoint.url, timeoutMs: 20_000, failureMode: 'closed' },
      cache: { key: CACHE_KEY, operationTimeoutMs: 5000, ...cache },
      upstreams: [{ health: { intervalMs: 0 }, scopes: { required: [] } }],
    },
    { fake: { tools: TOOLS } },
  );
  gateways.push(g);
  return g;
}

async function listTools(g: InProcessGateway, key: Record<string, string> = KEY): Promise<number> {
  const response = await g.fetch(
    new Request(g.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2025-06-18', ...key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    }),
  );
  await response.text();
  return response.status;
}

/**
 * Two gateways on the same store: the second finds the first's scope entry (the endpoint is asked once).
 * Each first opens its store connection with a request of another credential, so what is measured is sharing.
 */
async function sharedThrough(a: InProcessGateway, b: InProcessGateway, scopeKeys: () => string): Promise<void> {
  for (const g of [a, b]) expect(await listTools(g, { 'x-cpz-key': 'warm-up-key', 'x-cpz-secret': 'warm' })).toBe(200);
  const before = endpoint.hits;
  expect(await listTools(a)).toBe(200);
  expect(endpoint.hits).toBe(before + 1);
  await waitFor('the scope entry to reach Redis', () => scopeKeys().includes('mcp-gateway:scopes'));
  expect(await listTools(b)).toBe(200);
  expect(endpoint.hits).toBe(before + 1);
}

const openssl = (...args: string[]) => {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
};

/** A CA and a certificate it signs (EC P-256, one day), as PEM files in `dir`. */
function issue(ca: string, name: string, san: string): void {
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  );
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  );
}
function authority(name: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  );
}

describe.runIf(hasRedis)('rediss:// with a CA and a client certificate (redis-server built with TLS)', () => {
  let redis: RedisServer;
  let tlsPort: number;
  const file = (name: string) => join(dir, name);
  beforeAll(async () => {
    authority('ca');
    authority('other-ca');
    issue('ca', 'server', 'IP:127.0.0.1,DNS:localhost');
    issue('ca', 'client', 'DNS:gateway');
    tlsPort = await freePort();
    redis = await startRedis({
      args: [
        ...['--tls-port', String(tlsPort), '--tls-cert-file', file('server.crt'), '--tls-key-file', file('server.key')],
        ...['--tls-ca-cert-file', file('ca.crt'), '--tls-auth-clients', 'yes'],
      ],
    });
  });
  afterAll(async () => {
    await closeGateways();
    await redis?.kill();
  });

  it('shares scope entries between two gateways over TLS with a client certificate; each connection is named', async () => {
    const cache = {
      redisUrl: `rediss://127.0.0.1:${tlsPort}`,
      redis: { tls: { caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') } },
    };
    await sharedThrough(gateway(cache), gateway(cache), () => redis.cli('--scan'));
    expect(redis.cli('CLIENT', 'LIST')).toMatch(/name=mcp-gateway:cache /);
  });

  it('a gateway without a client certificate, or trusting another CA, gets no connection: served, the store failure counted', async () => {
    for (const tls of [{ caFile: file('ca.crt') }, { caFile: file('other-ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') }]) {
      const g = gateway({ redisUrl: `rediss://127.0.0.1:${tlsPort}`, redis: { tls }, operationTimeoutMs: 1000 });
      expect(await listTools(g)).toBe(200);
      await waitFor('the store failure to be counted', async () =>
        /^mcp_cache_store_errors_total\{cache="scopes",op="[a-z]+"\} [1-9]/m.test(await g.runtime.state.metrics.registry.metrics()),
      );
    }
  });
});

describe.runIf(hasRedis)('Redis Sentinel (redis-sentinel): the master found and followed across a failover', () => {
  let master: RedisServer;
  let replica: RedisServer;
  let sentinel: ChildProcess;
  let sentinelPort: number;
  const sentinelCli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(sentinelPort), ...args], { encoding: 'utf8' }).stdout;
  beforeAll(async () => {
    // In the test's folder: a replica's full sync writes dump.rdb where it runs.
    master = await startRedis({ cwd: dir });
    replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)], cwd: dir });
    sentinelPort = await freePort();
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `sentinel monitor gateway-master 127.0.0.1 ${master.port} 1`,
        'sentinel down-after-milliseconds gateway-master 1000',
        'sentinel failover-timeout gateway-master 10000',
        '',
      ].join('\n'),
    );
    sentinel = spawn('redis-sentinel', [conf], { stdio: 'ignore', cwd: dir });
    await waitFor('redis-sentinel to answer', () => pong(sentinelPort), { timeoutMs: 10_000 });
    await waitFor('the sentinel to see the replica', () => sentinelCli('SENTINEL', 'REPLICAS', 'gateway-master').includes(String(replica.port)), {
      timeoutMs: 20_000,
    });
  }, 40_000);
  afterAll(async () => {
    await closeGateways();
    sentinel?.kill('SIGKILL');
    await master?.kill();
    await replica?.kill();
  });

  it('shares scope entries through the master Sentinel names, and follows the new master after a failover', { timeout: 60_000 }, async () => {
    // The URL's host is not used in Sentinel mode: the sentinels name the master.
    const cache = {
      redisUrl: 'redis://sentinel-mode.invalid:6379',
      redis: { sentinel: { masterName: 'gateway-master', nodes: [`127.0.0.1:${sentinelPort}`] } },
    };
    const a = gateway(cache);
    const b = gateway(cache);
    await sharedThrough(a, b, () => master.cli('--scan'));
    expect(master.cli('CLIENT', 'LIST')).toMatch(/name=mcp-gateway:cache /);

    await master.kill();
    await waitFor(
      'the sentinel to promote the replica',
      () => sentinelCli('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'gateway-master').includes(String(replica.port)),
      {
        timeoutMs: 30_000,
      },
    );
    await waitFor('the replica to accept writes', () => replica.cli('ROLE').startsWith('master'), { timeoutMs: 10_000 });
    // Another credential's entry is written to the new master.
    const other = { 'x-cpz-key': 'topology-key', 'x-cpz-secret': 'another-secret' };
    await waitFor(
      'a gateway to write to the new master',
      async () => {
        await a.fetch(
          new Request(a.mcpUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2025-06-18', ...other },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
          }),
        );
        return replica.cli('CLIENT', 'LIST').includes('name=mcp-gateway:cache ') && replica.cli('DBSIZE').trim() !== '0';
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
  });
});

describe.runIf(hasRedis)('Redis Cluster (three redis-server nodes)', () => {
  const nodes: RedisServer[] = [];
  beforeAll(async () => {
    // A fresh node can be written to before the cluster is made: a gateway of a suite running beside this one,
    // whose Redis on that port was stopped, reconnects to whatever listens there next ('Node ... is not empty').
    // Such a node is thrown away with the others and the cluster made on new ports, three tries at most.
    for (let attempt = 1; ; attempt++) {
      for (let i = 0; i < 3; i++)
        nodes.push(await startRedis({ args: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}-${attempt}-${process.pid}.conf`], cwd: dir }));
      const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
        encoding: 'utf8',
      });
      if (create.status === 0) break;
      const output = `${create.stdout}${create.stderr}`;
      if (attempt === 3 || !/is not empty/.test(output)) throw new Error(`redis-cli --cluster create: ${output}`);
      await Promise.allSettled(nodes.splice(0).map((n) => n.kill()));
    }
    await waitFor('the cluster to be ok on every node', () => nodes.every((n) => n.cli('CLUSTER', 'INFO').includes('cluster_state:ok')), { timeoutMs: 20_000 });
  }, 40_000);
  afterAll(async () => {
    await closeGateways();
    await Promise.allSettled(nodes.map((n) => n.kill()));
  });

  it('shares scope entries between two gateways through the cluster, one seed in the URL and the others listed', async () => {
    const cache = { redisUrl: nodes[0]!.url, redis: { cluster: { nodes: nodes.slice(1).map((n) => n.url) } } };
    await sharedThrough(gateway(cache), gateway(cache), () => nodes.map((n) => n.cli('--scan')).join('\n'));
    // Every node the gateway needed knows its connection by name.
    expect(nodes.some((n) => /name=mcp-gateway:cache /.test(n.cli('CLIENT', 'LIST')))).toBe(true);
  });
});
