/**
 * Mulberry32, a small seeded generator: the same sequence for the same seed on every run and machine,
 * for what must repeat (the LSA's test matrix, cross-validation folds, benchmark subsets, fuzz cases).
 * Not for anything secret.
 */
export function seededWords(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** {@link seededWords} as numbers in [0, 1). */
export function seeded(seed: number): () => number {
  const words = seededWords(seed);
  return () => words() / 4294967296;
}
