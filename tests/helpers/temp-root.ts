import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: every test run gets one temporary root, set as TMPDIR before the workers start
 * (they and the processes they spawn inherit it, and `os.tmpdir()` reads it on every call), and removed
 * when the run ends. Tests make their folders with `mkdtempSync(join(tmpdir(), ...))` and leave them:
 * runs used to leave hundreds of audit-*, chart-config-* and pins folders behind in /tmp.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'mcp-gateway-tests-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
