import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../config/load.ts';
import { CatalogCache } from '../../gateway/catalog/catalog-cache.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { listClient } from '../helpers/list-client.ts';

/** Each credential's own (private) catalogue of `size` tools of about 1 KiB each. */
const privateUpstream = (config: ReturnType<typeof loadConfig>, size: number) =>
  listClient(config, (who) =>
    Array.from({ length: size }, (_, i): Tool => ({ name: `t${i}`, description: `${who} `.repeat(100), inputSchema: { type: 'object' } })),
  );

const gauge = async (metrics: ReturnType<typeof createMetrics>, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.reduce((n, v) => n + v.value, 0);

describe('the catalogue cache byte bound (cache.catalogBytes)', () => {
  const config = loadConfig({
    env: {},
    overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }], cache: { catalogBytes: 200_000, maxEntries: 10_000 } },
  });
  const log = createLogger({ ...config, log: { ...config.log, level: 'silent' } });

  it('keeps private catalogues within the bound, evicting the least recently used and counting each', async () => {
    const metrics = createMetrics();
    const upstream = privateUpstream(config, 20);
    const cache = new CatalogCache(upstream.client, config.cache, metrics, log);
    try {
      const catalogue = (n: number) => cache.catalog({ credential: { digest: `credential-${String(n).padStart(3, '0')}` } as never });
      for (let n = 0; n < 40; n++) expect((await catalogue(n)).tools).toHaveLength(20);
      const first = await catalogue(0);
      // Each catalogue is about 20 x 1.7 KB (the credential names its tools): 40 of them are far above 200,000 bytes.
      expect(first.bytes).toBeGreaterThan(30_000);
      expect(await gauge(metrics, 'mcp_catalog_cache_bytes')).toBeLessThanOrEqual(200_000);
      expect(await gauge(metrics, 'mcp_catalog_cache_evictions_total')).toBeGreaterThanOrEqual(30);
      // Credential 0's was evicted and fetched again; the latest ones are still cached.
      expect(upstream.fetches()).toBe(41);
      await catalogue(39);
      expect(upstream.fetches()).toBe(41);
    } finally {
      await cache.close();
    }
  });

  it('keeps a catalogue larger than the whole bound alone rather than fetching it for every request', async () => {
    const metrics = createMetrics();
    const upstream = privateUpstream(config, 600);
    const cache = new CatalogCache(upstream.client, config.cache, metrics, log);
    try {
      const who = { credential: { digest: 'big' } as never };
      expect((await cache.catalog(who)).bytes).toBeGreaterThan(200_000);
      await cache.catalog(who);
      await cache.catalog(who);
      expect(upstream.fetches()).toBe(1);
    } finally {
      await cache.close();
    }
  });
});
