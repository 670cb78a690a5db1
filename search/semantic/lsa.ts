/**
 * The semantic arm of the tool search: dense vectors for tools and queries, compared by cosine, fused with
 * the lexical ranking (search/index.ts: a convex combination of normalised scores, or reciprocal rank fusion).
 *
 * `DenseVectors` is the one interface: a vector per tool (row-major, unit length) plus a way to turn a
 * query into a vector of the same space. Two sources fill it:
 * - in process, by default, with nothing to download: latent semantic analysis (Deerwester et al., 1990)
 *   of the catalogue's own weighted term matrix, the index's BM25+ postings (`buildLsa`). Tools whose
 *   words co-occur land close together, so a query word found only in a sibling's text still pulls the
 *   tool ("candles" near "bars", "OHLCV" near "history"). The term basis is a randomized SVD (Halko,
 *   Martinsson and Tropp, 2011: a randomized range finder, one power iteration) of at most `sample`
 *   tools' rows, every tool then folded in (its row times the basis): cost grows with the postings, not
 *   the square of the catalogue. Which fields make the rows is the caller's choice (search/tuning.ts
 *   `semanticFields`: by default a description's first paragraph, not its usage notes).
 * - an OpenAI-compatible `/v1/embeddings` endpoint (search/semantic/embeddings.ts), asked asynchronously.
 */
import { dotKernel } from './dots.ts';
import { seededWords } from './seeded-random.ts';

/** Tools' vectors (`dim` numbers each, tool after tool, unit length or all zero) in one space. */
export type DenseVectors = { dim: number; vectors: Float32Array };

/** The in-process arm: tools' vectors, and queries folded into the same space from their terms. */
export type LsaModel = DenseVectors & {
  /** The vector of a query of (already normalised) `terms`; `undefined` when none is indexed. */
  queryVector(terms: readonly string[]): Float32Array | undefined;
};

export type LsaOptions = {
  /** Dimensions kept. */
  dims: number;
  /** Most tools whose rows the SVD reads (evenly spaced through the catalogue); the rest are folded in. */
  sample: number;
  /** Query terms weigh their idf along their unit direction in the kept space (else their projection). */
  unitTerms?: boolean;
  seed?: number;
  /** Power iterations of the range finder (default 1): each one sharpens the kept directions against the
   *  rest, so that another seed finds the same space. */
  powerIterations?: number;
  /** Columns of the random test matrix beyond `dims` (default 8). */
  oversample?: number;
};

/** Term postings as the LSA reads them: `forEachTerm` gives each term's postings per field (the index's
 *  `TermEntry` layout), `ids`/`scores` the packed postings. */
export type PostingSource = {
  size: number;
  ids: Int32Array;
  scores: Float64Array;
  forEachTerm(fn: (term: string, entry: Int32Array) => void): void;
};

const OVERSAMPLE = 8;

/** Rows (tools, terms or sampled tools) a loop of the build reads between two chances to yield. */
const STEP_ROWS = 256;

/**
 * LSA vectors of the index's tools. `fieldWeights[f]` weighs field `f`'s BM25+ (0 leaves it out); a
 * tool's weight for a term is the weighted sum over fields, each tool's row scaled to unit length.
 */
export function buildLsa(index: PostingSource, fieldWeights: readonly number[], opts: LsaOptions): LsaModel {
  const steps = lsaSteps(index, fieldWeights, opts);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * `buildLsa` as steps: the generator yields every `STEP_ROWS` rows of each loop, so an async build can
 * let other callbacks run between slices (search/index.ts `BUILD_SLICE_MS`); its return value is the model.
 */
export function* lsaSteps(index: PostingSource, fieldWeights: readonly number[], opts: LsaOptions): Generator<void, LsaModel, void> {
  const n = index.size;
  const F = fieldWeights.length;
  // Terms held by one tool say nothing about co-occurrence: they stay out of the matrix, and a query
  // using one is pointed at its tool's vector instead. The others are the matrix's columns.
  const column = new Map<string, number>();
  const onlyTool = new Map<string, number>();
  const dfs: number[] = [];
  const perDoc = new Int32Array(n + 1);
  // The column a row's last entry is of: a term met in several fields of a tool is one entry of its row
  // (their weighted sum), not one per field.
  const lastColumn = new Int32Array(n).fill(-1);
  // The terms in one array first, so that the passes over them can yield (forEachTerm cannot).
  const terms: string[] = [];
  const entries: Int32Array[] = [];
  index.forEachTerm((term, entry) => {
    terms.push(term);
    entries.push(entry);
  });
  for (let x = 0; x < terms.length; x += 1) {
    if (x % STEP_ROWS === STEP_ROWS - 1) yield;
    const term = terms[x];
    const entry = entries[x];
    let holders = 0;
    let first = -1;
    for (let f = 0; f < F; f += 1) {
      if (fieldWeights[f] === 0) continue;
      const from = entry[2 * f];
      const to = entry[2 * f + 1];
      if (to > from && first < 0) first = index.ids[from];
      for (let j = from; j < to && holders < 2; j += 1) if (index.ids[j] !== first) holders = 2;
      if (to > from && holders === 0) holders = 1;
    }
    if (holders === 0) continue;
    if (holders === 1) {
      onlyTool.set(term, first);
      continue;
    }
    let df = 0;
    const c = dfs.length;
    for (let f = 0; f < F; f += 1) {
      if (fieldWeights[f] === 0) continue;
      for (let j = entry[2 * f]; j < entry[2 * f + 1]; j += 1) {
        const id = index.ids[j];
        if (lastColumn[id] === c) continue;
        lastColumn[id] = c;
        perDoc[id + 1] += 1;
        df += 1;
      }
    }
    column.set(term, c);
    dfs.push(df);
  }
  for (let i = 0; i < n; i += 1) perDoc[i + 1] += perDoc[i];
  const nnz = perDoc[n];
  const cols = new Int32Array(nnz);
  const vals = new Float32Array(nnz);
  const fill = perDoc.slice(0, n);
  lastColumn.fill(-1);
  for (let x = 0; x < terms.length; x += 1) {
    if (x % STEP_ROWS === STEP_ROWS - 1) yield;
    const entry = entries[x];
    const t = column.get(terms[x]);
    if (t === undefined) continue;
    for (let f = 0; f < F; f += 1) {
      const w = fieldWeights[f];
      if (w === 0) continue;
      for (let j = entry[2 * f]; j < entry[2 * f + 1]; j += 1) {
        const id = index.ids[j];
        if (lastColumn[id] === t) vals[fill[id] - 1] += w * index.scores[j];
        else {
          lastColumn[id] = t;
          const at = fill[id]++;
          cols[at] = t;
          vals[at] = w * index.scores[j];
        }
      }
    }
  }
  const V = dfs.length;
  // Unit rows.
  for (let i = 0; i < n; i += 1) {
    if (i % STEP_ROWS === STEP_ROWS - 1) yield;
    let s = 0;
    for (let j = perDoc[i]; j < perDoc[i + 1]; j += 1) s += vals[j] * vals[j];
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = perDoc[i]; j < perDoc[i + 1]; j += 1) vals[j] *= inv;
  }
  const k = Math.max(1, Math.min(opts.dims, V, n));
  const basis = V > 0 ? yield* termBasis({ rows: perDoc, cols, vals }, n, V, k, opts) : new Float32Array(0);
  const vectors = new Float32Array(n * k);
  // Each row summed in doubles, then stored once: a Float32Array read and written per term costs two
  // conversions per multiply-add (the fold-in is most of the arm's build).
  const sum = new Float64Array(k);
  for (let i = 0; i < n; i += 1) {
    if (i % STEP_ROWS === STEP_ROWS - 1) yield;
    sum.fill(0);
    for (let j = perDoc[i]; j < perDoc[i + 1]; j += 1) {
      const a = vals[j];
      const row = cols[j] * k;
      for (let d = 0; d < k; d += 1) sum[d] += a * basis[row + d];
    }
    const out = i * k;
    for (let d = 0; d < k; d += 1) vectors[out + d] = sum[d];
    normalise(vectors, out, k);
  }
  // A query term's share of the query's vector: its rarity, along its direction in the kept space (with
  // `unitTerms`) or its projection as it is (then terms the main directions hold well, the words of the
  // largest servers, outweigh the rest: "estimated travel time" drowns "bike route").
  const termWeight = Float32Array.from(dfs, (m, r) => {
    const idf = Math.log(1 + (n - m + 0.5) / (m + 0.5));
    if (!opts.unitTerms) return idf;
    let s = 0;
    for (let d = 0; d < k; d += 1) s += basis[r * k + d] * basis[r * k + d];
    return s > 0 ? idf / Math.sqrt(s) : 0;
  });
  const rareIdf = Math.log(1 + (n - 1 + 0.5) / 1.5);
  return {
    dim: k,
    vectors,
    queryVector(terms) {
      const q = new Float32Array(k);
      let any = false;
      for (const term of terms) {
        const r = column.get(term);
        if (r !== undefined) {
          any = true;
          const w = termWeight[r];
          for (let d = 0; d < k; d += 1) q[d] += w * basis[r * k + d];
          continue;
        }
        const tool = onlyTool.get(term);
        if (tool === undefined) continue;
        any = true;
        for (let d = 0; d < k; d += 1) q[d] += rareIdf * vectors[tool * k + d];
      }
      if (!any) return undefined;
      normalise(q, 0, k);
      return q;
    },
  };
}

type Csr = { rows: Int32Array; cols: Int32Array; vals: Float32Array };

/**
 * The top `k` right singular vectors of the sampled rows A_s (m x V), as a V x k row-major matrix (term
 * t's row at t * k). Randomized range finder in tool space (Y = A_s Omega, one power iteration, each step
 * orthonormalised: m x l matrices, m <= `sample`), then with B = Q^T A_s, the eigenvectors W of B B^T
 * (l x l) and V_k = B^T W_k Lambda_k^-1/2, both computed through the sample (sparse products and m x l
 * matrices), never through a dense V x l one.
 */
function* termBasis(a: Csr, n: number, V: number, k: number, opts: LsaOptions): Generator<void, Float32Array, void> {
  const sampleStep = Math.max(1, n / Math.max(1, opts.sample));
  const sample: number[] = [];
  for (let x = 0; Math.floor(x) < n; x += sampleStep) sample.push(Math.floor(x));
  const m = sample.length;
  const l = Math.min(k + (opts.oversample ?? OVERSAMPLE), V, m);
  // A Rademacher test matrix (entries +1 or -1, 32 from each random word): its range finder works as a
  // Gaussian one does (Martinsson and Tropp, 2020, "Randomized numerical linear algebra", section 8.3)
  // at a fraction of the cost of the normal draws.
  const random = seededWords(opts.seed ?? 16);
  const omega = new Float64Array(V * l);
  let word = 0;
  for (let c = 0; c < V * l; c += 1) {
    if ((c & 31) === 0) word = random();
    omega[c] = (word >>> (c & 31)) & 1 ? 1 : -1;
  }
  let y = yield* timesRows(a, sample, omega, l);
  yield* orthonormalColumns(y, m, l);
  for (let q = 0; q < (opts.powerIterations ?? 1); q += 1) {
    y = yield* timesRows(a, sample, yield* transposeTimes(a, sample, y, V, l), l);
    yield* orthonormalColumns(y, m, l);
  }
  // B B^T = Q^T A_s A_s^T Q, from the sample's side: Z = A_s (A_s^T Q) is m x l (two sparse products),
  // then Q^T Z; B^T itself (V x l, dense) is never formed.
  const z = yield* timesRows(a, sample, yield* transposeTimes(a, sample, y, V, l), l);
  const g = new Float64Array(l * l);
  for (let r = 0; r < m; r += 1) {
    if (r % STEP_ROWS === STEP_ROWS - 1) yield;
    const o = r * l;
    for (let p = 0; p < l; p += 1) {
      const qp = y[o + p];
      if (qp === 0) continue;
      for (let q = p; q < l; q += 1) g[p * l + q] += qp * z[o + q];
    }
  }
  for (let p = 0; p < l; p += 1) for (let q = 0; q < p; q += 1) g[p * l + q] = g[q * l + p];
  const { vectors: w, values, order } = yield* symmetricEigen(g, l);
  // M = W_k Lambda_k^-1/2 (l x k), and basis = B^T M = A_s^T (Q M): Q M is m x k, then one sparse product.
  const wk = new Float64Array(l * k);
  for (let d = 0; d < k; d += 1) {
    const lambda = values[order[d]];
    const scale = lambda > 1e-12 ? 1 / Math.sqrt(lambda) : 0;
    for (let c = 0; c < l; c += 1) wk[c * k + d] = w[c * l + order[d]] * scale;
  }
  const qm = new Float64Array(m * k);
  for (let r = 0; r < m; r += 1) {
    if (r % STEP_ROWS === STEP_ROWS - 1) yield;
    for (let c = 0; c < l; c += 1) {
      const qc = y[r * l + c];
      if (qc === 0) continue;
      for (let d = 0; d < k; d += 1) qm[r * k + d] += qc * wk[c * k + d];
    }
  }
  const basis = Float32Array.from(yield* transposeTimes(a, sample, qm, V, k));
  return basis;
}

/** (A_s Y): m x l, for Y V x l. */
function* timesRows(a: Csr, sample: number[], y: Float64Array, l: number): Generator<void, Float64Array, void> {
  const out = new Float64Array(sample.length * l);
  for (let s = 0; s < sample.length; s += 1) {
    if (s % STEP_ROWS === STEP_ROWS - 1) yield;
    const i = sample[s];
    const o = s * l;
    for (let j = a.rows[i]; j < a.rows[i + 1]; j += 1) {
      const v = a.vals[j];
      const row = a.cols[j] * l;
      for (let c = 0; c < l; c += 1) out[o + c] += v * y[row + c];
    }
  }
  return out;
}

/** (A_s^T Z): V x l, for Z m x l. */
function* transposeTimes(a: Csr, sample: number[], z: Float64Array, V: number, l: number): Generator<void, Float64Array, void> {
  const out = new Float64Array(V * l);
  for (let s = 0; s < sample.length; s += 1) {
    if (s % STEP_ROWS === STEP_ROWS - 1) yield;
    const i = sample[s];
    const o = s * l;
    for (let j = a.rows[i]; j < a.rows[i + 1]; j += 1) {
      const v = a.vals[j];
      const row = a.cols[j] * l;
      for (let c = 0; c < l; c += 1) out[row + c] += v * z[o + c];
    }
  }
  return out;
}

/**
 * Orthonormalises the `l` columns of a row-major `rows` x `l` matrix in place by Cholesky QR (Gram matrix,
 * its Cholesky factor R, then X R^-1): row-contiguous passes, which matter more here than the last digits
 * of orthogonality. A ridge of 1e-10 x the trace keeps the factor defined when columns are dependent.
 */
function* orthonormalColumns(x: Float64Array, rows: number, l: number): Generator<void, void, void> {
  const g = new Float64Array(l * l);
  for (let r = 0; r < rows; r += 1) {
    if (r % STEP_ROWS === STEP_ROWS - 1) yield;
    const o = r * l;
    for (let p = 0; p < l; p += 1) {
      const xp = x[o + p];
      if (xp === 0) continue;
      for (let q = p; q < l; q += 1) g[p * l + q] += xp * x[o + q];
    }
  }
  let trace = 0;
  for (let p = 0; p < l; p += 1) trace += g[p * l + p];
  const ridge = 1e-10 * (trace || 1);
  // Upper-triangular R with R^T R = G.
  const rr = new Float64Array(l * l);
  for (let p = 0; p < l; p += 1) {
    let d = g[p * l + p] + ridge;
    for (let k = 0; k < p; k += 1) d -= rr[k * l + p] * rr[k * l + p];
    const diag = Math.sqrt(Math.max(d, ridge));
    rr[p * l + p] = diag;
    for (let q = p + 1; q < l; q += 1) {
      let v = g[p * l + q];
      for (let k = 0; k < p; k += 1) v -= rr[k * l + p] * rr[k * l + q];
      rr[p * l + q] = v / diag;
    }
  }
  // Each row x_r <- x_r R^-1 (forward substitution on R^T).
  for (let r = 0; r < rows; r += 1) {
    if (r % STEP_ROWS === STEP_ROWS - 1) yield;
    const o = r * l;
    for (let q = 0; q < l; q += 1) {
      let v = x[o + q];
      for (let k = 0; k < q; k += 1) v -= x[o + k] * rr[k * l + q];
      x[o + q] = v / rr[q * l + q];
    }
  }
}

/** When a Jacobi solve stops: at most `sweeps` sweeps, or once the squared off-diagonal mass `off` is
 *  `converged(off, total)` (total: the matrix's squared mass); rotations of entries under `skipBelow` are skipped. */
export interface JacobiStop {
  sweeps: number;
  converged(off: number, total: number): boolean;
  skipBelow: number;
}

/** The LSA's stop: converged relative to the matrix (what is left off the diagonal no longer moves the directions). */
const LSA_STOP: JacobiStop = { sweeps: 30, converged: (off, total) => off <= 1e-12 * total, skipBelow: 1e-30 };

/** Eigenvectors (columns of `vectors`, row-major l x l) of a symmetric matrix by cyclic Jacobi rotations
 *  (Golub and Van Loan, "Matrix Computations", 4th ed., §8.5), and the column order by eigenvalue, largest
 *  first; yields every eight rows so an async build can give the loop back. `input` is not changed. */
export function* symmetricEigen(
  input: Float64Array,
  l: number,
  stop: JacobiStop = LSA_STOP,
): Generator<void, { vectors: Float64Array; values: Float64Array; order: number[] }, void> {
  const a = input.slice();
  const v = new Float64Array(l * l);
  for (let i = 0; i < l; i += 1) v[i * l + i] = 1;
  let total = 0;
  for (let i = 0; i < l * l; i += 1) total += a[i] * a[i];
  for (let sweep = 0; sweep < stop.sweeps; sweep += 1) {
    let off = 0;
    for (let p = 0; p < l; p += 1) for (let q = p + 1; q < l; q += 1) off += a[p * l + q] * a[p * l + q];
    if (stop.converged(off, total)) break;
    for (let p = 0; p < l; p += 1) {
      if (p % 8 === 7) yield;
      for (let q = p + 1; q < l; q += 1) {
        const apq = a[p * l + q];
        if (Math.abs(apq) < stop.skipBelow) continue;
        const theta = (a[q * l + q] - a[p * l + p]) / (2 * apq);
        const tan = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const cos = 1 / Math.sqrt(tan * tan + 1);
        const sin = tan * cos;
        for (let r = 0; r < l; r += 1) {
          const arp = a[r * l + p];
          const arq = a[r * l + q];
          a[r * l + p] = cos * arp - sin * arq;
          a[r * l + q] = sin * arp + cos * arq;
        }
        for (let r = 0; r < l; r += 1) {
          const apr = a[p * l + r];
          const aqr = a[q * l + r];
          a[p * l + r] = cos * apr - sin * aqr;
          a[q * l + r] = sin * apr + cos * aqr;
        }
        for (let r = 0; r < l; r += 1) {
          const vrp = v[r * l + p];
          const vrq = v[r * l + q];
          v[r * l + p] = cos * vrp - sin * vrq;
          v[r * l + q] = sin * vrp + cos * vrq;
        }
      }
    }
  }
  const order = Array.from({ length: l }, (_, i) => i).sort((x, y) => a[y * l + y] - a[x * l + x]);
  return { vectors: v, values: Float64Array.from({ length: l }, (_, i) => a[i * l + i]), order };
}

function normalise(x: Float32Array, from: number, k: number): void {
  let s = 0;
  for (let d = 0; d < k; d += 1) s += x[from + d] * x[from + d];
  if (s === 0) return;
  const inv = 1 / Math.sqrt(s);
  for (let d = 0; d < k; d += 1) x[from + d] *= inv;
}

/**
 * The `depth` visible tools nearest to `query` by cosine (vectors are unit length), best first, as ids
 * and similarities; tools with similarity <= `minSimilarity` are left out.
 */
export function nearestVectors(
  v: DenseVectors,
  query: Float32Array,
  visible: Uint8Array,
  depth: number,
  minSimilarity = 0,
): { ids: number[]; scores: number[] } {
  const { dim, vectors } = v;
  const n = vectors.length / dim;
  // One tight pass of dot products (WebAssembly SIMD where it runs: dots.ts, the same values), then a
  // selection over the similarities alone.
  const kernel = dotKernel(vectors, dim);
  const sims = kernel ? kernel.dots(query, visible) : dotsInJs(v, query, visible);
  return topSimilarities(sims, n, depth, minSimilarity);
}

/** {@link nearestVectors}'s dot products in JavaScript: what dots.wat computes, and where it cannot run. */
export function dotsInJs(v: DenseVectors, query: Float32Array, visible: Uint8Array): Float32Array {
  const { dim, vectors } = v;
  const n = vectors.length / dim;
  const sims = scratch(n);
  for (let i = 0, o = 0; i < n; i += 1, o += dim) {
    if (visible[i] !== 1) {
      sims[i] = 0;
      continue;
    }
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let d = 0;
    // Eight components a turn into the same four sums, in the same order as four a turn (the sums, and
    // so the ranking, are the same to the bit): 0.85x of the time per search at 64 axes.
    for (; d + 7 < dim; d += 8) {
      s0 += vectors[o + d] * query[d];
      s1 += vectors[o + d + 1] * query[d + 1];
      s2 += vectors[o + d + 2] * query[d + 2];
      s3 += vectors[o + d + 3] * query[d + 3];
      s0 += vectors[o + d + 4] * query[d + 4];
      s1 += vectors[o + d + 5] * query[d + 5];
      s2 += vectors[o + d + 6] * query[d + 6];
      s3 += vectors[o + d + 7] * query[d + 7];
    }
    for (; d + 3 < dim; d += 4) {
      s0 += vectors[o + d] * query[d];
      s1 += vectors[o + d + 1] * query[d + 1];
      s2 += vectors[o + d + 2] * query[d + 2];
      s3 += vectors[o + d + 3] * query[d + 3];
    }
    for (; d < dim; d += 1) s0 += vectors[o + d] * query[d];
    sims[i] = s0 + s1 + s2 + s3;
  }
  return sims;
}

/** The `depth` best of the first `n` similarities above `minSimilarity`, best first (ties: the lower id first). */
function topSimilarities(sims: Float32Array, n: number, depth: number, minSimilarity: number): { ids: number[]; scores: number[] } {
  const ids: number[] = [];
  const scores: number[] = [];
  if (depth <= 0) return { ids, scores };
  let floor = minSimilarity;
  for (let i = 0; i < n; i += 1) {
    const s = sims[i];
    if (s <= floor) continue;
    let at = ids.length;
    while (at > 0 && scores[at - 1] < s) at -= 1;
    // Inserted at `at` (after its equals), the last dropped past `depth`: shifted in place, as a splice
    // would leave them, without the array each splice returns.
    let j = ids.length < depth ? ids.length : depth - 1;
    if (ids.length < depth) {
      ids.push(i);
      scores.push(s);
    }
    for (; j > at; j -= 1) {
      ids[j] = ids[j - 1];
      scores[j] = scores[j - 1];
    }
    ids[at] = i;
    scores[at] = s;
    if (ids.length === depth) floor = scores[depth - 1];
  }
  return { ids, scores };
}

let sharedSims = new Float32Array(0);
/** A similarity buffer of at least `n` (searches run one at a time). */
function scratch(n: number): Float32Array {
  if (sharedSims.length < n) sharedSims = new Float32Array(n);
  return sharedSims;
}
