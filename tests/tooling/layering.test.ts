/**
 * The layering rules in .dependency-cruiser.cjs fire on a tree that breaks them and stay quiet on one that
 * keeps them. CI checks the real tree with `npm run lint:deps`; this proves that check can fail.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const dirs: string[] = [];

/** Writes `files` (path -> source) into a fresh tree beside the project's node_modules; returns its path. */
async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'layering-'));
  dirs.push(dir);
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
  for (const [path, source] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), source);
  }
  return dir;
}

/** The names of the rules dependency-cruiser reports broken in `dir`, one per violation, sorted. */
async function violations(dir: string, folders = ['gateway', 'tests']): Promise<string[]> {
  const bin = join(root, 'node_modules/.bin/depcruise');
  const args = [...folders, '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'];
  const { stdout } = await run(bin, args, { cwd: dir }).catch((error: { stdout: string }) => error);
  const result = JSON.parse(stdout) as { summary: { violations: { rule: { name: string } }[] } };
  return result.summary.violations.map((v) => v.rule.name).sort();
}

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * The layers of gateway/ top to bottom, as .dependency-cruiser.cjs draws them, each by one file of it;
 * the config's own list is read so that a layer added there is tested here.
 */
const LAYERS = (await import(join(root, '.dependency-cruiser.cjs'))).default.forbidden
  .filter((rule: { name: string }) => rule.name.startsWith('layer-order-'))
  .map((rule: { name: string }) => rule.name.slice('layer-order-'.length)) as string[];
const FILE: Record<string, string> = {
  entry: 'gateway/main.ts',
  gateway: 'gateway/gateway.ts',
  runtime: 'gateway/runtime.ts',
  http: 'gateway/http/app.ts',
  mcp: 'gateway/mcp/server.ts',
  'runtime-state': 'gateway/runtime-state.ts',
  surfaces: 'gateway/surfaces/full.ts',
  ports: 'gateway/ports.ts',
  ops: 'gateway/ops/view.ts',
  policy: 'gateway/policy/visibility.ts',
  catalog: 'gateway/catalog/catalog.ts',
  upstream: 'gateway/upstream/client.ts',
  auth: 'gateway/auth/credentials.ts',
  checks: 'gateway/checks/input-check.ts',
  sandbox: 'gateway/sandbox/sandbox.ts',
  store: 'gateway/store/kv-store.ts',
  obs: 'gateway/obs/log.ts',
  errors: 'gateway/errors.ts',
  wire: 'gateway/wire/jsonrpc.ts',
  reload: 'gateway/reload/plan.ts',
};
/** `from`'s import of `to`, relative. */
const importOf = (from: string, to: string) => relative(dirname(from), to).replace(/^(?!\.)/, './');

describe('layering rules (dependency-cruiser)', () => {
  it('reports an import circle, HTTP code in policy/, and a test importing bench/', async () => {
    const dir = await tree({
      'gateway/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'gateway/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
      'gateway/http/app.ts': 'export const app = 1;\n',
      'gateway/policy/visibility.ts': "import Koa from 'koa';\nexport const v = [Koa];\n",
      'bench/load.ts': 'export const load = 1;\n',
      'tests/x.test.ts': "import { load } from '../bench/load.ts';\nexport const x = load;\n",
    });
    expect(await violations(dir)).toEqual(['no-circular', 'pure-layers-no-http-or-server', 'tests-never-import-bench']);
  });

  it('reports a circle made of type-only imports', async () => {
    const dir = await tree({
      'gateway/catalog/a.ts': "import type { B } from './b.ts';\nexport interface A { b?: B }\n",
      'gateway/catalog/b.ts': "import type { A } from './a.ts';\nexport interface B { a?: A }\n",
    });
    expect(await violations(dir, ['gateway'])).toEqual(['no-circular']);
  });

  it('reports every layer of gateway/ importing the layer drawn just above it, a type-only import too', async () => {
    expect(LAYERS).toEqual(Object.keys(FILE).slice(1));
    const files: Record<string, string> = { [FILE.entry!]: 'export const entry = 1;\n' };
    LAYERS.forEach((layer, i) => {
      const above = FILE[i === 0 ? 'entry' : LAYERS[i - 1]!]!;
      const own = FILE[layer]!;
      // Alternate value and type-only imports: neither is exempt.
      files[own] =
        i % 2
          ? `import type { T } from '${importOf(own, above)}';\nexport type U = T;\nexport type T = 1;\n`
          : `import '${importOf(own, above)}';\nexport type T = 1;\n`;
    });
    expect(await violations(await tree(files), ['gateway'])).toEqual(LAYERS.map((layer) => `layer-order-${layer}`).sort());
  });

  it('reports search/ or config/ importing the gateway, and the gateway and the reference upstream importing each other', async () => {
    const dir = await tree({
      'gateway/errors.ts': "import { s } from '../upstream/server.ts';\nexport const e = s;\n",
      'upstream/server.ts': 'export const s = 1;\n',
      'upstream/client.ts': "import { e } from '../gateway/errors.ts';\nexport const c = e;\n",
      'search/index.ts': "import { e } from '../gateway/errors.ts';\nexport const i = e;\n",
      'config/load.ts': "import { i } from '../search/index.ts';\nexport const l = i;\n",
    });
    expect(await violations(dir, ['gateway', 'search', 'config', 'upstream'])).toEqual([
      'config-knows-no-gateway-or-search',
      'gateway-and-reference-server-apart',
      'reference-server-knows-no-gateway',
      'search-knows-no-gateway',
    ]);
  });

  it('reports nothing for a tree that keeps the layers (type-only SDK imports in policy/ are allowed)', async () => {
    const files: Record<string, string> = {
      'gateway/policy/visibility.ts': "import type { Tool } from '@modelcontextprotocol/server';\nexport const v: Tool[] = [];\n",
      'tests/x.test.ts': "import { app } from '../gateway/http/app.ts';\nexport const x = app;\n",
    };
    // Every layer imports the one drawn just below it.
    const order = ['entry', ...LAYERS];
    order.forEach((layer, i) => {
      const own = FILE[layer]!;
      const below = order[i + 1];
      if (files[own]) return;
      files[own] = below ? `import '${importOf(own, FILE[below]!)}';\nexport const app = 1;\n` : 'export const app = 1;\n';
    });
    expect(await violations(await tree(files))).toEqual([]);
  });
});
