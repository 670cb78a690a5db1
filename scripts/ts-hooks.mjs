/**
 * Node module hooks (node:module `register`) that load the project's TypeScript: each `.ts` file is
 * transformed by esbuild (types stripped, syntax kept for the running Node, an inline source map) and run as an ES module.
 * What tsx does for `npm start`, minus its `keepNames`: that option wraps every named closure in a
 * `__name` call (Object.defineProperty on each function made), which measured 8-10% of the gateway's CPU
 * per tools/call (docs/performance.md). Nothing is renamed without it (esbuild only strips types
 * here), so function and class names are what the source says. Imports name their `.ts` files
 * (tsconfig `allowImportingTsExtensions`), so Node's own resolution finds them.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

/** @type {import('node:module').LoadHook} */
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = await readFile(file, 'utf8');
  const { code } = await transform(source, { loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcemap: 'inline', sourcefile: file });
  return { format: 'module', source: code, shortCircuit: true };
}
