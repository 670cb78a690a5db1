/**
 * Embedded tool vectors kept in the gateway's store (gateway/store/vector-store.ts): what is written is
 * read back bit for bit (as base64, which a JSON store keeps), and anything else under a key is a miss.
 */
import { describe, expect, it } from 'vitest';

import { createKvStore } from '../../gateway/store/kv-store.ts';
import { kvVectorStore } from '../../gateway/store/vector-store.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { loadConfig } from '../../config/load.ts';

describe('tool vectors in the store', () => {
  const config = loadConfig({ env: {} });
  const kv = createKvStore(
    { ...config.cache, store: 'memory' },
    { name: 'embeddings', ttlMs: 60_000, maxEntries: 10, metrics: createMetrics(), log: createLogger({ ...config, log: { ...config.log, level: 'silent' } }) },
  );
  const store = kvVectorStore(kv, 60_000);

  it('reads back what it wrote, and a miss for anything else', async () => {
    const vector = Float32Array.from([0.5, -1.25, 3e-8, 7]);
    await store.set('k', vector.subarray(1));
    expect(await store.get('k')).toEqual(Float32Array.from([-1.25, 3e-8, 7]));
    expect(await store.get('absent')).toBeUndefined();
    await kv.set('odd', 'abc', 60_000);
    expect(await store.get('odd')).toBeUndefined();
    await kv.set('object', { 0: 1 }, 60_000);
    expect(await store.get('object')).toBeUndefined();
  });
});
