/**
 * gateway/main.ts as a process: a bad configuration value stops it with exit status 2 and the key (or
 * GATEWAY_* variable) named on stderr. loadConfig itself is tested in tests/unit/config.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROCESS_BUDGET_MS } from '../../helpers/wait.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));

function yamlFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gateway-config-')), 'config.yaml');
  writeFileSync(path, text);
  return path;
}

async function exitOf(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ['--import', './scripts/register-ts.mjs', 'gateway/main.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH!, ...env },
      timeout: PROCESS_BUDGET_MS,
    });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('gateway/main.ts with a bad configuration', { timeout: PROCESS_BUDGET_MS + 10_000 }, () => {
  it('exits with status 2 naming the key when the YAML file has a wrong type', async () => {
    const path = yamlFile('upstreams:\n  - name: cpzai\n    url: http://127.0.0.1:1/mcp\nscopes:\n  timeoutMs: soon\n');
    const { code, stderr } = await exitOf(['--config', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('scopes.timeoutMs');
    expect(stderr).toContain('must be integer');
  });

  it('exits with status 2 naming the variable when an environment override is invalid', async () => {
    const { code, stderr } = await exitOf([], { GATEWAY_LISTEN_PORT: '70000' });
    expect(code).toBe(2);
    expect(stderr).toContain('listen.port');
    expect(stderr).toContain('GATEWAY_LISTEN_PORT');
  });

  it('exits with status 2 when an upstream has neither url nor command', async () => {
    const { code, stderr } = await exitOf(['--config', yamlFile('upstreams:\n  - name: cpzai\n')]);
    expect(code).toBe(2);
    expect(stderr).toContain('upstreams[0]');
  });
});
