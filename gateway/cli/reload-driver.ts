import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, type GatewayConfig } from '../../config/load.ts';
import type { RunningGateway } from '../gateway.ts';
import { ReloadRefused, type ReloadPlan } from '../reload/plan.ts';

const DEBOUNCE_MS = 200;

export interface ReloadDriverOptions {
  /** Loads and validates the configuration afresh (throws ConfigError naming the key). */
  load: () => GatewayConfig;
  /** The configuration file: watched while `reload.watch` is true. */
  path: string;
  /** `reload.watch` of the configuration running now; each applied reload sets it again from the new one. */
  watch: boolean;
  /** Where the one-line outcome of each reload goes (stderr). */
  report: (line: string) => void;
}

/**
 * Reloads `gateway` on SIGHUP and, while `reload.watch` is true, when the file's content changes; a
 * reload that turns `reload.watch` on or off starts or stops the watch at once (the outcome line says
 * so). The directory is watched, not the file: editors replace files, and the kubelet updates a mounted
 * ConfigMap by swapping a `..data` symlink to a new timestamped folder (the file itself is a symlink
 * through `..data`), so no event ever names the file. Any event in the directory (settled for 200 ms)
 * reads the file through its symlinks and reloads when its SHA-256 differs from the last one seen. A
 * configuration that does not load, or that changes a socket-bound key, is refused with loadConfig's
 * key-naming message and the running one keeps serving (the gateway logs and counts each outcome).
 * Reloads run one after another. Returns a function that stops listening.
 */
export function driveReloads(gateway: RunningGateway, options: ReloadDriverOptions): () => void {
  const file = resolve(options.path);
  let chain: Promise<void> = Promise.resolve();
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  const reload = (why: string) => {
    chain = chain.then(() => once(why));
  };
  async function once(why: string): Promise<void> {
    try {
      let loaded: GatewayConfig | undefined;
      const plan = await gateway.reload(() => (loaded = options.load()));
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
      clearTimeout(timer);
      watcher!.close();
      watcher = undefined;
      return `; reload.watch off: ${basename(file)} no longer watched`;
    }
    let seen = contentHash(file);
    watcher = watch(dirname(file), () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const now = contentHash(file);
        // Missing for a moment (a swap in progress) or unchanged (another file of the folder): nothing to do.
        if (now === undefined || now === seen) return;
        seen = now;
        reload(`${basename(file)} changed`);
      }, DEBOUNCE_MS);
    });
    watcher.unref();
    return `; reload.watch on: watching ${basename(file)}`;
  }
  const onHup = () => reload('SIGHUP');
  process.on('SIGHUP', onHup);
  setWatching(options.watch);
  return () => {
    process.off('SIGHUP', onHup);
    setWatching(false);
  };
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
