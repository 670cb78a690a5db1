/**
 * The TypeScript loader the services run under (scripts/ts-hooks.mjs): types stripped, import attributes
 * kept, names as written, and no `__name` wrapper per closure (tsx's keepNames, which cost 8-10% of a
 * tools/call's CPU). Files that are not TypeScript go to the next loader untouched.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module without types
import { load } from '../../scripts/ts-hooks.mjs';

type Loaded = { format: string; source: string; shortCircuit?: boolean };
const loadTs = load as (url: string, context: object, next: (url: string) => Promise<Loaded>) => Promise<Loaded>;

describe('scripts/ts-hooks.mjs', () => {
  it('strips types, keeps import attributes and names, and wraps no closure in __name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ts-loader-'));
    const file = join(dir, 'sample.ts');
    writeFileSync(
      file,
      "import schema from './schema.json' with { type: 'json' };\n" +
        'export function outer(n: number): () => number {\n  const inner = (): number => n + 1;\n  return inner;\n}\n' +
        'export const size: number = Object.keys(schema).length;\n',
    );
    const loaded = await loadTs(pathToFileURL(file).href, {}, () => Promise.reject(new Error('not reached')));
    expect(loaded).toMatchObject({ format: 'module', shortCircuit: true });
    expect(loaded.source).toContain('with { type: "json" }');
    expect(loaded.source).not.toMatch(/: number/);
    expect(loaded.source).not.toContain('__name');
    expect(loaded.source).toContain('const inner = ');
  });

  it('hands anything else to the next loader', async () => {
    const next = { format: 'json', source: '{}' };
    expect(await loadTs('file:///x/data.json', {}, async () => next)).toBe(next);
    expect(await loadTs('node:fs', {}, async () => next)).toBe(next);
  });
});
