/**
 * How long large tool arguments built inside a run_code script hold the gateway's event loop
 * (`npx tsx bench/argument-stall.ts`, optionally under `node --cpu-prof`): the reference stack's platform
 * and CPZAI upstream on loopback, the gateway in process (tests/helpers/in-process.ts), asked with the data key.
 *
 * 1. The try-out's repro: one run_code whose script makes 20 concurrent `tools.get_bars({ symbols: a })`
 *    calls with a 400,000-element array `a`; the event loop's longest delay while it runs
 *    (the longest gap between turns of a 1 ms interval), the run's wall time and what the calls threw.
 * 2. The same array sent directly through call_tool in one HTTP body (over limits.bodyBytes: refused at the
 *    edge) and a 200,000-element one within it; the longest delay of each.
 * 3. Main-thread time per array element of one call_tool with N elements (N = 100,000 and 10,000 under
 *    limits.arrayLength), in µs: the slope between the two.
 * `--audit`: with the audit trail on (to .tmp/audit/argument-stall.log), which digests every decision's arguments.
 * Absolute times on a shared machine are noise; the load average is printed beside them.
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { codeModeStack } from './code-mode-stack.ts';
import { DATA_KEY, rpc } from '../tests/helpers/raw-mcp.ts';

const { values } = parseArgs({ options: { audit: { type: 'boolean', default: false } } });
if (values.audit) mkdirSync('.tmp/audit', { recursive: true });
const stack = await codeModeStack(values.audit ? { audit: { destination: '.tmp/audit/argument-stall.log', digestKey: 'argument-stall-bench-key-0123' } } : {});
const { gateway } = stack;

let nextId = 1;
/** One JSON-RPC tools/call to /mcp/compact; its HTTP status and the result's text (or the error's message). */
async function call(name: string, args: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const { headers, body } = rpc('modern', nextId++, 'tools/call', { name, arguments: args });
  const response = await gateway.fetch(
    new Request(`${gateway.gatewayUrl}/mcp/compact`, { method: 'POST', headers: { ...headers, ...DATA_KEY }, body: JSON.stringify(body) }),
  );
  const answer = (await response.json().catch(() => ({}))) as { result?: { content?: { text?: string }[] }; error?: { message?: string } };
  return { status: response.status, text: answer.result?.content?.[0]?.text ?? answer.error?.message ?? '' };
}

/**
 * `work()`'s wall time and the event loop's longest stall meanwhile, ms: the longest gap between turns of a
 * 1 ms interval (its own 1 ms taken off), the last one up to when `work()` settled included.
 */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; wallMs: number; maxDelayMs: number }> {
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
  }, 1);
  const started = performance.now();
  const value = await work();
  const ended = performance.now();
  clearInterval(tick);
  longest = Math.max(longest, ended - last - 1);
  return { value, wallMs: ended - started, maxDelayMs: longest };
}

const REPRO = `const a = Array(400000).fill(0);
await Promise.all(Array.from({ length: 20 }, () => tools.get_bars({ symbols: a }).catch((e) => e.kind)));
return 'done';`;
const REPRO_KINDS = `const a = Array(400000).fill(0);
return await Promise.all(Array.from({ length: 20 }, () => tools.get_bars({ symbols: a }).catch((e) => e.kind + ': ' + e.message.slice(0, 160))));`;

const fmt = (n: number) => n.toFixed(1);
try {
  console.log(
    `audit ${values.audit ? 'on' : 'off'}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  // Warm: catalogue, sandbox workers, the upstream's connections.
  await call('call_tool', { name: 'get_bars', arguments: { symbols: ['AAPL'], limit: 1 } });
  await call('run_code', { code: 'return 1' });

  const kinds = await call('run_code', { code: REPRO_KINDS });
  console.log(`repro, what the 20 calls threw: ${kinds.text.slice(0, 400)}`);
  for (let i = 0; i < 3; i++) {
    const repro = await measured(() => call('run_code', { code: REPRO }));
    console.log(`repro run ${i + 1}: longest event-loop delay ${fmt(repro.maxDelayMs)} ms, run ${fmt(repro.wallMs)} ms: ${repro.value.text.slice(0, 80)}`);
  }

  for (const n of [400_000, 200_000]) {
    const direct = await measured(() => call('call_tool', { name: 'get_bars', arguments: { symbols: Array(n).fill(0) } }));
    console.log(
      `call_tool with ${n} elements (${JSON.stringify(Array(n).fill(0)).length} bytes): longest delay ${fmt(direct.maxDelayMs)} ms, ${direct.value.status}: ${direct.value.text.slice(0, 100)}`,
    );
  }

  const per: Record<number, number> = {};
  for (const n of [100_000, 10_001]) {
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const args = { name: 'get_bars', arguments: { symbols: Array(n).fill(0) } };
      const cpu = process.cpuUsage();
      await call('call_tool', args);
      const used = process.cpuUsage(cpu);
      times.push((used.user + used.system) / 1000);
    }
    times.sort((a, b) => a - b);
    per[n] = times[3]!;
    console.log(`call_tool with ${n} elements: median CPU ${fmt(per[n]!)} ms`);
  }
  console.log(
    `per element: ${((1000 * (per[100_000]! - per[10_001]!)) / (100_000 - 10_001)).toFixed(3)} µs of this thread (CPU, JSON parse and serialise of the body included)`,
  );
} finally {
  await stack.close();
}
