/**
 * Benchmark output: bench/results/<part>.json (figures, settings, the machine) and markdown tables
 * on stdout; the published targets with pass/miss.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release, platform } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RESULTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), 'results');

/** The machine the figures come from. */
export function machine() {
  const list = cpus();
  return {
    cpu: `${list.length} x ${list[0]?.model.trim() ?? 'unknown'}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
  };
}

/** One published target, measured. */
export interface TargetCheck {
  target: string;
  measured: string;
  pass: boolean;
  /** By how much it was missed, or what else to know. */
  note?: string;
}

/** Writes bench/results/<part>.json and returns its path. */
export function writeResult(part: string, data: Record<string, unknown>): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = resolve(RESULTS_DIR, `${part}.json`);
  writeFileSync(path, `${JSON.stringify({ part, date: new Date().toISOString(), machine: machine(), ...data }, null, 2)}\n`);
  return path;
}

/** A markdown table; numeric-looking columns are right-aligned. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+( ?[a-zA-Z%x]+)?$|^-$|^n\/a$/.test(String(r[i] ?? ''))));
  const line = (cells: (string | number)[]) => `| ${cells.map(String).join(' | ')} |`;
  return [line(headers), line(headers.map((_, i) => (numeric[i] ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

export function targetTable(checks: readonly TargetCheck[]): string {
  return table(
    ['target', 'measured', 'result', 'note'],
    checks.map((c) => [c.target, c.measured, c.pass ? 'pass' : '**miss**', c.note ?? '']),
  );
}

/** A number for tables: `digits` decimals below 100, grouped integers from 100 up; n/a when not finite. */
export function fmt(value: number | undefined, digits = 2): string {
  if (value === undefined || !Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}

export const MiB = 2 ** 20;
export const mib = (bytes: number) => fmt(bytes / MiB, 1);

/** What a part hands back to bench/run.ts: its markdown, its targets and where its JSON went. */
export interface PartOutcome {
  part: string;
  markdown: string;
  targets: TargetCheck[];
  path: string;
}

/** Prints a part's markdown and the path of its JSON. */
export function printOutcome(outcome: PartOutcome): void {
  console.log(`${outcome.markdown}\n\n(results: ${outcome.path})\n`);
}
