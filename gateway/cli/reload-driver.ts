import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError, type GatewayConfig } from '../../config/load.ts';
import type { RunningGateway } from '../gateway.ts';
import { ReloadRefused, type ReloadPlan } from '../reload/plan.ts';

const DEBOUNCE_MS = 200;

export interface ReloadDriverOptions {
  /** Loads and validates the configuration afresh (throws ConfigError naming the key). */
  load: () => GatewayConfig;
  /** The configuration file to watch (`reload.watch`); undefined: SIGHUP only. */
  watchPath?: string;
  /** Where the one-line outcome of each reload goes (stderr). */
  report: (line: string) => void;
}

/**
 * Reloads `gateway` on SIGHUP and, with `watchPath`, when that file changes (the directory is watched:
 * editors replace files; changes within 200 ms make one reload). A configuration that does not load,
 * or that changes a socket-bound key, is refused with loadConfig's key-naming message and the running
 * one keeps serving. Reloads run one after another. Returns a function that stops listening.
 */
export function driveReloads(gateway: RunningGateway, options: ReloadDriverOptions): () => void {
  let chain: Promise<void> = Promise.resolve();
  const reload = (why: string) => {
    chain = chain.then(() => once(why));
  };
  async function once(why: string): Promise<void> {
    try {
      const plan = await gateway.reload(options.load());
      options.report(`${why}: configuration reloaded (${summary(plan)})`);
    } catch (error) {
      const known = error instanceof ConfigError || error instanceof ReloadRefused;
      const message = (error as Error).message;
      options.report(
        `${why}: ${known ? message : `reload failed: ${message}`}${error instanceof ConfigError ? '; the running configuration keeps serving' : ''}`,
      );
    }
  }
  const onHup = () => reload('SIGHUP');
  process.on('SIGHUP', onHup);
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (options.watchPath) {
    const file = resolve(options.watchPath);
    watcher = watch(dirname(file), (_event, name) => {
      if (name !== basename(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => reload(`${basename(file)} changed`), DEBOUNCE_MS);
    });
    watcher.unref();
  }
  return () => {
    process.off('SIGHUP', onHup);
    clearTimeout(timer);
    watcher?.close();
  };
}

function summary(plan: ReloadPlan): string {
  const parts = [`changed: ${plan.changed.join(', ') || 'nothing'}`];
  for (const { name, decision } of plan.upstreams)
    parts.push(
      `upstream ${name}: ${decision === 'keep' ? 'connection kept' : decision === 'repolicy' ? 'connection kept, catalogue rebuilt' : 'new connection'}`,
    );
  for (const name of plan.removed) parts.push(`upstream ${name}: removed`);
  return parts.join('; ');
}
