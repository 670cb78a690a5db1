/**
 * The project passes from a fresh clone with nothing beside it: no tracked source, test, bench, script,
 * config or data file names a path outside the checkout (the data folder that used to sit beside it, or a machine's
 * own absolute path). Markdown may mention them; code and data may not read them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
// Spelled in parts so that this file does not match itself.
const outside = new RegExp(['\\.\\./sha', 'red\\b|sha', 'red/data|/work/', '(?:wt|main|shared)/'].join(''));

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && !path.endsWith('.md') && !/\.(png|jpe?g|gz|wasm|bin)$/.test(path));
}

describe('a fresh clone needs nothing beside it', () => {
  it('no tracked file outside Markdown names a path outside the checkout', () => {
    const offenders = trackedFiles().flatMap((path) => {
      const lines = readFileSync(resolve(root, path), 'utf8').split('\n');
      return lines.flatMap((line, i) => (outside.test(line) ? [`${path}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
    });
    expect(offenders).toEqual([]);
  });

  it('the rule catches a path outside the checkout', () => {
    expect(outside.test(`readFileSync('../${'shared'}/data/queries/x.jsonl')`)).toBe(true);
    expect(outside.test(`"catalog": "/work/${'wt'}/x/tool-catalog.json"`)).toBe(true);
    expect(outside.test("readFileSync('data/queries/x.jsonl')")).toBe(false);
  });
});
