/**
 * Part 6, memory (`npm run bench:memory`): the gateway's RSS and heap (after a full GC) with the
 * 10,000-tool catalogue (BENCH_MEMORY_TOOLS) and 1,000 distinct credentials (BENCH_MEMORY_CREDENTIALS)
 * seen, against the target BENCH_MEMORY_RSS_TARGET_MIB (RSS at the end of the run, 384 MiB: half the Helm
 * chart's memory limit, the other half for a catalogue refresh built beside the served one and for peaks).
 *
 * Services: the versioned replay upstream (bench/versioned-replay.ts) serving the synthetic catalogue
 * and the scope stub (bench/scope-stub.ts: BENCH_SCOPE_SETS scope sets) in one process, the gateway in
 * another. Measured after: start (catalogue fetched), one tools/list per scope set (the listing cache
 * filled, bodies only counted), one search_tools (the index built), then per credential a tools/call
 * on /mcp and a search_tools on /mcp/compact (scope lookup, scope cache entry, rate budget, search
 * view), every answer checked.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replayTools } from '../upstream/replay/replay-tools.ts';
import { syntheticCatalog } from '../upstream/replay/synthetic-catalog.ts';
import { scrape, sampleSum } from './gateway-metrics.ts';
import { fmt, mib, MiB, printOutcome, table, targetTable, writeResult, type PartOutcome, type TargetCheck } from './results.ts';
import { rpcCall, sendCall, type RpcCall } from './rpc-requests.ts';
import { benchCredential } from './scope-stub.ts';
import { gatewaySpec, startServiceProcess, stopAll, waitReady, type MemorySample, type ServiceProcess } from './services.ts';
import { settings } from './settings.ts';

interface Stage {
  stage: string;
  memory: MemorySample;
}

/** Sends `calls` on `connections` concurrent loops; returns the answers that were not a correct 200 (with the first). */
async function sendAll(calls: readonly RpcCall[], connections: number, ok: (body: string) => boolean): Promise<{ wrong: number; first?: string }> {
  let next = 0;
  let wrong = 0;
  let first: string | undefined;
  const loop = async () => {
    while (next < calls.length) {
      const call = calls[next++]!;
      const { status, body } = await sendCall(call);
      if (status !== 200 || !ok(body)) {
        wrong++;
        first ??= `HTTP ${status} ${body.slice(0, 300)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return { wrong, first };
}

/** Reads a tools/list answer's bytes without parsing them (8 MiB at 10,000 tools). */
async function listBytes(call: RpcCall): Promise<number> {
  const response = await fetch(call.url, { method: call.method, headers: call.headers, body: call.body });
  const bytes = (await response.arrayBuffer()).byteLength;
  if (response.status !== 200) throw new Error(`tools/list: HTTP ${response.status}`);
  return bytes;
}

/** Runs the memory part and writes bench/results/memory.json. */
export async function runMemory(): Promise<PartOutcome> {
  const size = settings.memoryTools;
  const population = settings.memoryCredentials;
  const target = settings.memoryRssTargetMiB;
  // A tool whose input needs nothing: the call is checked, not its arguments.
  const tool = replayTools(syntheticCatalog(size)).find((t) => !(t.inputSchema as { required?: unknown[] }).required?.length);
  if (!tool) throw new Error('no tool without required arguments in the synthetic catalogue');
  const stages: Stage[] = [];
  let backends: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;
  const listed = { bytes: 0, sets: 0 };
  let failures: { wrong: number; first?: string } = { wrong: 0 };
  let metrics: { listingBytes: number; listingEntries: number } | undefined;
  try {
    backends = await startServiceProcess({ replay: { size }, scopeStub: { sets: settings.scopeSets } }, { name: `replay-stub-${size}` });
    gateway = await startServiceProcess(
      {
        gateway: gatewaySpec(backends.urls.replay!, backends.urls.scopeStub!, settings.gatewayLogLevel, {
          limits: { maxListPages: 1000 },
          upstreams: [{ name: 'replay' }],
          scopes: { ttlMs: 3_600_000 },
        }),
      },
      { name: `gateway-memory-${size}`, exposeGc: true },
    );
    const url = gateway.urls.gateway!;
    await waitReady(url, 180_000);
    const sample = async (stage: string) => stages.push({ stage, memory: await gateway!.memory(true) });
    await sample(`ready, ${size.toLocaleString('en-US')} tools fetched`);

    // One tools/list per scope set: credential n's set is a hash of n, so the first few hundred cover them all.
    const listers = Array.from({ length: Math.min(population, settings.scopeSets * 4) }, (_, n) => n);
    for (const n of listers) listed.bytes = Math.max(listed.bytes, await listBytes(rpcCall('modern', `${url}/mcp`, benchCredential(n), 'tools/list')));
    listed.sets = listers.length;
    await sample(`after tools/list by ${listers.length} credentials`);

    // The first search builds the index (with Chinese text, its glosses come from the CC-CEDICT gloss table, ~20 MB of heap while it is read).
    const search = (n: number) =>
      rpcCall('modern', `${url}/mcp/compact`, benchCredential(n), 'tools/call', { name: 'search_tools', arguments: { query: 'list open issues', limit: 5 } });
    const first = await sendAll([search(0)], 1, (body) => body.includes('"result"') && !body.includes('"isError":true'));
    if (first.wrong) throw new Error(`first search_tools: ${first.first}`);
    await sample('after the first search_tools (index built)');

    const calls = Array.from({ length: population }, (_, n) => [
      rpcCall(n % 2 ? 'legacy' : 'modern', `${url}/mcp`, benchCredential(n), 'tools/call', { name: tool.name, arguments: {} }),
      search(n),
    ]).flat();
    failures = await sendAll(calls, settings.connections, (body) => body.includes('"result"') && !body.includes('"isError":true'));
    await sample(`after tools/call and search_tools by ${population.toLocaleString('en-US')} credentials`);
    const m = (await scrape(url)) ?? '';
    metrics = {
      listingBytes: sampleSum(m, 'mcp_listing_cache_bytes'),
      listingEntries: sampleSum(m, 'mcp_listing_cache_entries'),
    };
  } finally {
    await stopAll([gateway, backends]);
  }
  const end = stages.at(-1)!.memory;
  const start = stages[0]!.memory;
  const perCredentialBytes = (end.heapUsed - stages.at(-2)!.memory.heapUsed) / population;
  const checks: TargetCheck[] = [
    {
      target: `gateway RSS <= ${target} MiB with ${size.toLocaleString('en-US')} tools and ${population.toLocaleString('en-US')} credentials`,
      measured: `${mib(end.rss)} MiB`,
      pass: end.rss <= target * MiB,
      note: end.rss <= target * MiB ? undefined : `over by ${mib(end.rss - target * MiB)} MiB`,
    },
    {
      target: 'every answer a correct HTTP 200',
      measured: failures.wrong ? `${failures.wrong} wrong of ${population * 2}` : `all ${population * 2}`,
      pass: failures.wrong === 0,
      note: failures.first,
    },
  ];
  const markdown = [
    `### Memory: ${size.toLocaleString('en-US')} tools, ${population.toLocaleString('en-US')} credentials`,
    '',
    table(
      ['stage', 'RSS MiB', 'heap after GC MiB', 'heap reserved MiB', 'external MiB'],
      stages.map((s) => [s.stage, mib(s.memory.rss), mib(s.memory.heapUsed), mib(s.memory.heapTotal), mib(s.memory.external)]),
    ),
    '',
    `- tools/list answer: ${mib(listed.bytes)} MiB; listing cache ${metrics ? `${mib(metrics.listingBytes)} MiB in ${metrics.listingEntries} entries` : 'n/a'}`,
    `- Heap per credential (tools/call + search_tools, after GC): ${fmt(perCredentialBytes / 1024)} KiB; RSS growth over the run ${mib(end.rss - start.rss)} MiB.`,
    '',
    targetTable(checks),
  ].join('\n');
  const path = writeResult('memory', {
    settings: { tools: size, credentials: population, scopeSets: settings.scopeSets, rssTargetMiB: target, connections: settings.connections },
    stages,
    listBytes: listed.bytes,
    metrics,
    perCredentialBytes,
    failures,
    targets: checks,
  });
  return { part: 'memory', markdown, targets: checks, path };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printOutcome(await runMemory());
}
