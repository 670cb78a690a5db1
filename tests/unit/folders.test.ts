/**
 * makeFolders (gateway/obs/folders.ts): a configured path's folder made one level at a time, what cannot be a
 * folder refused, never Node's recursive mkdir (which loops forever under /proc).
 */
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFolders } from '../../gateway/obs/folders.ts';

const root = mkdtempSync(join(tmpdir(), 'folders-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('makeFolders', () => {
  it('makes every missing level, and takes a folder that is there', () => {
    const deep = join(root, 'a', 'b', 'c');
    makeFolders(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(() => makeFolders(deep)).not.toThrow();
  });

  it('refuses a path under /proc at once (ENOENT), where a recursive mkdir never returns', () => {
    expect(() => makeFolders('/proc/nonexistent/pins')).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('refuses a file and a symlink to nothing as the folder (review: both were taken, and every write failed later)', () => {
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    expect(() => makeFolders(file)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    const dangling = join(root, 'dangling');
    symlinkSync(join(root, 'nowhere'), dangling);
    expect(() => makeFolders(dangling)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
