/**
 * `npm run build:wasm`: compiles search/semantic/dots.wat (WebAssembly text, SIMD) with wabt and writes
 * the module's bytes, base64, into search/semantic/dots-wasm.ts, which the gateway loads (no compiler at
 * run time). tests/unit/search/dot-kernel.test.ts compiles the text again and fails when the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DOTS_WAT = resolve(root, 'search/semantic/dots.wat');
const OUT = resolve(root, 'search/semantic/dots-wasm.ts');

/** The module compiled from dots.wat, base64. */
export async function compileDots(): Promise<string> {
  const wabt = await wabtInit();
  const parsed = wabt.parseWat('dots.wat', readFileSync(DOTS_WAT, 'utf8'), { simd: true });
  try {
    return Buffer.from(parsed.toBinary({}).buffer).toString('base64');
  } finally {
    parsed.destroy();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const base64 = await compileDots();
  writeFileSync(
    OUT,
    `/** search/semantic/dots.wat compiled (\`npm run build:wasm\`, scripts/dots-wasm.ts): do not edit. */\nexport const DOTS_WASM_BASE64 =\n  '${base64}';\n`,
  );
  console.log(`wrote ${OUT} (${Buffer.from(base64, 'base64').length} bytes)`);
}
