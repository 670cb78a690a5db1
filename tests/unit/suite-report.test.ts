/**
 * How .ci/conformance.sh judges the conformance suite's results (upstream/conformance-fixture/suite-report.ts):
 * a regression, a stale expected entry, an unlisted not-applicable scenario and a missing result all fail.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failureSummary, judgeRun, scenarioOutcome } from '../../upstream/conformance-fixture/suite-report.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runFolder(results: Record<string, string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'suite-report-'));
  dirs.push(dir);
  for (const [scenario, statuses] of Object.entries(results)) {
    const folder = join(dir, `server-${scenario}-2026-11-30T10-00-00-000Z`);
    mkdirSync(folder);
    writeFileSync(join(folder, 'checks.json'), JSON.stringify(statuses.map((status, i) => ({ id: `check-${i}`, status }))));
  }
  return dir;
}

describe('scenarioOutcome', () => {
  it('is failed on any FAILURE, passed on a SUCCESS without failures, else not-applicable', () => {
    expect(
      scenarioOutcome([
        { id: 'a', status: 'SUCCESS' },
        { id: 'b', status: 'FAILURE' },
      ]),
    ).toBe('failed');
    expect(
      scenarioOutcome([
        { id: 'a', status: 'SUCCESS' },
        { id: 'b', status: 'WARNING' },
      ]),
    ).toBe('passed');
    expect(
      scenarioOutcome([
        { id: 'a', status: 'INFO' },
        { id: 'b', status: 'SKIPPED' },
      ]),
    ).toBe('not-applicable');
  });
});

describe('judgeRun', () => {
  const requirements = {
    server: ['ok-one', 'broken', 'known-bad', 'fixed', 'empty', 'missing'],
    not_scored: [{ scenario: 'ext', leg: 'server', reason: 'extension' }],
  };
  const expected = [
    { scenario: 'known-bad', outcome: 'failed' as const, reason: 'not built' },
    { scenario: 'fixed', outcome: 'failed' as const, reason: 'was broken' },
    { scenario: 'ext', outcome: 'not-applicable' as const, revisions: ['2026-07-28'], reason: 'skipped by the suite' },
  ];

  it('gives each scenario its verdict against the expected-results entries', () => {
    const dir = runFolder({
      'ok-one': ['SUCCESS'],
      broken: ['SUCCESS', 'FAILURE'],
      'known-bad': ['FAILURE'],
      fixed: ['SUCCESS'],
      empty: ['INFO'],
      ext: ['SKIPPED'],
    });
    const verdicts = Object.fromEntries(judgeRun(dir, 'gateway', '2026-07-28', requirements, expected).map((r) => [r.scenario, r.verdict]));
    expect(verdicts).toEqual({
      'ok-one': 'ok',
      broken: 'regression',
      'known-bad': 'expected',
      fixed: 'stale',
      empty: 'unlisted',
      missing: 'not-measured',
      ext: 'expected',
    });
  });

  it('applies an entry only to the revisions and targets it names', () => {
    const dir = runFolder({ ext: ['SKIPPED'] });
    const [ext] = judgeRun(dir, 'gateway', '2025-11-25', { not_scored: requirements.not_scored }, expected);
    expect(ext?.verdict).toBe('unlisted');
  });
});

describe('a scenario the suite could not run', () => {
  it('counts as failed when its folder has no checks.json', () => {
    const dir = runFolder({});
    mkdirSync(join(dir, 'server-crashed-2026-11-30T10-00-00-000Z'));
    const [crashed] = judgeRun(dir, 'gateway', '2026-07-28', { server: ['crashed'] }, []);
    expect(crashed?.outcome).toBe('failed');
    expect(crashed?.verdict).toBe('regression');
  });
});

describe('a timed-out scenario', () => {
  it('says it timed out, whether the scenario budget ran out or a request of the suite was aborted', () => {
    const budget = {
      id: 'scenario-timeout',
      status: 'FAILURE',
      errorMessage:
        "Scenario 'tools-call-simple-text' did not complete within 10000ms. The server under test accepted the connection but did not finish the exchange.",
    };
    expect(failureSummary([{ id: 'some-check', status: 'FAILURE', errorMessage: 'expected 1 tool' }, budget])).toBe(
      `TIMED OUT (a slow machine, or no answer): scenario-timeout: ${budget.errorMessage.slice(0, 160)}`,
    );
    expect(failureSummary([{ id: 'server-discover', status: 'FAILURE', errorMessage: 'This operation was aborted' }])).toBe(
      'TIMED OUT (a slow machine, or no answer): server-discover: This operation was aborted',
    );
  });

  it('is not called a timeout when no failure is one', () => {
    expect(failureSummary([{ id: 'tool-result', status: 'FAILURE', errorMessage: 'expected isError' }])).toBe('tool-result: expected isError');
    expect(failureSummary([])).toBeUndefined();
  });
});
