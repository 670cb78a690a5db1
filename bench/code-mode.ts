/**
 * Code mode's cost and saving, in process (`npm run bench:code-mode`): the reference stack's platform
 * and CPZAI upstream on loopback, the gateway built with createRuntime (tests/helpers/in-process.ts)
 * and asked through `runtime.fetch(Request)` as a 2026-07-28 client asks on the wire, with the data key.
 *
 * 1. Bytes: a 4-step read task (five of the first account's positions with their last price and the volume of
 *    their last daily bar: list_accounts, list_positions, get_market_data, get_bars) done as a client
 *    without code mode does it (the anchors called directly, get_bars through call_tool; every result
 *    read by the model) and as one run_code. Counted: the JSON-RPC request and response bodies (what
 *    passes through the model's context, give or take the client's framing). Both answers are checked
 *    equal. The listing's share is printed too: run_code's definition, which every tools/list carries.
 * 2. Overhead: a run with one inner call (`return await tools.get_bars(...)`) against the same call
 *    through call_tool, interleaved A/B for `--rounds`, medians and their ratio. Absolute times on a
 *    shared machine are noise: the ratio is the figure, and the load average is printed beside it.
 * Writes bench/results/code-mode.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { codeModeStack } from './code-mode-stack.ts';
import { DATA_KEY, rpc } from '../tests/helpers/raw-mcp.ts';
import { FOUR_STEP_SCRIPT, fourStepsOneByOne, type TaskRow } from '../tests/fixtures/code-mode-task.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);

const stack = await codeModeStack();
const { gateway } = stack;

interface Exchange {
  requestBytes: number;
  responseBytes: number;
  result: { structuredContent?: unknown; content?: { text?: string }[]; isError?: boolean };
}

let nextId = 1;
/** One JSON-RPC request to /mcp/compact, as the client sends it; its body bytes both ways. */
async function ask(method: string, params: Record<string, unknown>): Promise<Exchange> {
  const { headers, body } = rpc('modern', nextId++, method, params);
  const sent = JSON.stringify(body);
  const response = await gateway.fetch(new Request(`${gateway.gatewayUrl}/mcp/compact`, { method: 'POST', headers: { ...headers, ...DATA_KEY }, body: sent }));
  const text = await response.text();
  const answer = JSON.parse(text) as { result?: Exchange['result']; error?: unknown };
  if (!answer.result) throw new Error(`${method} ${JSON.stringify(params).slice(0, 80)}: ${text.slice(0, 300)}`);
  return { requestBytes: Buffer.byteLength(sent), responseBytes: Buffer.byteLength(text), result: answer.result };
}

const call = (name: string, args: Record<string, unknown>) => ask('tools/call', { name, arguments: args });
/** A tool result's value: its structured content, else its text as JSON. */
function resultValue<T>(e: Exchange): T {
  if (e.result.isError) throw new Error(`isError: ${e.result.content?.[0]?.text ?? ''}`);
  return (e.result.structuredContent ?? JSON.parse(e.result.content?.[0]?.text ?? 'null')) as T;
}

/** The task without code mode: four calls, every result read whole by the model. */
async function withoutCodeMode(): Promise<{ exchanges: Exchange[]; answer: TaskRow[] }> {
  const exchanges: Exchange[] = [];
  const answer = await fourStepsOneByOne(async (name, args) => {
    const exchange = await call(name, args);
    exchanges.push(exchange);
    return resultValue(exchange);
  });
  return { exchanges, answer };
}

async function withCodeMode(): Promise<{ exchange: Exchange; answer: TaskRow[] }> {
  const exchange = await ask('tools/call', { name: 'run_code', arguments: { code: FOUR_STEP_SCRIPT } });
  return { exchange, answer: resultValue<{ result: TaskRow[] }>(exchange).result };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

try {
  const load = loadavg().map((l) => l.toFixed(2));
  // Warm: catalogue, search index, sandbox workers, the upstream's connections.
  await withoutCodeMode();
  await withCodeMode();

  const plain = await withoutCodeMode();
  const code = await withCodeMode();
  if (JSON.stringify(plain.answer) !== JSON.stringify(code.answer))
    throw new Error(`the two ways answer differently:\n${JSON.stringify(plain.answer)}\n${JSON.stringify(code.answer)}`);
  const plainBytes = { requests: sum(plain.exchanges.map((e) => e.requestBytes)), responses: sum(plain.exchanges.map((e) => e.responseBytes)) };
  const codeBytes = { requests: code.exchange.requestBytes, responses: code.exchange.responseBytes };
  const plainTotal = plainBytes.requests + plainBytes.responses;
  const codeTotal = codeBytes.requests + codeBytes.responses;
  const listing = (await ask('tools/list', {})).result as unknown as { tools: { name: string }[] };
  const runCodeBytes = Buffer.byteLength(JSON.stringify(listing.tools.find((t) => t.name === 'run_code')));
  const listBytes = Buffer.byteLength(JSON.stringify(listing));

  // Overhead: one inner call vs the same call_tool, interleaved.
  const symbols = plain.answer.map((r) => r.symbol).slice(0, 1);
  const args = { symbols, limit: 1 };
  const one = `return await tools.get_bars(${JSON.stringify(args)});`;
  const viaCallTool: number[] = [];
  const viaRunCode: number[] = [];
  const timed = async (times: number[], name: string, callArgs: Record<string, unknown>) => {
    const started = performance.now();
    const e = await call(name, callArgs);
    times.push(performance.now() - started);
    resultValue(e);
  };
  const a = () => timed(viaCallTool, 'call_tool', { name: 'get_bars', arguments: args });
  const b = () => timed(viaRunCode, 'run_code', { code: one });
  // Interleaved, the order alternating, so drift and load fall on both alike.
  for (let i = 0; i < rounds; i++) {
    if (i % 2) await a().then(b);
    else await b().then(a);
  }
  const overhead = { callToolMs: median(viaCallTool), runCodeMs: median(viaRunCode) };
  const results = {
    part: 'code-mode',
    date: new Date().toISOString(),
    loadavg: load,
    task: 'first account: 5 positions with last price and last daily volume (list_accounts, list_positions, get_market_data, get_bars)',
    positions: plain.answer.length,
    bytes: {
      withoutCodeMode: { ...plainBytes, total: plainTotal, calls: 4 },
      runCode: { ...codeBytes, total: codeTotal, calls: 1 },
      ratio: codeTotal / plainTotal,
      runCodeDefinition: runCodeBytes,
      compactToolsList: listBytes,
    },
    overhead: { rounds, ...overhead, ratio: overhead.runCodeMs / overhead.callToolMs },
  };
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(`load average ${load.join(' ')}`);
  console.log(`4-step task (${plain.answer.length} positions), bytes through the client (requests + responses):`);
  console.log(`  without code mode, 4 calls: ${plainBytes.requests} + ${plainBytes.responses} = ${plainTotal}`);
  console.log(
    `  one run_code:               ${codeBytes.requests} + ${codeBytes.responses} = ${codeTotal}  (${pct(codeTotal / plainTotal)}, ${(plainTotal / codeTotal).toFixed(1)}x fewer)`,
  );
  console.log(`  run_code's definition in every /mcp/compact tools/list: ${runCodeBytes} of ${listBytes} bytes`);
  console.log(
    `run overhead, one inner get_bars vs the same call_tool (median of ${rounds} interleaved): ${(overhead.runCodeMs / overhead.callToolMs).toFixed(2)}x`,
  );
  const out = resolve(import.meta.dirname, 'results/code-mode.json');
  mkdirSync(resolve(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 1)}\n`);
  console.log('wrote bench/results/code-mode.json');
} finally {
  await stack.close();
}
