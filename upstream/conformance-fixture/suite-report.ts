/**
 * Judges the conformance suite's results against the expected-results file and prints the summary table.
 *
 * Input: a results root holding one folder per run, named `<target>__<revision>` (each the suite's
 * `-o` folder, with `server-<scenario>-<timestamp>/checks.json` per scenario), the suite's own
 * requirement sets (`requirements/<revision>.yaml` in the installed package: which scenarios a run
 * must contain) and `expected-results.yaml` (scenarios that fail or do not apply, with the reason).
 *
 * A scenario is `passed` (at least one SUCCESS check, no FAILURE), `failed` (any FAILURE) or
 * `not-applicable` (no SUCCESS and no FAILURE: the suite found nothing to check). The run fails
 * (exit 1) on: a failure not listed (regression), a listed scenario whose outcome changed (stale
 * entry: fix the file), an unlisted not-applicable scenario (nothing is skipped silently), or a
 * scenario of the requirement set with no result (not measured).
 *
 * CLI: `tsx upstream/conformance-fixture/suite-report.ts --results DIR --requirements DIR
 *       [--expected FILE] [--markdown FILE]`
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';

type Outcome = 'passed' | 'failed' | 'not-applicable';
interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}
interface Expectation {
  scenario?: string;
  scenarios?: string[];
  outcome: Exclude<Outcome, 'passed'>;
  targets?: string[];
  revisions?: string[];
  reason: string;
}
interface Requirements {
  server?: string[];
  not_scored?: { scenario: string; leg: string; reason: string }[];
}
interface ScenarioResult {
  scenario: string;
  scored: boolean;
  outcome: Outcome | 'not-measured';
  warnings: number;
  firstFailure?: string;
  verdict: Verdict;
  reason?: string;
}
type Verdict = 'ok' | 'expected' | 'regression' | 'stale' | 'unlisted' | 'not-measured';

const here = dirname(fileURLToPath(import.meta.url));
/** Table order; a target not named here sorts last. */
const TARGET_ORDER = ['fixture', 'upstream', 'gateway', 'gateway-compact'];

/** Outcome of one scenario from its checks (see the module docstring for the rule). */
export function scenarioOutcome(checks: Check[]): Outcome {
  if (checks.some((check) => check.status === 'FAILURE')) return 'failed';
  return checks.some((check) => check.status === 'SUCCESS') ? 'passed' : 'not-applicable';
}

function expectationFor(expected: Expectation[], scenario: string, target: string, revision: string): Expectation | undefined {
  return expected.find(
    (entry) =>
      (entry.scenario === scenario || entry.scenarios?.includes(scenario)) &&
      (entry.targets === undefined || entry.targets.includes(target)) &&
      (entry.revisions === undefined || entry.revisions.includes(revision)),
  );
}

function verdictOf(outcome: ScenarioResult['outcome'], expectation: Expectation | undefined): Verdict {
  if (outcome === 'not-measured') return 'not-measured';
  if (!expectation) return outcome === 'passed' ? 'ok' : outcome === 'failed' ? 'regression' : 'unlisted';
  return expectation.outcome === outcome ? 'expected' : 'stale';
}

/** The newest `server-<scenario>-<timestamp>` folder's checks, or undefined when the suite left none. */
function readChecks(runDir: string, scenario: string): Check[] | undefined {
  const stamp = /^\d{4}-\d{2}-\d{2}T/;
  const dirs = readdirSync(runDir)
    .filter((name) => name.startsWith(`server-${scenario}-`) && stamp.test(name.slice(`server-${scenario}-`.length)))
    .sort();
  const last = dirs.at(-1);
  if (!last) return undefined;
  // The suite makes the folder before running; no checks.json means the scenario threw (the suite counts it failed).
  if (!existsSync(join(runDir, last, 'checks.json')))
    return [{ id: 'scenario-error', status: 'FAILURE', errorMessage: 'the suite could not run the scenario; see its log' }];
  return JSON.parse(readFileSync(join(runDir, last, 'checks.json'), 'utf8')) as Check[];
}

/** A timeout in a failed check: the suite's scenario budget (`scenario-timeout`), or a request it aborted. */
const TIMED_OUT = /\babort(ed)?\b|timed? ?out|timeout/i;

/**
 * One line for a failed scenario: its first failed check, led by `TIMED OUT` when any failure is a timeout
 * (the suite's scenario budget is `--timeout`, CONFORMANCE_SCENARIO_TIMEOUT_MS in .ci/conformance.sh; its
 * own requests give up after 10 s), so that a slow machine is told apart from a wrong answer.
 */
export function failureSummary(failures: Check[]): string | undefined {
  const first = failures[0];
  if (!first) return undefined;
  const timeout = failures.find((check) => check.id === 'scenario-timeout' || TIMED_OUT.test(check.errorMessage ?? ''));
  const shown = timeout ?? first;
  const text = `${shown.id}: ${(shown.errorMessage ?? '').slice(0, 160)}`;
  return timeout ? `TIMED OUT (a slow machine, or no answer): ${text}` : text;
}

/** Judges one `<target>__<revision>` run folder. */
export function judgeRun(runDir: string, target: string, revision: string, requirements: Requirements, expected: Expectation[]): ScenarioResult[] {
  const scored = requirements.server ?? [];
  const unscored = (requirements.not_scored ?? []).filter((entry) => entry.leg === 'server').map((entry) => entry.scenario);
  return [...scored.map((s) => [s, true] as const), ...unscored.map((s) => [s, false] as const)].map(([scenario, isScored]) => {
    const checks = readChecks(runDir, scenario);
    const outcome = checks ? scenarioOutcome(checks) : 'not-measured';
    const expectation = expectationFor(expected, scenario, target, revision);
    const failures = checks?.filter((check) => check.status === 'FAILURE') ?? [];
    return {
      scenario,
      scored: isScored,
      outcome,
      warnings: checks?.filter((check) => check.status === 'WARNING').length ?? 0,
      firstFailure: failureSummary(failures),
      verdict: verdictOf(outcome, expectation),
      reason: expectation?.reason,
    };
  });
}

function count(results: ScenarioResult[], outcome: ScenarioResult['outcome']): number {
  return results.filter((result) => result.outcome === outcome).length;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      results: { type: 'string' },
      requirements: { type: 'string' },
      expected: { type: 'string', default: join(here, 'expected-results.yaml') },
      markdown: { type: 'string' },
    },
  });
  if (!values.results || !values.requirements) {
    console.error('suite-report: --results DIR and --requirements DIR are required');
    process.exit(2);
  }
  const expected = (parseYaml(readFileSync(values.expected!, 'utf8')) as { expected?: Expectation[] }).expected ?? [];
  const order = (run: string) => [TARGET_ORDER.indexOf(run.split('__')[0]!) >>> 0, run] as const;
  const runs = readdirSync(values.results)
    .filter((name) => name.includes('__'))
    .sort((a, b) => order(a)[0] - order(b)[0] || a.localeCompare(b));
  if (runs.length === 0) {
    console.error(`suite-report: no <target>__<revision> folders in ${values.results}`);
    process.exit(1);
  }
  const rows: string[][] = [];
  const problems: string[] = [];
  for (const run of runs) {
    const [target, revision] = run.split('__') as [string, string];
    const requirements = parseYaml(readFileSync(join(values.requirements, `${revision}.yaml`), 'utf8')) as Requirements;
    const results = judgeRun(join(values.results, run), target, revision, requirements, expected);
    const required = results.filter((result) => result.scored);
    rows.push([
      target,
      revision,
      String(count(results, 'passed')),
      String(count(results, 'failed')),
      String(count(results, 'not-applicable')),
      `${count(required, 'passed')}/${required.length}`,
      String(results.filter((result) => result.verdict !== 'ok' && result.verdict !== 'expected').length),
    ]);
    for (const result of results) {
      if (result.verdict === 'ok' || result.verdict === 'expected') continue;
      const detail =
        result.verdict === 'stale'
          ? `now ${result.outcome}; expected-results.yaml says otherwise (${result.reason})`
          : result.verdict === 'unlisted'
            ? 'no check applied and the scenario is not listed in expected-results.yaml'
            : result.verdict === 'not-measured'
              ? 'no result folder: the suite did not run it'
              : (result.firstFailure ?? 'failed');
      problems.push(`${result.verdict.toUpperCase()} ${target} ${revision} ${result.scenario}: ${detail}`);
    }
  }
  const header = ['target', 'revision', 'passed', 'failed', 'not-applicable', 'required passed', 'unexpected'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  console.log('\nConformance summary: server scenarios per run; failed and not-applicable include those listed in expected-results.yaml;');
  console.log('unexpected = regressions, stale entries, unlisted not-applicable and unmeasured scenarios (must be 0)');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  if (values.markdown) {
    const md = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
    writeFileSync(values.markdown, `${md.join('\n')}\n`);
  }
  if (problems.length > 0) {
    console.log(`\n${problems.length} problem(s):`);
    for (const problem of problems) console.log(`  ${problem}`);
    process.exit(1);
  }
  console.log('\nEvery scenario passed or matched its expected-results.yaml entry.');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
