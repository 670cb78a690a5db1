/**
 * The semantic arm from an external embeddings endpoint: the OpenAI-compatible `POST {baseUrl}/embeddings`
 * (request `{ model, input: string[] }`, answer `{ data: [{ index, embedding: number[] }] }`), which
 * Ollama, vLLM, text-embeddings-inference and hosted services serve. Optional: the in-process LSA arm
 * (search/semantic.ts) is the default.
 *
 * Tool vectors are cached by a content hash of the embedded text and the model, across catalogue versions:
 * a new version embeds only the tools whose text changed. A failing endpoint (refused, timed out, an
 * answer of the wrong shape) never fails a search: the search is answered by the index alone (lexical
 * plus its in-process arm), `failures` counts it and `onFailure` is told (the caller logs it).
 */
import { createHash } from 'node:crypto';

import type { SearchHit, SearchOptions, SearchPage, ToolIndex } from './index.ts';
import type { DenseVectors } from './semantic.ts';
import type { SearchableTool } from './tool-fields.ts';

export type EmbeddingsEndpoint = {
  /** Base URL up to the API version, e.g. `http://127.0.0.1:11434/v1`; `/embeddings` is appended. */
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

/** Asks the endpoint for the vectors of `texts`, in order, each scaled to unit length. Throws on any failure. */
export async function embed(endpoint: EmbeddingsEndpoint, texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const batch = endpoint.batchSize ?? DEFAULT_BATCH;
  for (let i = 0; i < texts.length; i += batch) {
    const input = texts.slice(i, i + batch);
    const res = await fetch(`${endpoint.baseUrl.replace(/\/+$/, '')}/embeddings`, {
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
 * Searches of one index with the endpoint's vectors in place of the in-process arm. `prepare(tools)`
 * (the index's tools, in its order) embeds what the cache lacks; until it succeeds, and whenever the
 * endpoint fails, searches fall back to the index alone.
 */
export class EmbeddingSearch {
  /** Searches answered without the endpoint because it failed. */
  failures = 0;
  private readonly cache = new Map<string, Float32Array>();
  private tools: DenseVectors | undefined;

  constructor(
    private readonly endpoint: EmbeddingsEndpoint,
    private readonly onFailure: (failure: EmbeddingFailure) => void = () => undefined,
  ) {}

  /** Embeds `tools` (only those whose text is not cached) for `index`; false (and a failure) if the endpoint failed.
   *  The vectors become those `search` uses. */
  async prepare(tools: readonly SearchableTool[]): Promise<boolean> {
    this.tools = undefined;
    this.tools = await this.vectorsFor(tools);
    return this.tools !== undefined;
  }

  /**
   * The vectors of `tools` (in their order, for the index built from them), embedding only the texts the
   * cache lacks; undefined (and a failure counted and reported) if the endpoint failed. Holds nothing of
   * one index: a caller keeping several catalogue versions keeps each version's vectors itself.
   */
  async vectorsFor(tools: readonly SearchableTool[]): Promise<DenseVectors | undefined> {
    const texts = tools.map(embeddingText);
    const keys = texts.map((text) =>
      createHash('sha256')
        .update(this.endpoint.model)
        .update('\0')
        .update(String(this.endpoint.dimensions ?? ''))
        .update('\0')
        .update(text)
        .digest('base64url'),
    );
    const textOf = new Map(keys.map((k, i) => [k, texts[i]]));
    const missing = [...textOf.keys()].filter((k) => !this.cache.has(k));
    try {
      const vectors = await embed(
        this.endpoint,
        missing.map((k) => textOf.get(k)!),
      );
      missing.forEach((k, i) => this.cache.set(k, vectors[i]));
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

  /** Tool vectors embedded so far (for tests and metrics). */
  get cachedVectors(): number {
    return this.cache.size;
  }

  /** `index.search` with the endpoint's vectors; the index alone when they are not at hand or the endpoint fails. */
  async search(index: ToolIndex, query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    return (await this.searchPage(index, query, opts)).hits;
  }

  /**
   * `index.searchPage` with the query embedded by the endpoint and `tools` (default: those of the last
   * `prepare`) as the tool vectors; the index alone when there are none or the endpoint fails (counted
   * and reported, never thrown). Throws only what `index.searchPage` throws (`EmptyQueryError`).
   */
  async searchPage(index: ToolIndex, query: string, opts: SearchOptions = {}, tools: DenseVectors | undefined = this.tools): Promise<SearchPage> {
    if (tools === undefined || typeof query !== 'string' || query.trim() === '') return index.searchPage(query, opts);
    let vector: Float32Array;
    try {
      [vector] = await embed(this.endpoint, [query]);
      if (vector.length !== tools.dim) throw new Error("query vector of another length than the tools'");
    } catch (error) {
      this.fail('query', error);
      return index.searchPage(query, opts);
    }
    return index.searchPage(query, { ...opts, vectors: { tools, query: vector } });
  }

  private fail(stage: EmbeddingFailure['stage'], error: unknown): void {
    this.failures += 1;
    const reason = error instanceof Error ? (error.name === 'TimeoutError' ? 'timed out' : error.message) : String(error);
    this.onFailure({ stage, reason });
  }
}
