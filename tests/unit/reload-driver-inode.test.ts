/**
 * reload.watch's in-place check (gateway/cli/reload-driver.ts) judges each change in the order the watch sees
 * the writes, not when its reload runs. Against a gateway whose reload takes a while (review): a file saved by
 * rename while a reload runs, which drops a section on purpose, is applied (a file replaced whole is never
 * half-written), and a file saved by rename and then truncated in place while a reload runs is refused.
 */
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { DEFAULT_CONFIG_PATH, loadConfig } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { driveReloads } from '../../gateway/cli/reload-driver.ts';
import type { RunningGateway } from '../../gateway/gateway.ts';
import { waitFor } from '../helpers/wait.ts';

const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let stop: (() => void) | undefined;
afterEach(() => stop?.());

/** A folder with gateway.yaml (reload.watch on), driven by a gateway whose every reload takes `slowMs`. */
function watched(slowMs: number) {
  const folder = mkdtempSync(join(tmpdir(), 'reload-inode-'));
  const file = join(folder, 'gateway.yaml');
  const text = (without?: string) => {
    const config: Record<string, unknown> = { ...base, reload: { watch: true } };
    if (without) delete config[without];
    return stringify(config);
  };
  const byRename = (content: string) => {
    writeFileSync(`${file}.new`, content);
    renameSync(`${file}.new`, file);
  };
  byRename(text());
  const load = (): GatewayConfig => loadConfig({ path: file, env: {} });
  const gateway = {
    // As gateway.ts reloads: the file read first, then the slow part (connections, catalogues, the index).
    reload: async (build: () => GatewayConfig) => {
      build();
      await pause(slowMs);
      return { changed: [], upstreams: [], removed: [] };
    },
  } as unknown as RunningGateway;
  const lines: string[] = [];
  stop = driveReloads(gateway, { load, path: file, config: load(), report: (line) => lines.push(line) });
  return { file, folder, text, byRename, lines };
}

describe('reload.watch, a reload that takes a while', { timeout: 30_000 }, () => {
  it('applies a file saved by rename during it that drops a section, though another file of the folder is written meanwhile', async () => {
    const { folder, text, byRename, lines } = watched(4_000);
    byRename(text('metrics'));
    await pause(1_500);
    // Dropping another section on purpose, by rename, while the first reload runs; then the folder's noise.
    byRename(text('security'));
    await pause(1_500);
    writeFileSync(join(folder, 'audit.jsonl'), '{}\n');
    await waitFor('both reloads', () => lines.length === 2, { timeoutMs: 15_000 });
    expect(lines).toEqual([expect.stringMatching(/configuration reloaded/), expect.stringMatching(/configuration reloaded/)]);
  });

  it('refuses a file saved by rename during it and then truncated in place', async () => {
    const { file, text, byRename, lines } = watched(4_000);
    byRename(text('metrics'));
    await pause(1_500);
    byRename(text());
    await pause(1_500);
    writeFileSync(file, text().slice(0, text().indexOf('\nscopes:') + 1));
    await waitFor('the reloads', () => lines.length >= 2 && lines.some((l) => /no longer has/.test(l)), { timeoutMs: 15_000 });
    expect(lines.filter((l) => /configuration reloaded/.test(l) && lines.indexOf(l) > 0)).toEqual([]);
    expect(lines.at(-1)).toMatch(/configuration not reloaded: .*no longer has .*send SIGHUP to apply it/);
  });
});
