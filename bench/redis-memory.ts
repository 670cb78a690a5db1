/**
 * Redis memory the gateway uses, for sizing a shared store (docs/kubernetes.md):
 *
 *   npx tsx bench/redis-memory.ts            (needs redis-server on PATH)
 *
 * One redis-server of its own; a gateway (memory of its own aside) whose scope entries, catalogue and
 * task index live there. Measured with Redis's own accounting (MEMORY USAGE of every key the gateway
 * wrote, and INFO's used_memory before and after):
 * - per 1,000 credentials: 1,000 distinct callers each list tools once (one scope entry each);
 * - per 1,000 tools: the catalogue copy of an upstream serving 1,000 tools (each with a one-line
 *   description and a small input schema), as the shared catalogue store holds it.
 * OAuth grants are not exercised here (a sign-in per token needs the browser flow): see
 * docs/kubernetes.md for their figure.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { Tool } from '@modelcontextprotocol/server';
import { loadConfig } from '../config/load.ts';
import { startGateway } from '../gateway/gateway.ts';
import { startFakeUpstream } from '../tests/fixtures/fake-upstream.ts';
import { startScopeEndpoint } from '../tests/fixtures/scope-endpoint.ts';

const CREDENTIALS = 1000;
const TOOLS = 1000;

const port = 20000 + Math.floor(Math.random() * 20000);
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim();
for (let i = 0; i < 100 && cli('PING') !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 50));

const usedMemory = () => Number(/used_memory:(\d+)/.exec(cli('INFO', 'memory'))![1]);
/** Sum of MEMORY USAGE over the keys matching `pattern`, and their count. */
function keyBytes(pattern: string): { keys: number; bytes: number } {
  const keys = cli('--scan', '--pattern', pattern).split('\n').filter(Boolean);
  return { keys: keys.length, bytes: keys.reduce((sum, key) => sum + Number(cli('MEMORY', 'USAGE', key, 'SAMPLES', '0')), 0) };
}

const tools: { definition: Tool }[] = Array.from({ length: TOOLS }, (_, i) => ({
  definition: {
    name: `tool_${i}`,
    description: `Reads record kind ${i} of the platform: returns its fields, status and the time it last changed.`,
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', description: 'The record id.' }, limit: { type: 'integer', minimum: 1 } },
      required: ['id'],
    },
    annotations: { readOnlyHint: true },
  } as Tool,
}));
const upstream = await startFakeUpstream({ tools, toolsListHint: { ttlMs: 3_600_000, cacheScope: 'public' } });
const keys = Object.fromEntries(Array.from({ length: CREDENTIALS }, (_, i) => [`key-${i}`, ['records:read']]));
const endpoint = await startScopeEndpoint(keys);
const gateway = await startGateway(
  loadConfig({
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'records', url: upstream.url, health: { intervalMs: 0 }, scopes: { required: [] } }],
      scopes: { endpoint: endpoint.url, ttlMs: 3_600_000 },
      cache: { redisUrl: `redis://127.0.0.1:${port}`, key: 'bench-cache-key-0123456789abcdef0123456789', operationTimeoutMs: 5000 },
      log: { level: 'silent' },
    },
  }),
);

const baseline = usedMemory();
for (let i = 0; i < CREDENTIALS; i += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, CREDENTIALS - i) }, async (_, j) => {
      const response = await fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-protocol-version': '2025-06-18',
          'x-cpz-key': `key-${i + j}`,
          'x-cpz-secret': 's',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`tools/list: HTTP ${response.status}`);
    }),
  );
}
// The stores write after answering: let the last writes land.
for (let i = 0; i < 100 && keyBytes('mcp-gateway:scopes*').keys < CREDENTIALS; i++) await new Promise((r) => setTimeout(r, 50));
const scopes = keyBytes('mcp-gateway:scopes*');
const catalog = keyBytes('mcp-gateway:catalog*');
const total = usedMemory() - baseline;
console.log(
  JSON.stringify(
    {
      redis: cli('INFO', 'server').match(/redis_version:(\S+)/)?.[1],
      credentials: CREDENTIALS,
      scopeEntries: scopes.keys,
      scopeBytesPer1000Credentials: Math.round((scopes.bytes / Math.max(scopes.keys, 1)) * 1000),
      tools: TOOLS,
      catalogKeys: catalog.keys,
      catalogBytesPer1000Tools: Math.round((catalog.bytes / TOOLS) * 1000),
      usedMemoryDeltaBytes: total,
    },
    null,
    2,
  ),
);
await gateway.close();
await endpoint.close();
await upstream.close();
redis.kill('SIGKILL');
