import type { VectorStore } from '../../search/index.ts';
import type { KvStore } from './kv-store.ts';

/**
 * The search's `VectorStore` (tool vectors from an embeddings endpoint, keyed by content hash: model,
 * dimensions, text) over a `KvStore`: with Redis every replica and every restart reuses what one of them
 * embedded. Vectors travel as base64 of their float32 bytes (a JSON store would turn a Float32Array
 * into an object of numbers); anything else read back is a miss. The KvStore never throws or hangs.
 * @param ttlMs - how long an unused vector is kept
 */
export function kvVectorStore(kv: KvStore, ttlMs: number): VectorStore {
  return {
    async get(key) {
      const stored = await kv.get<string>(key);
      if (typeof stored !== 'string') return undefined;
      const bytes = Buffer.from(stored, 'base64');
      if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) return undefined;
      const vector = new Float32Array(bytes.byteLength / 4);
      new Uint8Array(vector.buffer).set(bytes);
      return vector;
    },
    set(key, vector) {
      return kv.set(key, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64'), ttlMs);
    },
  };
}
