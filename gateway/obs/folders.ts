import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p` of a folder from the configuration (`audit.destination`'s, `pinning.lockFile`'s), one
 * missing level at a time, from the deepest folder that exists down: at most as many `mkdir` calls as the
 * path has levels. Why not `mkdirSync(folder, { recursive: true })`: under a folder that refuses every new
 * entry with ENOENT (`/proc`, `/sys`) Node's recursive mkdir retries forever on the event loop, so the
 * process hung at 100% CPU, /healthz unanswered and SIGTERM ignored. Here that ENOENT is thrown.
 * Every gateway folder made from a configured path goes through this (tests/unit/folders.test.ts).
 * @throws the first `mkdir` error other than EEXIST (ENOENT, EACCES, ENOTDIR, EROFS), as node:fs throws it; ENOTDIR
 *   when `folder` is, or resolves to, something other than a folder (a file, a symlink to nothing).
 */
export function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let at = folder; !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const each of missing) {
    try {
      mkdirSync(each);
    } catch (error) {
      // Made meanwhile (another replica on a shared volume): what was wanted, if it is a folder (checked below).
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  // A file, or a symlink to nothing (existsSync follows it; mkdir answers EEXIST), is no folder: every later write
  // would fail there (review: makeFolders returned and the start went on).
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder) throw Object.assign(new Error(`ENOTDIR: not a folder, '${folder}'`), { code: 'ENOTDIR', path: folder });
}
