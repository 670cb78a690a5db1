/**
 * The layering rules in .dependency-cruiser.cjs fire on a tree that breaks them and stay quiet on one that
 * keeps them. CI checks the real tree with `npm run lint:deps`; this proves that check can fail.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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
async function violations(dir: string): Promise<string[]> {
  const bin = join(root, 'node_modules/.bin/depcruise');
  const args = ['gateway', 'tests', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'];
  const { stdout } = await run(bin, args, { cwd: dir }).catch((error: { stdout: string }) => error);
  const result = JSON.parse(stdout) as { summary: { violations: { rule: { name: string } }[] } };
  return result.summary.violations.map((v) => v.rule.name).sort();
}

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('layering rules (dependency-cruiser)', () => {
  it('reports an import circle, HTTP code in policy/, policy in upstream/ and a test importing bench/', async () => {
    const dir = await tree({
      'gateway/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'gateway/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
      'gateway/http/app.ts': 'export const app = 1;\n',
      'gateway/policy/visibility.ts': "import Koa from 'koa';\nimport { app } from '../http/app.ts';\nexport const v = [Koa, app];\n",
      'gateway/upstream/client.ts': "import { v } from '../policy/visibility.ts';\nexport const c = v;\n",
      'bench/load.ts': 'export const load = 1;\n',
      'tests/x.test.ts': "import { load } from '../bench/load.ts';\nexport const x = load;\n",
    });
    expect(await violations(dir)).toEqual([
      'no-circular',
      'pure-layers-no-http-or-server',
      'pure-layers-no-http-or-server',
      'tests-never-import-bench',
      'upstream-knows-no-policy',
    ]);
  });

  it('reports nothing for a tree that keeps the layers (type-only SDK imports in policy/ are allowed)', async () => {
    const dir = await tree({
      'gateway/http/app.ts': "import { v } from '../policy/visibility.ts';\nexport const app = v;\n",
      'gateway/policy/visibility.ts': "import type { Tool } from '@modelcontextprotocol/server';\nexport const v: Tool[] = [];\n",
      'gateway/upstream/client.ts': 'export const c = 1;\n',
      'tests/x.test.ts': "import { app } from '../gateway/http/app.ts';\nexport const x = app;\n",
    });
    expect(await violations(dir)).toEqual([]);
  });
});
