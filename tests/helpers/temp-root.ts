import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: a test run gets one temporary root, set as TMPDIR before the workers start (they
 * and the processes they spawn inherit it, and `os.tmpdir()` reads it on every call), removed when the
 * run's process exits. Tests make their folders with `mkdtempSync(join(tmpdir(), ...))` and leave them:
 * runs used to leave hundreds of audit-*, chart-config-* and pins folders behind in /tmp.
 *
 * Every project runs the global setup of its own, and a project's teardown can come while another's
 * tests still run: so the first creates the root, the others find it (MCP_GATEWAY_TESTS_TMPDIR), nothing
 * is restored, and the root goes at exit only (a teardown that removed it, or set TMPDIR back, failed
 * every later worker that made a folder: CLI and browser suites exited at once).
 */
export default function setup(): void {
  if (process.env.MCP_GATEWAY_TESTS_TMPDIR) return;
  const root = mkdtempSync(join(tmpdir(), 'mcp-gateway-tests-'));
  process.env.MCP_GATEWAY_TESTS_TMPDIR = root;
  process.env.TMPDIR = root;
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
}
