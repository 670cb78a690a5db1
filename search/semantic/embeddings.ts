/**
 * The semantic arm from an external embeddings endpoint: the OpenAI-compatible `POST {baseUrl}/embeddings`
 * (request `{ model, input: string[] }`, answer `{ data: [{ index, embedding: number[] }] }`), which
 * Ollama, vLLM, text-embeddings-inference and hosted services serve. Optional: the in-process LSA arm
 * (search/semantic/lsa.ts) is the default, and needs no network.
 *
 * Tool vectors are cached by a content hash of the model, its dimensions and the embedded text: in this
 * process, and in a `VectorStore` when one is given (the gateway's store: Redis when configured), so a
 * restart or another replica does not embed a tool again, and a new catalogue version embeds only the
 * tools whose text changed. A failing endpoint (refused, timed out, an answer of the wrong shape) never
 * fails a search: the caller searches without the vectors, `failures` counts it and `onFailure` is told
 * (the caller logs it). A failing store is only a cache miss.
 */
import { createHash } from 'node:crypto';

import type { SearchableTool } from '../analysis/tool-fields.ts';
import type { DenseVectors } from './lsa.ts';

export type EmbeddingsEndpoint = {
  /** Base URL up to the API version, e.g. `http://127.0.0.1:11434/v1`; `/embeddings` is appended to its path (a query is kept). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer`; never logged. */
  apiKey?: string;
  /** Budget of one request, ms (default 2000). */
  timeoutMs?: number;
  /** Texts per request (default 64). */
  batchSize?: number;
  /** Sent as `dimensions` (models that can shorten their vectors, e.g. OpenAI's text-embedding-3); absent: the model's own. */
  dimensions?: number;
};

/** Why the endpoint failed, for the log line (never the key or the texts). */
export type EmbeddingFailure = { stage: 'tools' | 'query'; reason: string };

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_BATCH = 64;
/** Tool vectors kept across catalogue versions. */
const CACHE_LIMIT = 50_000;

/** The text embedded for a tool: what a person reads to choose it. */
export function embeddingText(tool: SearchableTool): string {
  return [tool.upstreamName ?? tool.name, tool.title, tool.description, ...(tool.keywords ?? [])].filter((x) => typeof x === 'string' && x !== '').join('\n');
}

/** `{baseUrl}/embeddings`, the path appended before any query (Azure OpenAI's `?api-version=...`), which is kept. */
export function embeddingsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/embeddings`;
  return url;
}

/** Asks the endpoint for the vectors of `texts`, in order, each scaled to unit length. Throws on any failure. */
export async function embed(endpoint: EmbeddingsEndpoint, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const batch = endpoint.batchSize ?? DEFAULT_BATCH;
  for (let i = 0; i < texts.length; i += batch) {
    const input = texts.slice(i, i + batch);
    const res = await fetch(embeddingsUrl(endpoint.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) },
      body: JSON.stringify({ model: endpoint.model, input, ...(endpoint.dimensions !== undefined ? { dimensions: endpoint.dimensions } : {}) }),
      signal: AbortSignal.timeout(endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`embeddings endpoint answered HTTP ${res.status}`);
    const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
    if (!Array.isArray(body.data) || body.data.length !== input.length) throw new Error("embeddings answer has no data array of the inputs' length");
    const vectors = new Array<Float32Array>(input.length);
    body.data.forEach((item, j) => {
      const at = typeof item.index === 'number' ? item.index : j;
      if (!Array.isArray(item.embedding) || item.embedding.some((x) => typeof x !== 'number') || at < 0 || at >= input.length) {
        throw new Error('embeddings answer has an item without a numeric embedding');
      }
      vectors[at] = unit(Float32Array.from(item.embedding as number[]));
    });
    if (vectors.some((v) => v === undefined) || new Set(vectors.map((v) => v.length)).size !== 1)
      throw new Error('embeddings answer has missing or unequal vectors');
    out.push(...vectors);
  }
  return out;
}

function unit(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i += 1) s += v[i] * v[i];
  if (s > 0) for (let i = 0; i < v.length; i += 1) v[i] /= Math.sqrt(s);
  return v;
}

/**
 * Where tool vectors outlive the process, keyed by content hash (`vectorKey`): a shared store lets every
 * replica and every restart reuse what one of them embedded. Both methods may fail (rejected promise):
 * that is a cache miss, never a search error.
 */
export type VectorStore = {
  get(key: string): Promise<Float32Array | undefined>;
  set(key: string, vector: Float32Array): Promise<void>;
};

/**
 * The external arm: the vectors of a catalogue's tools (`vectorsFor`, cached by content hash) and of a
 * query (`queryVector`). Knows nothing of the index: the caller passes both to `ToolIndex.searchPage`
 * as `vectors`.
 */
export class EmbeddingSearch {
  /** Requests answered without the endpoint because it failed. */
  failures = 0;
  private readonly cache = new Map<string, Float32Array>();

  /**
   * @param onFailure - told of each failure (the reason only: never the key or the texts)
   * @param store - a shared cache of tool vectors by content hash, beside this process's own
   */
  constructor(
    private readonly endpoint: EmbeddingsEndpoint,
    private readonly onFailure: (failure: EmbeddingFailure) => void = () => undefined,
    private readonly store?: VectorStore,
  ) {}

  /** The content hash a tool vector is cached under: model, dimensions and text. */
  vectorKey(text: string): string {
    return createHash('sha256')
      .update(this.endpoint.model)
      .update('\0')
      .update(String(this.endpoint.dimensions ?? ''))
      .update('\0')
      .update(text)
      .digest('base64url');
  }

  /**
   * The vectors of `tools` (in their order, for the index built from them), embedding only the texts
   * neither cache holds; undefined (and a failure counted and reported) if the endpoint failed. Holds
   * nothing of one index: a caller keeping several catalogue versions keeps each version's vectors itself.
   */
  async vectorsFor(tools: readonly SearchableTool[]): Promise<DenseVectors | undefined> {
    const texts = tools.map(embeddingText);
    const keys = texts.map((text) => this.vectorKey(text));
    const textOf = new Map(keys.map((k, i) => [k, texts[i]]));
    let missing = [...textOf.keys()].filter((k) => !this.cache.has(k));
    if (this.store && missing.length > 0) {
      const stored = await Promise.all(missing.map((k) => this.store!.get(k).catch(() => undefined)));
      missing.forEach((k, i) => {
        const v = stored[i];
        if (v instanceof Float32Array && v.length > 0) this.cache.set(k, v);
      });
      missing = missing.filter((k) => !this.cache.has(k));
    }
    try {
      const vectors = await embed(
        this.endpoint,
        missing.map((k) => textOf.get(k)!),
      );
      missing.forEach((k, i) => this.cache.set(k, vectors[i]));
      if (this.store) await Promise.all(missing.map((k, i) => this.store!.set(k, vectors[i]).catch(() => undefined)));
    } catch (error) {
      this.fail('tools', error);
      return undefined;
    }
    const dim = this.cache.get(keys[0] ?? '')?.length ?? 0;
    const data = new Float32Array(tools.length * dim);
    for (let i = 0; i < keys.length; i += 1) {
      const v = this.cache.get(keys[i])!;
      if (v.length !== dim) {
        this.fail('tools', new Error('vectors of unequal length (model changed?)'));
        return undefined;
      }
      data.set(v, i * dim);
    }
    while (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
    return { dim, vectors: data };
  }

  /** Tool vectors held in this process (for tests and metrics). */
  get cachedVectors(): number {
    return this.cache.size;
  }

  /**
   * The vector of `query` for searching `tools` (vectors of `vectorsFor`), or undefined when the endpoint
   * failed or answered a vector of another length (counted and reported, never thrown).
   */
  async queryVector(query: string, tools: DenseVectors): Promise<Float32Array | undefined> {
    try {
      const [vector] = await embed(this.endpoint, [query]);
      if (vector.length !== tools.dim) throw new Error("query vector of another length than the tools'");
      return vector;
    } catch (error) {
      this.fail('query', error);
      return undefined;
    }
  }

  private fail(stage: EmbeddingFailure['stage'], error: unknown): void {
    this.failures += 1;
    const said = error instanceof Error ? (error.name === 'TimeoutError' ? 'timed out' : error.message) : String(error);
    // Never the key: undici's header validation quotes the whole Authorization value it refuses (review).
    const key = this.endpoint.apiKey;
    const reason = key ? said.split(key).join('[redacted]') : said;
    this.onFailure({ stage, reason });
  }
}
