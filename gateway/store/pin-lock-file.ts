import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../config/load.ts';
import { makeFolders } from '../obs/folders.ts';
import type { Logger } from '../obs/log.ts';
import type { PinRecord, PinStore } from './pin-store.ts';

/**
 * The pin lock file (`pinning.lockFile`, issue 30): every pin as JSON beside the configuration, for
 * operators who review pins like a package lock (commit it; a pull request that changes it is an
 * approval to read). At start its pins are put in the store where the store has none (a Redis that lost
 * its data), and where the store pins another definition by {@link fileWins}: an approval over a first
 * sight, the later approval, the earlier first sight (a replica that saw an empty store, another Redis DB
 * or a flushed one, pinned whatever the upstream served then, a rug pull included: neither its file nor
 * its store pins win over what was seen before). Afterwards the gateway rewrites
 * it whenever a pin is recorded or approved, and once at start (a file newly configured mirrors the store
 * from then on), keys sorted and indented so that a diff shows one tool per hunk. Waiting changes are not
 * in it: they live in the store until approved.
 */
export interface LockFileContent {
  lockfileVersion: 1;
  /** By upstream, then the upstream's own tool name. */
  upstreams: Record<string, Record<string, PinRecord>>;
}

const WRITE_DELAY_MS = 200;

/**
 * Why a pin read from the file is not to be trusted (its definition named for another tool, its digest not
 * its definition's), or undefined: the catalogue's rule (catalog/pinning.ts `lockedPinProblem`), handed in.
 */
export type LockedPinCheck = (upstream: string, name: string, pin: PinRecord) => string | undefined;

/**
 * Reads a lock file; undefined when it does not exist. Each pin is checked against itself by `check`
 * (catalog/pinning.ts `lockedPinProblem`: named as the tool it is filed under, nesting no deeper than a
 * catalogue takes, its digest that definition's). The digest decides what the guard takes as unchanged
 * while the definition is what a review of the file reads, so a pin whose two disagree (a harmless
 * definition beside the digest of a poisoned one) is never trusted.
 * @throws ConfigError (`pinning.lockFile`) naming the file when it is not a lock file, and the entry and what disagrees when a pin
 *   does not match itself (the gateway does not start; a reload to it fails, the running configuration serving on).
 */
export function readLockFile(path: string, check: LockedPinCheck): LockFileContent | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError('pinning.lockFile', `cannot read ${path}: ${(error as Error).message}`);
  }
  let content: LockFileContent;
  try {
    content = JSON.parse(text) as LockFileContent;
  } catch (error) {
    throw new ConfigError('pinning.lockFile', `${path} is not JSON: ${(error as Error).message}`);
  }
  if (content?.lockfileVersion !== 1 || typeof content.upstreams !== 'object' || content.upstreams === null)
    throw new ConfigError('pinning.lockFile', `${path} is not a pin lock file (lockfileVersion 1 with upstreams)`);
  for (const [upstream, tools] of Object.entries(content.upstreams))
    for (const [name, pin] of Object.entries(tools ?? {})) {
      const entry = `${path}: upstreams.${upstream}.${name}`;
      if (typeof pin?.digest !== 'string' || typeof pin.definition !== 'object' || pin.definition === null)
        throw new ConfigError('pinning.lockFile', `${entry} needs a digest and a definition`);
      const problem = check(upstream, name, pin);
      if (problem) throw new ConfigError('pinning.lockFile', `${entry}: ${problem}`);
    }
  return content;
}

/**
 * Whether the file's pin replaces the store's different one at start: an approval over a first sight, the
 * later of two approvals (a replica's file is not rewritten when another replica approves), the earlier of
 * two first sights (trust on first use: a store refilled after a data loss by a replica that saw a changed
 * definition first must not win over what was seen before, nor a file written by such a replica over the
 * store). `pinnedAt` is ISO 8601, compared as text.
 */
function fileWins(file: PinRecord, store: PinRecord): boolean {
  if (file.by !== store.by) return file.by === 'approval';
  return file.by === 'approval' ? file.pinnedAt > store.pinnedAt : file.pinnedAt < store.pinnedAt;
}

/** The file's text: keys sorted at every depth, two-space indented, newline-terminated (a diff shows one tool per hunk). */
export function lockFileText(content: LockFileContent): string {
  const sorted = (_key: string, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value;
  return `${JSON.stringify(content, sorted, 2)}\n`;
}

/**
 * `store` with the lock file at `path` kept in step: its pins are applied to the store before the first
 * operation answers, and every pin written is followed (within {@link WRITE_DELAY_MS}) by a rewrite of the
 * file from the store's pins (written to a temporary file, then renamed: a reader never sees half a file).
 * The file's folder is made at creation, level by level ({@link makeFolders}), so a folder that cannot
 * be made stops the start or the reload there, not at the first write. A file that cannot be written later
 * is logged (once per error) and the store goes on without it. `check`: what each of the file's pins must
 * pass to be trusted ({@link readLockFile}).
 * @throws ConfigError (`pinning.lockFile`) at creation when the file exists and is not a lock file, holds a
 *   pin whose digest is not its definition's, or its folder cannot be made (the gateway does not start).
 */
export function withLockFile(store: PinStore, path: string, log: Logger, check: LockedPinCheck): PinStore {
  // What the file held when last read (at start, at a reload): applied to the store before the next operation answers.
  let initial = readLockFile(path, check);
  try {
    makeFolders(dirname(path));
  } catch (error) {
    throw new ConfigError('pinning.lockFile', `cannot make the folder of ${path}: ${(error as Error).message}`);
  }
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let lastError: string | undefined;
  const write = async () => {
    try {
      const upstreams: LockFileContent['upstreams'] = {};
      for (const upstream of await store.upstreams()) {
        const pins = await store.pins(upstream);
        if (pins.size) upstreams[upstream] = Object.fromEntries(pins);
      }
      // Made again if removed since the start; never `recursive: true`, which loops forever under /proc.
      makeFolders(dirname(path));
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, lockFileText({ lockfileVersion: 1, upstreams }));
      renameSync(temporary, path);
      lastError = undefined;
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastError) log.warn({ path, err: message }, 'pin lock file not written; pins stay in the store');
      lastError = message;
    }
  };
  const scheduleWrite = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      writing = writing.then(write);
    }, WRITE_DELAY_MS);
    timer.unref();
  };
  /** The file's pins put in the store, once; tried again by the next operation after a store failure. */
  let applied: Promise<void> | undefined;
  const apply = () => applyFile(initial);
  const applyFile = async (content: LockFileContent | undefined) => {
    for (const [upstream, tools] of Object.entries(content?.upstreams ?? {})) {
      const inStore = await store.pins(upstream);
      for (const [name, pin] of Object.entries(tools)) {
        const current = inStore.get(name);
        if (current?.digest === pin.digest) continue;
        if (current && !fileWins(pin, current)) {
          log.warn(
            { upstream, tool: name, lockFile: path },
            "the lock file pins another definition than the pin store; the store's pin stays (approve the other to change it)",
          );
          continue;
        }
        if (current) log.warn({ upstream, tool: name, lockFile: path }, 'the lock file pins another definition than the pin store; the lock file wins');
        await store.setPin(upstream, name, pin);
      }
    }
    scheduleWrite();
  };
  const after = async <T>(run: () => Promise<T>): Promise<T> => {
    applied ??= apply().catch((error: unknown) => {
      applied = undefined;
      throw error;
    });
    await applied;
    return run();
  };
  const wrapped: PinStore = {
    kind: store.kind,
    pins: (upstream) => after(() => store.pins(upstream)),
    pending: (upstream) => after(() => store.pending(upstream)),
    pinAllIfAbsent: (upstream, records) =>
      after(async () => {
        const pins = await store.pinAllIfAbsent(upstream, records);
        if (records.length) scheduleWrite();
        return pins;
      }),
    notePendingAll: (upstream, changes) => after(() => store.notePendingAll(upstream, changes)),
    clearPending: (upstream, name) => after(() => store.clearPending(upstream, name)),
    approve: (upstream, name, digest) =>
      after(async () => {
        const result = await store.approve(upstream, name, digest);
        if (typeof result === 'object') scheduleWrite();
        return result;
      }),
    setPin: (upstream, name, record) =>
      after(async () => {
        await store.setPin(upstream, name, record);
        scheduleWrite();
      }),
    revision: () => after(() => store.revision()),
    upstreams: () => after(() => store.upstreams()),
    readLockFileAgain: () => {
      // Checked whole now (a file refused, ConfigError, refuses the reload); applied only once the reload is done.
      const content = readLockFile(path, check);
      return async () => {
        initial = content;
        applied = undefined;
        // Applied now, or by the first operation once a store that does not answer now answers again: a Redis
        // outage must not undo a reload that is done.
        await after(async () => undefined).catch((error: unknown) =>
          log.warn({ lockFile: path, err: (error as Error).message }, 'the pin lock file was read again; its pins go to the pin store when it answers'),
        );
      };
    },
    close: async () => {
      if (timer) {
        clearTimeout(timer);
        timer = undefined;
        writing = writing.then(write);
      }
      await writing;
      await store.close();
    },
  };
  return wrapped;
}
