/**
 * Loaded into a gateway process by a benchmark (`node --import ./scripts/register-ts.mjs --import ./bench/stall-probe.ts ...`, never by the
 * gateway itself): every event-loop turn that kept a 5 ms timer waiting more than STALL_PROBE_MIN_MS (default
 * 40) ms is appended to the file named by STALL_PROBE_FILE as one JSON line `{ from, to, wallMs, cpuMs }`: `from`/`to` in µs of
 * the monotonic clock (process.hrtime, the same in every process of the machine, so the benchmark
 * places them against its own marks), `cpuMs` the CPU time the process used meanwhile. On a machine
 * busy with other work the wall time of a stall is mostly waiting for a core; its CPU time is what
 * the same stall would take on an idle one (an upper bound: GC helper threads count too).
 */
import { appendFileSync } from 'node:fs';

const file = process.env.STALL_PROBE_FILE;
if (file) {
  const minMs = Number(process.env.STALL_PROBE_MIN_MS ?? 40);
  let last = process.hrtime.bigint();
  let cpu = process.cpuUsage();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const used = process.cpuUsage(cpu);
    const wallMs = Number(now - last) / 1e6;
    if (wallMs > minMs)
      appendFileSync(
        file,
        `${JSON.stringify({ from: Number(last / 1000n), to: Number(now / 1000n), wallMs: Math.round(wallMs * 10) / 10, cpuMs: Math.round((used.user + used.system) / 100) / 10 })}\n`,
      );
    last = now;
    cpu = process.cpuUsage();
  }, 5).unref();
}
