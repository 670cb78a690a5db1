/**
 * Entry point of one benchmark service process (forked by bench/services.ts with tsx loaded). It reads
 * its spec from BENCH_SERVICE (JSON, see {@link ServiceSpec}), starts what it names, reports the URLs
 * over IPC and then answers commands: `memory` (process.memoryUsage, after a full GC when the process
 * runs with --expose-gc and `gc` is set), `bump` (next catalogue version of the replay upstream),
 * `stats` (scope stub counters), `cpu` (process.cpuUsage, ms), `heapStart` / `heapStop` (what the V8 heap allocates
 * in between, by frame: the inspector's sampling heap profiler, collected objects included) and `stop` (close everything, then
 * exit 0 so --cpu-prof can write).
 */
import { Session } from 'node:inspector';
import { loadConfig } from '../config/load.ts';
import { startGateway } from '../gateway/gateway.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';
import { startBareProxy, startParsingRelay } from './bare-proxy.ts';
import { startScopeStub } from './scope-stub.ts';
import type { HeapAllocation, ServiceCommand, ServiceReply, ServiceSpec, ServiceUrls } from './services.ts';
import { startVersionedReplay } from './versioned-replay.ts';

const spec = JSON.parse(process.env.BENCH_SERVICE ?? '{}') as ServiceSpec;
const closers: (() => Promise<void>)[] = [];
const urls: ServiceUrls = {};
let replay: Awaited<ReturnType<typeof startVersionedReplay>> | undefined;
let stub: Awaited<ReturnType<typeof startScopeStub>> | undefined;

async function start(): Promise<void> {
  if (spec.reference) {
    const platform = await startPlatform({ port: 0 });
    closers.push(() => platform.close());
    const upstream = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
    closers.push(() => upstream.close());
    urls.platform = platform.url;
    urls.upstream = upstream.url;
  }
  if (spec.replay) {
    replay = await startVersionedReplay(spec.replay);
    closers.push(() => replay!.close());
    urls.replay = replay.url;
  }
  if (spec.scopeStub) {
    stub = await startScopeStub(spec.scopeStub);
    closers.push(() => stub!.close());
    urls.scopeStub = stub.url;
  }
  if (spec.bareProxy) {
    const proxy = await startBareProxy(spec.bareProxy);
    closers.push(() => proxy.close());
    urls.bareProxy = proxy.url;
  }
  if (spec.parsingRelay) {
    const relay = await startParsingRelay(spec.parsingRelay);
    closers.push(() => relay.close());
    urls.parsingRelay = relay.url;
  }
  if (spec.gateway) {
    const config = loadConfig({ env: {}, overrides: spec.gateway.overrides as never });
    if (spec.gateway.noScopeEndpoint) delete config.scopes.endpoint;
    const gateway = await startGateway(config);
    closers.push(() => gateway.close());
    urls.gateway = gateway.url;
  }
}

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= (async () => {
    for (const close of [...closers].reverse()) await close().catch(() => undefined);
  })();
  return stopping;
}

function memory(gc: boolean) {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (gc && collect) {
    collect();
    collect();
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, collected: Boolean(gc && collect) };
}

/** The inspector session of this process, connected on the first heap command. */
let inspector: Session | undefined;
function inspect<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
  if (!inspector) {
    inspector = new Session();
    inspector.connect();
  }
  const session = inspector as unknown as { post(method: string, params: object, done: (error: Error | null, result: unknown) => void): void };
  return new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** A sampling heap profile summed by allocating frame (our files by their path in the tree, packages by their own path). */
function allocationByFrame(head: SamplingNode): HeapAllocation {
  const frames = new Map<string, number>();
  let totalBytes = 0;
  const depth = Number(process.env.BENCH_HEAP_STACKS ?? 1);
  const pending: [SamplingNode, string[]][] = [[head, []]];
  while (pending.length > 0) {
    const [node, path] = pending.pop()!;
    totalBytes += node.selfSize;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.includes('/node_modules/')
      ? url.slice(url.lastIndexOf('/node_modules/') + 14)
      : url.replace(/^.*?\/(gateway|bench|search|upstream|config)\//, '$1/');
    const here = [`${functionName || '(anon)'} ${where}:${lineNumber + 1}`, ...path].slice(0, depth);
    if (node.selfSize > 0) {
      const key = here.join(' < ');
      frames.set(key, (frames.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) pending.push([child, here]);
  }
  return { totalBytes, byFrame: [...frames.entries()].sort((a, b) => b[1] - a[1]).slice(0, 200) };
}

process.on('message', (raw) => {
  const command = raw as ServiceCommand;
  const reply = (message: Omit<ServiceReply, 'id'>) => process.send!({ id: command.id, ...message });
  void (async () => {
    try {
      if (command.cmd === 'memory') return reply({ result: memory(command.gc === true) });
      if (command.cmd === 'bump') {
        if (!replay) throw new Error('no replay upstream in this process');
        return reply({ result: replay.bump() });
      }
      if (command.cmd === 'stats') return reply({ result: stub?.stats() ?? {} });
      if (command.cmd === 'cpu') {
        const { user, system } = process.cpuUsage();
        return reply({ result: (user + system) / 1000 });
      }
      if (command.cmd === 'heapStart') {
        await inspect('HeapProfiler.enable');
        await inspect('HeapProfiler.startSampling', {
          samplingInterval: Number(process.env.BENCH_HEAP_INTERVAL ?? 512),
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_SURVIVORS !== '1',
        });
        return reply({ result: 'sampling' });
      }
      if (command.cmd === 'heapStop') {
        const { profile } = await inspect<{ profile: { head: SamplingNode } }>('HeapProfiler.stopSampling');
        return reply({ result: allocationByFrame(profile.head) });
      }
      if (command.cmd === 'stop') {
        await stop();
        reply({ result: 'stopped' });
        process.disconnect();
        setImmediate(() => process.exit(0));
        return;
      }
      throw new Error(`unknown command ${JSON.stringify(command)}`);
    } catch (error) {
      reply({ error: (error as Error).message });
    }
  })();
});
process.on('disconnect', () => void stop().finally(() => process.exit(0)));

start().then(
  () => process.send!({ id: 0, result: urls }),
  (error: unknown) => {
    process.send!({ id: 0, error: (error as Error).stack ?? String(error) });
    void stop().finally(() => process.exit(1));
  },
);
