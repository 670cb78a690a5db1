/**
 * A stdio upstream that ignores its stdin's end (MCP basic/lifecycle §Shutdown) does not outlive the gateway:
 * a gateway stopped by SIGINT while a failed handshake's process is being stopped (its exit comes before that
 * stop's SIGTERM is due, so the exit's own SIGTERM ends it) leaves no process of it behind, where it was
 * reparented to init and left running.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PROCESS_BUDGET_MS, waitFor } from '../../helpers/wait.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;

/** Pids of live processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(marker) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // gone while read
    }
  }
  return pids;
}

describe('stdio upstream processes at the gateway exit', { timeout: PROCESS_BUDGET_MS + 30_000 }, () => {
  it('a server that ignores its stdin end is stopped when the gateway is stopped, also mid-handshake failure', async () => {
    const marker = `stdio-stop-${randomUUID()}`;
    const config = join(tmpdir(), `${marker}.yaml`);
    // Never answers the handshake (given up after 300 ms, then retried) and ignores its stdin's end and SIGHUP.
    writeFileSync(
      config,
      [
        'listen: { host: 127.0.0.1, port: 0 }',
        'anonymous: true',
        'scopes: {}',
        'upstreams:',
        '  - name: silent',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ["-e", "process.on('SIGHUP', () => {}); setInterval(() => {}, 1000)", ${JSON.stringify(marker)}]`,
        '    timeoutMs: 300',
      ].join('\n'),
    );
    const gateway = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', '--config', config], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    gateway.stdout.on('data', (chunk) => (output += chunk));
    gateway.stderr.on('data', (chunk) => (output += chunk));
    try {
      // A handshake given up on: its process is being stopped (stdin ended, SIGTERM due after the grace).
      await waitFor('a handshake given up on', () => output.includes('did not start serving'), { timeoutMs: PROCESS_BUDGET_MS });
      expect(processesWith(marker).length).toBeGreaterThan(0);
      gateway.kill('SIGINT');
      await once(gateway, 'exit');
      await waitFor('no process of the upstream left', () => processesWith(marker).length === 0, { timeoutMs: 5_000 });
    } finally {
      gateway.kill('SIGKILL');
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  });
});
