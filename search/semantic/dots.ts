/**
 * The semantic arms' scan (lsa.ts `nearestVectors`: a query's dot product with every tool's vector) in
 * WebAssembly SIMD: dots.wat beside this file, compiled into dots-wasm.ts (`npm run build:wasm`). Each
 * similarity is the JavaScript loop's to the bit (float64 products and sums in its order, rounded to
 * float32), so rankings do not change. At 10,000 tools and 64 axes a whole search's p50 went from 1.09 to
 * 0.45 ms (docs/performance.md). Each kernel holds a copy of its rows (2.5 MB at that size). Where WebAssembly SIMD is not available, or the dimension is not a multiple of
 * 4, there is no kernel and the JavaScript loop runs.
 */
import { DOTS_WASM_BASE64 } from './dots-wasm.ts';

/** The scan of one matrix of vectors, its rows copied once into the module's memory. */
export interface DotKernel {
  /**
   * Every row's dot product with `query` (`dim` components), 0 for a row whose `visible` byte is not 1:
   * a view of the module's memory, valid until the next call.
   */
  dots(query: Float32Array, visible: Uint8Array): Float32Array;
}

interface DotsExports {
  memory: WebAssembly.Memory;
  dots(rows: number, query: number, n: number, dim: number, visible: number, out: number): void;
}

const PAGE = 65_536;
let compiled: WebAssembly.Module | null | undefined;

function dotsModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(DOTS_WASM_BASE64, 'base64'));
    } catch {
      // A runtime without 128-bit SIMD refuses the module: the JavaScript loop serves.
      compiled = null;
    }
  }
  return compiled;
}

const kernels = new WeakMap<Float32Array, DotKernel | null>();

/** The kernel of `vectors` (rows of `dim`), made on first use and kept while the vectors are; undefined where none can run. */
export function dotKernel(vectors: Float32Array, dim: number): DotKernel | undefined {
  let kernel = kernels.get(vectors);
  if (kernel === undefined) {
    kernel = makeKernel(vectors, dim);
    kernels.set(vectors, kernel);
  }
  return kernel ?? undefined;
}

function makeKernel(vectors: Float32Array, dim: number): DotKernel | null {
  const module = dim > 0 && dim % 4 === 0 ? dotsModule() : null;
  if (!module) return null;
  const n = vectors.length / dim;
  // Layout: rows, the query, the visible bytes (padded to 4), the similarities.
  const rows = 0;
  const query = rows + vectors.byteLength;
  const visible = query + dim * 4;
  const out = visible + Math.ceil(n / 4) * 4;
  const end = out + n * 4;
  const { exports } = new WebAssembly.Instance(module, {}) as unknown as { exports: DotsExports };
  const pages = Math.ceil(end / PAGE) - exports.memory.buffer.byteLength / PAGE;
  if (pages > 0) exports.memory.grow(pages);
  const buffer = exports.memory.buffer;
  new Float32Array(buffer, rows, vectors.length).set(vectors);
  const queryView = new Float32Array(buffer, query, dim);
  const visibleView = new Uint8Array(buffer, visible, n);
  const outView = new Float32Array(buffer, out, n);
  return {
    dots(q, seen) {
      queryView.set(q.length === dim ? q : q.subarray(0, dim));
      visibleView.set(seen.length === n ? seen : seen.subarray(0, n));
      exports.dots(rows, query, n, dim, visible, out);
      return outView;
    },
  };
}
