/**
 * A gateway finds out it is one of several replicas through `replicas.dnsName` (a headless Service):
 * without a shared store it warns once, after two checks in a row see another replica (one check could
 * be a rolling update); with Redis, or alone, it never warns. `mcp_gateway_replicas` counts them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { checkReplicas } from '../../gateway/ops/replica-check.ts';
import { LogCapture } from '../helpers/log-capture.ts';

afterEach(() => {
  vi.useRealTimers();
});

const OWN = new Set(['10.0.0.5', '127.0.0.1']);

async function run(addresses: string[][], cache: { redisUrl?: string } = {}) {
  vi.useFakeTimers();
  const config = loadConfig({ env: {}, overrides: { replicas: { dnsName: 'gw-peers.ns.svc', checkIntervalMs: 1000 }, cache } });
  const logs = new LogCapture();
  const metrics = createMetrics();
  let round = 0;
  const stop = checkReplicas(config, createLogger(config, logs), metrics, {
    resolve: async (name) => {
      expect(name).toBe('gw-peers.ns.svc');
      return addresses[Math.min(round++, addresses.length - 1)]!;
    },
    ownAddresses: () => OWN,
  });
  const counts: string[] = [];
  for (let i = 0; i < addresses.length; i++) {
    await vi.advanceTimersByTimeAsync(i === 0 ? 0 : 1000);
    counts.push((await metrics.registry.getSingleMetricAsString('mcp_gateway_replicas')).split('\n').at(-1)!);
  }
  stop();
  return { warnings: logs.records('one of several replicas'), counts };
}

describe('replica check (replicas.dnsName)', () => {
  it('warns once when two checks in a row find other replicas and no shared store', async () => {
    const { warnings, counts } = await run([
      ['10.0.0.5', '10.0.0.6'],
      ['10.0.0.5', '10.0.0.6', '10.0.0.7'],
      ['10.0.0.5', '10.0.0.6'],
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, replicas: 3, dnsName: 'gw-peers.ns.svc' });
    expect(counts).toEqual(['mcp_gateway_replicas 2', 'mcp_gateway_replicas 3', 'mcp_gateway_replicas 2']);
  });

  it('does not warn for a rolling update (another replica seen once), alone, or with Redis', async () => {
    expect((await run([['10.0.0.4'], ['10.0.0.5'], ['10.0.0.5']])).warnings).toEqual([]);
    expect((await run([['10.0.0.5'], ['10.0.0.5']])).counts).toEqual(['mcp_gateway_replicas 1', 'mcp_gateway_replicas 1']);
    expect(
      (
        await run(
          [
            ['10.0.0.5', '10.0.0.6'],
            ['10.0.0.5', '10.0.0.6'],
          ],
          { redisUrl: 'redis://redis:6379' },
        )
      ).warnings,
    ).toEqual([]);
  });
});
