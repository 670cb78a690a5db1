/**
 * What a live reload tells an operator: every outcome is a JSON log line and a count in
 * `mcp_config_reloads_total{outcome}` (applied, refused), a refused one naming the key, and the running
 * configuration keeps serving; `reload.watch` turned on or off by a reload starts or stops the file watch
 * at once (gateway/cli/reload-driver.ts; the signal is emitted in process, the file is real).
 */
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig } from '../../../config/load.ts';
import { driveReloads } from '../../../gateway/cli/reload-driver.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

let stack: Stack;
let dir: string;
beforeAll(async () => {
  stack = await startStack({ upstream: { tools: [{ definition: { name: 'quote', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } }] } });
  dir = mkdtempSync(join(tmpdir(), 'reload-outcomes-'));
});
afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The stack's configuration (listen port 0, as it started) from `file`. */
const load = (file = DEFAULT_CONFIG_PATH) => {
  const config = loadConfig({
    path: file,
    env: {},
    overrides: { log: { level: 'info' }, listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ url: stack.upstreamUrl }] },
  });
  delete config.scopes.endpoint;
  return config;
};

async function reloads(): Promise<Record<string, number>> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^mcp_config_reloads_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe('reload outcomes', () => {
  it('are counted and logged: applied, refused for an invalid file (the key named), refused for a key that needs a restart', async () => {
    // Counted from here: the file's other tests reload the same gateway.
    const before = await reloads();
    const since = async () => {
      const now = await reloads();
      return Object.fromEntries(
        Object.entries(now)
          .map(([outcome, n]) => [outcome, n - (before[outcome] ?? 0)])
          .filter(([, n]) => n !== 0),
      );
    };
    const logged = stack.logs.records('configuration not reloaded').length;
    await stack.gateway.reload(() => load());
    expect(await since()).toEqual({ applied: 1 });

    const invalid = () => {
      throw new ConfigError('scopes.timeoutMs', 'must be integer (in gateway.yaml)');
    };
    await expect(stack.gateway.reload(invalid)).rejects.toThrow('scopes.timeoutMs');
    const movedPort = () => ({ ...load(), listen: { host: '127.0.0.1', port: 1 } });
    await expect(stack.gateway.reload(movedPort)).rejects.toThrow('listen.port: changed from 0 to 1, which needs a restart');
    expect(await since()).toEqual({ applied: 1, refused: 2 });

    const refusals = stack.logs.records('configuration not reloaded').slice(logged);
    expect(refusals.map((r) => [r.level, r.outcome, r.key])).toEqual([
      [40, 'refused', 'scopes.timeoutMs'],
      [40, 'refused', 'listen.port'],
    ]);
    expect((await fetch(`${stack.gatewayUrl}/healthz`)).status).toBe(200);
  });
});

describe('a reload refused for a YAML syntax error', () => {
  it('logs the file, line, column and problem, never the line itself (a secret with an unclosed quote)', async () => {
    const secret = 'reload-admin-token-0123456789abcdef';
    const file = join(dir, 'unclosed.yaml');
    writeFileSync(file, `${readFileSync(DEFAULT_CONFIG_PATH, 'utf8')}\nconsole: { adminToken: "${secret} }\n`);
    const logged = stack.logs.records('configuration not reloaded').length;
    await expect(stack.gateway.reload(() => load(file))).rejects.toThrow(`${file} is not valid YAML: line `);
    const [refusal] = stack.logs.records('configuration not reloaded').slice(logged);
    expect(refusal).toMatchObject({ level: 40, outcome: 'refused', key: '(file)' });
    expect(String(refusal!.reason)).toMatch(/is not valid YAML: line \d+, column \d+: .+ \([A-Z_]+\)$/);
    expect(stack.logs.text).not.toContain(secret.slice(0, 12));
  });
});

describe('reload.watch changed by a reload', () => {
  it('says whether spans are exported at start and when a reload changes it, not on every reload', async () => {
    const off = () => stack.logs.records('tracing off').length;
    const on = () => stack.logs.records('tracing on').length;
    expect([off(), on()]).toEqual([1, 0]);
    await stack.gateway.reload(structuredClone(stack.config));
    await stack.gateway.reload({ ...structuredClone(stack.config), tracing: { ...stack.config.tracing, serviceName: 'renamed' } });
    expect([off(), on()]).toEqual([1, 0]);
    const otlp = {
      ...structuredClone(stack.config),
      tracing: { ...stack.config.tracing, exporter: 'otlp' as const, endpoint: 'http://127.0.0.1:9/v1/traces' },
    };
    await stack.gateway.reload(otlp);
    await stack.gateway.reload(structuredClone(otlp));
    expect([off(), on()]).toEqual([1, 1]);
    await stack.gateway.reload(structuredClone(stack.config));
    expect([off(), on()]).toEqual([2, 1]);
  });

  it('keeps the audit digest key it generated across reloads, warning about it once', async () => {
    const warned = () => stack.logs.records('audit.digestKey is not set').length;
    const before = warned();
    const audited = { ...structuredClone(stack.config), audit: { ...stack.config.audit, destination: join(dir, 'audit.jsonl') } };
    await stack.gateway.reload(audited);
    await stack.gateway.reload(structuredClone(audited));
    await stack.gateway.reload({ ...structuredClone(audited), log: { ...audited.log, level: 'debug' } });
    expect(warned() - before).toBe(1);
    await stack.gateway.reload(structuredClone(stack.config));
  });

  it('starts the watch when turned on and stops it when turned off, and says so', async () => {
    const file = join(dir, 'gateway.yaml');
    const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as Record<string, any>;
    const write = (watch: boolean, anchors: string[], without?: string, replaceWhole = false) => {
      const config: Record<string, unknown> = { ...base, reload: { watch }, upstreams: [{ ...base.upstreams[0], anchors }] };
      if (without) delete config[without];
      if (!replaceWhole) return writeFileSync(file, stringify(config));
      // As an editor saves (and the kubelet swaps a ConfigMap): a new file renamed over the old one.
      writeFileSync(`${file}.new`, stringify(config));
      renameSync(`${file}.new`, file);
    };
    const lines: string[] = [];
    write(false, []);
    const stop = driveReloads(stack.gateway, { load: () => load(file), path: file, config: load(file), report: (line) => lines.push(line) });
    try {
      // Not watched yet: an edit alone reloads nothing; SIGHUP reloads it and turns the watch on.
      write(true, []);
      process.emit('SIGHUP');
      await waitFor('the SIGHUP reload', () => lines.length === 1, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[0]).toMatch(/^SIGHUP: configuration reloaded \(.*; reload\.watch on: watching gateway\.yaml\)$/);

      // Watched: a file without a section the applied one had (what a truncated one reads as) is not applied by the watch.
      write(true, [], 'scopes');
      await waitFor('the refused watched reload', () => lines.length === 2, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[1]).toMatch(
        /^gateway\.yaml changed: configuration not reloaded: scopes: the changed file no longer has scopes, which the applied one had; .*send SIGHUP to apply it; the running configuration keeps serving$/,
      );

      // The same file replaced whole is no half-written one: applied.
      write(true, ['quote'], 'scopes', true);
      await waitFor('the replaced file reloaded', () => lines.length === 3, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[2]).toMatch(/^gateway\.yaml changed: configuration reloaded \(changed: .*scopes/);

      // An edit reloads by itself; this one turns the watch off.
      write(false, ['quote']);
      await waitFor('the watched reload', () => lines.length === 4, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[3]).toMatch(/^gateway\.yaml changed: configuration reloaded \(.*; reload\.watch off: gateway\.yaml no longer watched\)$/);

      // Not watched any more: an edit goes unseen (an absence: waited for, well past the 200 ms debounce)
      // until the next signal, whose line comes next.
      write(false, []);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(lines).toHaveLength(4);
      process.emit('SIGHUP');
      await waitFor('the last SIGHUP reload', () => lines.length === 5, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[4]).toMatch(/^SIGHUP: configuration reloaded/);
    } finally {
      stop();
    }
  });

  // SRE try-out: the in-place check compared the inode with the last APPLIED file's, so after a save by rename that was
  // not applied (the same text, or a refused one) a truncation in place read as a file replaced whole, and was applied.
  it('refuses a truncation in place after a save by rename that changed nothing, and after a refused one', async () => {
    const folder = mkdtempSync(join(dir, 'inode-'));
    const file = join(folder, 'gateway.yaml');
    const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as Record<string, any>;
    const text = (anchors: string[], extra: Record<string, unknown> = {}) =>
      stringify({ ...base, ...extra, reload: { watch: true }, upstreams: [{ ...base.upstreams[0], anchors }] });
    const byRename = (content: string) => {
      writeFileSync(`${file}.new`, content);
      renameSync(`${file}.new`, file);
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    byRename(text([]));
    const lines: string[] = [];
    const stop = driveReloads(stack.gateway, { load: () => load(file), path: file, config: load(file), report: (line) => lines.push(line) });
    try {
      // Saved by rename with the same text: nothing to apply, nothing said (waited for, past the debounce).
      byRename(text([]));
      await pause(1_000);
      expect(lines).toEqual([]);
      // Then cut short in place, as a half-written save is: refused.
      writeFileSync(file, text([]).slice(0, text([]).indexOf('\nscopes:') + 1));
      await waitFor('the refused truncation', () => lines.length === 1, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[0]).toMatch(/^gateway\.yaml changed: configuration not reloaded: .*no longer has .*send SIGHUP to apply it/);
      // A whole file again (by rename) is applied; then one by rename that does not load is refused ...
      byRename(text(['quote']));
      await waitFor('the replaced file reloaded', () => lines.length === 2, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[1]).toMatch(/^gateway\.yaml changed: configuration reloaded/);
      byRename(text(['quote'], { limits: { bodyBytes: 'lots' } }));
      await waitFor('the refused replacement', () => lines.length === 3, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[2]).toMatch(/^gateway\.yaml changed: invalid configuration: limits\.bodyBytes: .*the running configuration keeps serving$/);
      // ... and the same file then truncated in place is refused too.
      writeFileSync(file, text(['quote']).slice(0, text(['quote']).indexOf('\nscopes:') + 1));
      await waitFor('the second refused truncation', () => lines.length === 4, { timeoutMs: PROCESS_BUDGET_MS });
      expect(lines[3]).toMatch(/^gateway\.yaml changed: configuration not reloaded: .*no longer has .*send SIGHUP to apply it/);
    } finally {
      stop();
    }
  });

  it('applies a watched change within about a second while another file of the folder is written all the time', async () => {
    // Its own folder: an audit log (or pins.json, which sits beside the configuration by design) appended to every 100 ms.
    const folder = mkdtempSync(join(dir, 'busy-'));
    const file = join(folder, 'gateway.yaml');
    const base = parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as { upstreams: Record<string, unknown>[] };
    const write = (anchors: string[]) => {
      writeFileSync(`${file}.new`, stringify({ ...base, reload: { watch: true }, upstreams: [{ ...base.upstreams[0], anchors }] }));
      renameSync(`${file}.new`, file);
    };
    write([]);
    const lines: string[] = [];
    const stop = driveReloads(stack.gateway, { load: () => load(file), path: file, config: load(file), report: (line) => lines.push(line) });
    const noise = setInterval(() => appendFileSync(join(folder, 'audit.jsonl'), '{}\n'), 100);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const changedAt = Date.now();
      write(['quote']);
      // A debounce restarted by every event of the folder never fired while the noise went on (never applied).
      await waitFor('the watched reload under noise', () => lines.length === 1, { timeoutMs: 3_000 });
      expect(lines[0]).toMatch(/^gateway\.yaml changed: configuration reloaded/);
      expect(Date.now() - changedAt).toBeLessThan(2_000);
    } finally {
      clearInterval(noise);
      stop();
    }
    await stack.gateway.reload(structuredClone(stack.config));
  });
});
