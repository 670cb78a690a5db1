import { createHash } from 'node:crypto';
import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, type GatewayConfig } from '../../config/load.ts';
import type { RunningGateway } from '../gateway.ts';
import { ReloadRefused, type ReloadPlan } from '../reload/plan.ts';
import { parse } from 'yaml';

/**
 * How long after a folder event the file is read, counted from the first event: later events do not push
 * it back (the folder may be written all the time: an audit log or pins.json beside the file).
 */
const LOOK_AFTER_MS = 200;
/** A changed file is read again after this long and reloaded only when it read the same both times (a writer still at it changes it). */
const SETTLE_MS = 300;

export interface ReloadDriverOptions {
  /** Loads and validates the configuration afresh (throws ConfigError naming the key). */
  load: () => GatewayConfig;
  /** The configuration file: watched while `reload.watch` is true. */
  path: string;
  /** The configuration running now (its `reload.watch` says whether to watch); each applied reload replaces it. */
  config: GatewayConfig;
  /** Where the one-line outcome of each reload goes (stderr). */
  report: (line: string) => void;
}

/**
 * Reloads `gateway` on SIGHUP and, while `reload.watch` is true, when the file's content changes; a
 * reload that turns `reload.watch` on or off starts or stops the watch at once (the outcome line says
 * so). The directory is watched, not the file: editors replace files, and the kubelet updates a mounted
 * ConfigMap by swapping a `..data` symlink to a new timestamped folder (the file itself is a symlink
 * through `..data`), so no event ever names the file. Any event in the directory has the file read through
 * its symlinks 200 ms later (events meanwhile do not postpone that read: a restarting debounce never fired
 * while another file of the folder was written every few hundred ms, an audit log or pins.json beside the
 * configuration, and the change waited for that writer to pause), which reloads when its SHA-256 differs
 * from the last one seen and reads the same 300 ms later (a writer still at it is waited for). A configuration that does not load,
 * or that changes a socket-bound key, is refused with loadConfig's key-naming message and the running one
 * keeps serving (the gateway logs and counts each outcome). A file rewritten in place (its inode kept) that
 * drops a top-level section the applied file had is refused too, since a truncated or half-saved file
 * reads exactly so (try-out: the first 420 bytes of config/cpzai.yaml, `listen` and `upstreams`, loaded
 * and let any credential see every tool); SIGHUP applies it. A file replaced whole (an editor's rename, a
 * ConfigMap's `..data` swap) is never half-written: applied as any other. One changed again while a
 * reload before it ran is left to the watch's next event. Reloads run one after another. Returns a function
 * that stops listening.
 */
export function driveReloads(gateway: RunningGateway, options: ReloadDriverOptions): () => void {
  const file = resolve(options.path);
  let chain: Promise<void> = Promise.resolve();
  let watcher: FSWatcher | undefined;
  /** The read due after a folder event; then the read that checks a change has held still. */
  let look: NodeJS.Timeout | undefined;
  let settling: NodeJS.Timeout | undefined;
  /** The applied file's top-level sections. */
  let applied = topLevelSections(file);
  /** `settled`: the change the watch saw hold still (a watched reload), else undefined (SIGHUP). */
  const reload = (why: string, settled?: SettledChange) => {
    chain = chain.then(() => once(why, settled));
  };
  async function once(why: string, settled: SettledChange | undefined): Promise<void> {
    // Written again since it settled (a reload before this one took a while): the watch sees that change and comes back.
    if (settled !== undefined && contentHash(file) !== settled.hash) return;
    try {
      let loaded: GatewayConfig | undefined;
      let sections: Set<string> | undefined;
      const plan = await gateway.reload(() => {
        loaded = options.load();
        sections = topLevelSections(file);
        if (settled === undefined) return loaded;
        // Written in place: a file replaced whole (an editor's rename, the kubelet's swap) is never half-written.
        const dropped = settled.inPlace && applied && sections ? [...applied].filter((key) => !sections!.has(key)) : [];
        if (dropped.length)
          throw new ReloadRefused(
            dropped[0]!,
            `the changed file no longer has ${dropped.join(', ')}, which the applied one had; a file rewritten in place and truncated or half-saved reads so, and a file change is not applied so: send SIGHUP to apply it`,
          );
        return loaded;
      });
      applied = sections;
      const watchChange = setWatching(loaded!.reload.watch);
      options.report(`${why}: configuration reloaded (${summary(plan)}${watchChange})`);
    } catch (error) {
      const known = error instanceof ConfigError || error instanceof ReloadRefused;
      const message = (error as Error).message;
      options.report(
        `${why}: ${known ? message : `reload failed: ${message}`}${error instanceof ConfigError ? '; the running configuration keeps serving' : ''}`,
      );
    }
  }
  /** Starts or stops the watch; what changed, for the outcome line ('' when nothing did). */
  function setWatching(on: boolean): string {
    if (on === (watcher !== undefined)) return '';
    if (!on) {
      clearTimeout(look);
      clearTimeout(settling);
      [look, settling] = [undefined, undefined];
      watcher!.close();
      watcher = undefined;
      return `; reload.watch off: ${basename(file)} no longer watched`;
    }
    // The text the watch last accounted for, and its file's inode (a file replaced whole gets a new one). Judged
    // here, in the order the watch sees the writes, not when the reload runs: a save by rename that was not applied
    // (the same text, a refused file) made a later truncation in place read as a file replaced whole, and it was
    // applied (SRE try-out: audit, the console and OAuth went off); a write seen while a reload ran must not be
    // taken for the file that reload reads (review).
    let seen = contentHash(file);
    let seenInode = inodeOf(file);
    const settle = (first: string) => {
      settling = setTimeout(() => {
        settling = undefined;
        const now = contentHash(file);
        if (now === undefined || now === seen) return;
        // Still changing: read again once it has held still.
        if (now !== first) return settle(now);
        const inode = inodeOf(file);
        const inPlace = inode !== undefined && inode === seenInode;
        [seen, seenInode] = [now, inode];
        reload(`${basename(file)} changed`, { hash: now, inPlace });
      }, SETTLE_MS);
    };
    watcher = watch(dirname(file), () => {
      // A read is due already (this event's write is in it), or a change is settling (its read sees this one's).
      if (look || settling) return;
      look = setTimeout(() => {
        look = undefined;
        const now = contentHash(file);
        // Missing for a moment (a swap in progress) or unchanged (another file of the folder, or this one saved
        // by rename with the same text, whose new inode is noted): nothing to do.
        if (now === seen) seenInode = inodeOf(file);
        if (now === undefined || now === seen) return;
        settle(now);
      }, LOOK_AFTER_MS);
    });
    watcher.unref();
    return `; reload.watch on: watching ${basename(file)}`;
  }
  const onHup = () => reload('SIGHUP');
  process.on('SIGHUP', onHup);
  setWatching(options.config.reload.watch);
  return () => {
    process.off('SIGHUP', onHup);
    setWatching(false);
  };
}

/** A change the watch saw hold still: its text's content hash, and whether it was written in place (the inode the text before it had). */
interface SettledChange {
  hash: string;
  inPlace: boolean;
}

/** The inode of the file behind `file`'s symlinks, undefined when it cannot be read. */
function inodeOf(file: string): number | undefined {
  try {
    return statSync(file).ino;
  } catch {
    return undefined;
  }
}

/** The top-level keys of the YAML file, undefined when it cannot be read as a mapping. */
function topLevelSections(file: string): Set<string> | undefined {
  try {
    const parsed = parse(readFileSync(file, 'utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? new Set(Object.keys(parsed)) : undefined;
  } catch {
    return undefined;
  }
}

/** SHA-256 of the file's bytes, read through its symlinks; undefined when it cannot be read. */
function contentHash(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function summary(plan: ReloadPlan): string {
  const parts = [`changed: ${plan.changed.join(', ') || 'nothing'}`];
  for (const { name, decision } of plan.upstreams)
    parts.push(
      `upstream ${name}: ${decision === 'keep' ? 'connection kept' : decision === 'repolicy' ? 'connection kept, settings applied' : 'new connection'}`,
    );
  for (const name of plan.removed) parts.push(`upstream ${name}: removed`);
  return parts.join('; ');
}
