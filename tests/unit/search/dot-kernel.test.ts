/**
 * The semantic scan's WebAssembly kernel (search/semantic/dots.ts): the module is what dots.wat compiles
 * to, it runs here (Node 20 has 128-bit SIMD), and every similarity it gives is the JavaScript loop's to
 * the bit, visible or not, so a ranking cannot change with it; dimensions it cannot take fall back.
 */
import { describe, expect, it } from 'vitest';
import { compileDots } from '../../../scripts/dots-wasm.ts';
import { DOTS_WASM_BASE64 } from '../../../search/semantic/dots-wasm.ts';
import { dotKernel } from '../../../search/semantic/dots.ts';
import { dotsInJs, nearestVectors } from '../../../search/semantic/lsa.ts';
import { seededWords } from '../../../search/semantic/seeded-random.ts';

/** `count` floats in [-1, 1) from a fixed seed, with a few extremes (tiny, large, negative zero). */
function floats(count: number, seed: number): Float32Array {
  const next = seededWords(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = next() / 2 ** 31 - 1;
  out[0] = 1e-30;
  out[1] = -0;
  if (count > 2) out[2] = 3.4e38 / 2 ** 70;
  return out;
}

describe('dot kernel', () => {
  it('is the module dots.wat compiles to (npm run build:wasm)', async () => {
    expect(await compileDots()).toBe(DOTS_WASM_BASE64);
  });

  it('gives every similarity of the JavaScript loop, bit for bit, and 0 for rows not visible', () => {
    for (const [n, dim] of [
      [1, 4],
      [257, 64],
      [1000, 12],
    ] as const) {
      const v = { dim, vectors: floats(n * dim, n + dim) };
      const query = floats(dim, 7 * dim);
      const visible = new Uint8Array(n).fill(1);
      for (let i = 0; i < n; i += 5) visible[i] = 0;
      const kernel = dotKernel(v.vectors, dim);
      expect(kernel, `a kernel for ${n} x ${dim}`).toBeDefined();
      const fromKernel = Array.from(kernel!.dots(query, visible));
      const fromJs = Array.from(dotsInJs(v, query, visible).subarray(0, n));
      expect(fromKernel.length).toBe(n);
      for (let i = 0; i < n; i++)
        expect(Object.is(fromKernel[i], fromJs[i]) || fromKernel[i] === fromJs[i], `row ${i}: ${fromKernel[i]} vs ${fromJs[i]}`).toBe(true);
      expect(fromKernel.filter((s, i) => visible[i] === 0 && s !== 0)).toEqual([]);
      expect(new Set(fromKernel).size, 'distinct similarities').toBeGreaterThan(n / 2);
    }
  });

  it('ranks as the JavaScript loop does, and leaves dimensions that are not a multiple of 4 to it', () => {
    const dim = 64;
    const v = { dim, vectors: floats(500 * dim, 3) };
    const query = floats(dim, 5);
    const visible = new Uint8Array(500).fill(1);
    const ranked = nearestVectors(v, query, visible, 20, -1);
    const js = dotsInJs(v, query, visible);
    const expected = [...Array(500).keys()].sort((a, b) => js[b]! - js[a]! || a - b).slice(0, 20);
    expect(ranked.ids).toEqual(expected);
    expect(dotKernel(floats(30, 1), 6)).toBeUndefined();
  });
});
