/**
 * `npm run bench`: the benchmark parts in turn (overhead, catalogue scale, compressed listings on a
 * constrained link, credentials at scale, soak, memory), each against locally started services on loopback, each bounded in time (see
 * bench/settings.ts for the knobs). Prints each part's markdown tables, then every target with
 * pass/miss; writes bench/results/<part>.json. Exits 1 when a part fails to run (a missed target is
 * reported, not an error). `npm run bench -- scale soak` runs only the parts named.
 */
import { runLink } from './constrained-link.ts';
import { runMemory } from './memory.ts';
import { runCredentials } from './credentials.ts';
import { runOverhead } from './overhead.ts';
import { machine, printOutcome, targetTable, type PartOutcome } from './results.ts';
import { runScale } from './scale.ts';
import { settings } from './settings.ts';
import { runSoak } from './soak.ts';

const PARTS: Record<string, () => Promise<PartOutcome>> = {
  overhead: runOverhead,
  scale: runScale,
  link: runLink,
  credentials: runCredentials,
  soak: runSoak,
  memory: runMemory,
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((name) => !(name in PARTS));
if (unknown.length) {
  console.error(`unknown part(s): ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}
const names = wanted.length ? wanted : Object.keys(PARTS);
const m = machine();
console.log(`# Benchmarks (${m.cpu}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; gateway log level ${settings.gatewayLogLevel})\n`);
const started = Date.now();
const outcomes: PartOutcome[] = [];
const failures: string[] = [];
for (const name of names) {
  const partStarted = Date.now();
  try {
    const outcome = await PARTS[name]!();
    outcomes.push(outcome);
    printOutcome(outcome);
  } catch (error) {
    failures.push(`${name}: ${(error as Error).stack ?? String(error)}`);
    console.error(`part ${name} failed: ${(error as Error).stack ?? String(error)}`);
  }
  process.stderr.write(`${name}: ${Math.round((Date.now() - partStarted) / 1000)} s\n`);
}
console.log(`## Targets\n\n${targetTable(outcomes.flatMap((o) => o.targets))}\n`);
console.log(
  `Total ${Math.round((Date.now() - started) / 1000)} s.${settings.cpuProfile ? ' CPU profiles: bench/results/profiles/.' : ' Rerun with BENCH_CPU_PROF=1 to profile the gateway (node --cpu-prof).'}`,
);
if (failures.length) {
  console.error(`\n${failures.length} part(s) failed:\n${failures.join('\n')}`);
  process.exit(1);
}
