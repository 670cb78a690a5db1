/**
 * One documented way to start a gateway, the same in every README and every example config's header:
 * `node --import ./scripts/register-ts.mjs gateway/main.ts`. The node process is then the gateway, so
 * SIGHUP (reload) reaches it; `npx tsx` or an npm script would put a wrapper process in between that
 * takes the signal itself.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const START = 'node --import ./scripts/register-ts.mjs gateway/main.ts';

/** A line that runs gateway/main.ts: a launcher word before the path (not a mention in prose). */
const runsGateway = /\b(?:node|tsx|npx|bun|deno)\b[^`'"]*\bgateway\/main\.ts/;

function documentation(): string[] {
  return execFileSync('git', ['ls-files', '-z', '*.md', 'config/*.yaml'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
}

describe('starting a gateway', () => {
  it('is documented one way everywhere: the project loader, so SIGHUP reaches the gateway', () => {
    const lines = documentation().flatMap((path) =>
      readFileSync(resolve(root, path), 'utf8')
        .split('\n')
        .flatMap((line, i) => (runsGateway.test(line) ? [{ at: `${path}:${i + 1}`, line }] : [])),
    );
    expect(lines.length).toBeGreaterThan(4);
    expect(lines.filter(({ line }) => !line.includes(START)).map(({ at, line }) => `${at}: ${line.trim()}`)).toEqual([]);
  });

  it('holds each example config to it: its header says how to start it', () => {
    const examples = documentation().filter((path) => /^config\/(?!conformance|cpzai)[^/]+\.yaml$/.test(path));
    expect(examples.length).toBeGreaterThan(3);
    for (const path of examples) expect(readFileSync(resolve(root, path), 'utf8'), path).toContain(`${START} --config ${path}`);
  });

  it('catches the other spellings', () => {
    for (const other of ['npx tsx gateway/main.ts --config x.yaml', 'node --import tsx gateway/main.ts', 'tsx watch gateway/main.ts']) {
      expect(runsGateway.test(other) && !other.includes(START), other).toBe(true);
    }
  });
});
