/**
 * Principal component analysis for scripts/data/distil-word-vectors.ts: the word vectors projected on
 * their `k` principal axes (the covariance matrix's leading eigenvectors, by cyclic Jacobi rotations;
 * Golub and Van Loan, "Matrix Computations", 4th ed., §8.5), the mean taken out first. Deterministic: the
 * same vectors give the same projection, each axis signed so that its largest component is positive.
 */

import { symmetricEigen } from '../../search/semantic/lsa.ts';

/** Sweeps of Jacobi rotations at most; a 100 x 100 covariance converges in under ten. */
const MAX_SWEEPS = 50;

/**
 * `vectors` (all of one length d) centred and projected on their `k` leading principal axes (k <= d),
 * in order of explained variance. Throws when `k` is out of range or the vectors' lengths differ.
 */
export function principalAxes(vectors: readonly Float32Array[], k: number): Float32Array[] {
  const d = vectors[0]?.length ?? 0;
  if (!Number.isInteger(k) || k < 1 || k > d) throw new Error(`k must be an integer in [1, ${d}], got ${k}`);
  if (vectors.some((v) => v.length !== d)) throw new Error('vectors of different lengths');
  const n = vectors.length;
  const mean = new Float64Array(d);
  for (const v of vectors) for (let i = 0; i < d; i += 1) mean[i] += v[i] / n;
  const cov = new Float64Array(d * d);
  const x = new Float64Array(d);
  for (const v of vectors) {
    for (let i = 0; i < d; i += 1) x[i] = v[i] - mean[i];
    for (let i = 0; i < d; i += 1) for (let j = i; j < d; j += 1) cov[i * d + j] += x[i] * x[j];
  }
  for (let i = 0; i < d; i += 1) for (let j = 0; j < i; j += 1) cov[i * d + j] = cov[j * d + i];
  const { values, vectors: axes } = eigen(cov, d);
  const order = Array.from(values, (_, i) => i).sort((a, b) => values[b] - values[a] || a - b);
  const chosen = order.slice(0, k).map((c) => {
    const axis = Float64Array.from({ length: d }, (_, r) => axes[r * d + c]);
    let largest = 0;
    for (let r = 0; r < d; r += 1) if (Math.abs(axis[r]) > Math.abs(axis[largest])) largest = r;
    if (axis[largest] < 0) for (let r = 0; r < d; r += 1) axis[r] = -axis[r];
    return axis;
  });
  return vectors.map((v) => {
    for (let i = 0; i < d; i += 1) x[i] = v[i] - mean[i];
    return Float32Array.from(chosen, (axis) => {
      let s = 0;
      for (let i = 0; i < d; i += 1) s += axis[i] * x[i];
      return s;
    });
  });
}

/** Eigenvalues and eigenvectors (columns of `vectors`, row-major d x d) of the symmetric `matrix` (d x d,
 *  row-major; not changed): the LSA's Jacobi solver run to the end, with this script's own stop (an absolute
 *  off-diagonal floor, which the distilled file's bytes were made with). */
function eigen(matrix: Float64Array, d: number): { values: Float64Array; vectors: Float64Array } {
  const solve = symmetricEigen(matrix, d, { sweeps: MAX_SWEEPS, converged: (off) => off < 1e-22, skipBelow: 1e-300 });
  for (let step = solve.next(); ; step = solve.next()) if (step.done) return step.value;
}
