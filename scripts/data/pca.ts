/**
 * Principal component analysis for scripts/data/distil-word-vectors.ts: the word vectors projected on
 * their `k` principal axes (the covariance matrix's leading eigenvectors, by cyclic Jacobi rotations;
 * Golub and Van Loan, "Matrix Computations", 4th ed., §8.5), the mean taken out first. Deterministic: the
 * same vectors give the same projection, each axis signed so that its largest component is positive.
 */

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
  const { values, vectors: axes } = symmetricEigen(cov, d);
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

/** Eigenvalues and eigenvectors (columns of `vectors`, row-major d x d) of the symmetric `a` (d x d, row-major; not changed). */
function symmetricEigen(matrix: Float64Array, d: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(d * d);
  for (let i = 0; i < d; i += 1) v[i * d + i] = 1;
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep += 1) {
    let off = 0;
    for (let p = 0; p < d; p += 1) for (let q = p + 1; q < d; q += 1) off += a[p * d + q] ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < d; p += 1) {
      for (let q = p + 1; q < d; q += 1) {
        const apq = a[p * d + q];
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * d + q] - a[p * d + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let r = 0; r < d; r += 1) {
          const arp = a[r * d + p];
          const arq = a[r * d + q];
          a[r * d + p] = c * arp - s * arq;
          a[r * d + q] = s * arp + c * arq;
        }
        for (let r = 0; r < d; r += 1) {
          const apr = a[p * d + r];
          const aqr = a[q * d + r];
          a[p * d + r] = c * apr - s * aqr;
          a[q * d + r] = s * apr + c * aqr;
        }
        for (let r = 0; r < d; r += 1) {
          const vrp = v[r * d + p];
          const vrq = v[r * d + q];
          v[r * d + p] = c * vrp - s * vrq;
          v[r * d + q] = s * vrp + c * vrq;
        }
      }
    }
  }
  return { values: Float64Array.from({ length: d }, (_, i) => a[i * d + i]), vectors: v };
}
