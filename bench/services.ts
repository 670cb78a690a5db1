/**
 * Benchmark services in their own processes. The load generator (autocannon) runs in the bench
 * process; the services under test run in child processes (`node --import tsx bench/service-process.ts`),
 * so that on a small machine the generator's CPU is not charged to the gateway's event loop and each
 * service's memory is measured alone. Typical layout: one "backends" process (platform + reference
 * upstream, or replay upstream, or scope stub) and one gateway process.
 */
import { openSync } from 'node:fs';
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeepPartial, GatewayConfig } from '../config/load.ts';
import type { ScopeStubOptions } from './scope-stub.ts';
import type { VersionedReplayOptions } from './versioned-replay.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const PROFILE_DIR = resolve(here, 'results/profiles');

/** What one service process starts (any combination; the gateway last, after its backends). */
export interface ServiceSpec {
  /** Platform API + reference CPZAI upstream. */
  reference?: boolean;
  /** Synthetic replay upstream whose catalogue version can be bumped. */
  replay?: VersionedReplayOptions;
  /** Scope endpoint stub for many credentials. */
  scopeStub?: ScopeStubOptions;
  /** Gateway: config/cpzai.yaml with these overrides, environment ignored. */
  gateway?: { overrides: DeepPartial<GatewayConfig>; noScopeEndpoint?: boolean };
  /** A bare byte-relaying proxy (bare-proxy.ts) in front of this MCP URL. */
  bareProxy?: string;
  /** A relay that parses and re-serialises both messages (bare-proxy.ts `startParsingRelay`) in front of this MCP URL. */
  parsingRelay?: string;
}

export interface ServiceUrls {
  platform?: string;
  upstream?: string;
  replay?: string;
  scopeStub?: string;
  gateway?: string;
  /** The bare proxy's MCP URL. */
  bareProxy?: string;
  /** The parsing relay's MCP URL. */
  parsingRelay?: string;
}

export type ServiceCommand = { id: number; cmd: 'memory'; gc?: boolean } | { id: number; cmd: 'bump' | 'stats' | 'cpu' | 'stop' | 'heapStart' | 'heapStop' };

/** Bytes the V8 heap allocated while sampling (HeapProfiler sampling, collected objects included), in total and by allocating frame. */
export interface HeapAllocation {
  totalBytes: number;
  /** `function file:line` and its bytes, largest first (the 200 largest). */
  byFrame: [string, number][];
}
export interface ServiceReply {
  id: number;
  result?: unknown;
  error?: string;
}

/** process.memoryUsage() of a service process, bytes. */
export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Whether a full GC ran first (the process has --expose-gc). */
  collected: boolean;
}

export interface ServiceProcess {
  readonly urls: ServiceUrls;
  readonly pid: number;
  /** The main thread's CPU profile, once the process has exited (with `cpuProfile`). */
  readonly profilePath?: string;
  /** Memory of the process; `gc` runs a full collection first (heap after GC is what stays). */
  memory(gc?: boolean): Promise<MemorySample>;
  /** Replay upstream: serve the next catalogue version; resolves with its marker word. */
  bump(): Promise<{ version: number; marker: string }>;
  /** Scope stub counters. */
  stats(): Promise<{ requests: number; distinct: number }>;
  /** CPU time the process has used so far (user + system, all threads), ms: process.cpuUsage(). */
  cpuMs(): Promise<number>;
  /** Starts sampling what the V8 heap allocates (every 512 bytes on average, objects the GC collected included). */
  heapStart(): Promise<void>;
  /** Stops sampling: what was allocated since {@link heapStart}, by frame. */
  heapStop(): Promise<HeapAllocation>;
  /** Closes the services and waits for the process to exit (profiles are written on exit). */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  /** Label of the process (profile file names). */
  name: string;
  /** Start with --expose-gc so memory samples can follow a full GC. */
  exposeGc?: boolean;
  /** Start under --cpu-prof; the profile lands in bench/results/profiles/<name>-*.cpuprofile. */
  cpuProfile?: boolean;
  /** Another checkout of this project whose bench/service-process.ts starts the services (bench/trees.ts: an older commit's gateway). */
  root?: string;
  /** Extra Node/V8 flags of this process (bench/trees.ts BENCH_TREES_AFTER_FLAGS: the same tree under other flags). */
  nodeFlags?: readonly string[];
}

const START_TIMEOUT_MS = 60_000;
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * Forks a service process and resolves once everything in `spec` listens.
 * @throws Error with the child's stack when start-up fails, or after 60 s.
 */
export async function startServiceProcess(spec: ServiceSpec, options: ServiceOptions): Promise<ServiceProcess> {
  // As deployed (npm start, the image): the project's own TypeScript loader; tsx for a tree from before it (bench:trees).
  const loader = resolve(options.root ?? resolve(here, '..'), 'scripts/register-ts.mjs');
  const execArgv = ['--import', existsSync(loader) ? loader : 'tsx'];
  if (options.exposeGc) execArgv.push('--expose-gc');
  if (options.nodeFlags) execArgv.push(...options.nodeFlags);
  // One directory per process: V8 writes a profile per thread (tsx's loader runs in a worker), named by pid and thread.
  const profileDir = resolve(PROFILE_DIR, `${options.name}-${Date.now()}`);
  if (options.cpuProfile) {
    mkdirSync(profileDir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  }
  const child = fork(options.root ? resolve(options.root, 'bench/service-process.ts') : resolve(here, 'service-process.ts'), [], {
    execArgv,
    env: { ...process.env, BENCH_SERVICE: JSON.stringify(spec) },
    // The gateway's JSON log goes to /dev/null (written as deployed, never read); errors stay visible.
    stdio: ['ignore', process.env.BENCH_CHILD_STDOUT && options.nodeFlags?.length ? openSync(process.env.BENCH_CHILD_STDOUT, 'w') : 'ignore', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  let nextId = 1;
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  child.on('message', (raw) => {
    const reply = raw as ServiceReply;
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    clearTimeout(waiter.timer);
    if (reply.error) waiter.reject(new Error(`${options.name}: ${reply.error}`));
    else waiter.resolve(reply.result);
  });
  void exited.then((code) => {
    for (const [, waiter] of pending) waiter.reject(new Error(`${options.name} exited with code ${code}`));
    pending.clear();
  });
  const expect = <T>(id: number, timeoutMs: number): Promise<T> =>
    new Promise<T>((resolveReply, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${options.name}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve: resolveReply as (value: unknown) => void, reject, timer });
    });
  const send = <T>(command: { cmd: ServiceCommand['cmd']; gc?: boolean }): Promise<T> => {
    const id = nextId++;
    const answer = expect<T>(id, COMMAND_TIMEOUT_MS);
    child.send({ ...command, id });
    return answer;
  };

  let urls: ServiceUrls;
  try {
    urls = await expect<ServiceUrls>(0, START_TIMEOUT_MS);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    urls,
    pid: child.pid!,
    get profilePath() {
      return options.cpuProfile ? mainThreadProfile(profileDir) : undefined;
    },
    memory: (gc = false) => send<MemorySample>({ cmd: 'memory', gc }),
    bump: () => send({ cmd: 'bump' }),
    stats: () => send({ cmd: 'stats' }),
    cpuMs: () => send<number>({ cmd: 'cpu' }),
    heapStart: () => send<void>({ cmd: 'heapStart' }),
    heapStop: () => send<HeapAllocation>({ cmd: 'heapStop' }),
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode !== null) return;
        try {
          await send({ cmd: 'stop' });
        } catch {
          child.kill('SIGTERM');
        }
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      })()),
  };
}

/** The largest .cpuprofile in `dir`: the main thread's (the loader worker's is small). */
function mainThreadProfile(dir: string): string | undefined {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => resolve(dir, f));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/** Stops every process given, in order, even when one fails. */
export async function stopAll(processes: (ServiceProcess | undefined)[]): Promise<void> {
  for (const p of processes) await p?.stop().catch(() => undefined);
}

/**
 * Waits until the gateway at `baseUrl` answers GET /readyz with 200 (its catalogue is fetched).
 * @throws Error with the last answer after `timeoutMs`.
 */
export async function waitReady(baseUrl: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.ok) return;
      last = `${response.status} ${await response.text()}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway at ${baseUrl} not ready within ${timeoutMs} ms: ${last}`);
}

/**
 * The gateway of a benchmark: config/cpzai.yaml (environment ignored) on a free loopback port, in
 * front of `upstreamUrl`, scopes from `scopeEndpoint` (none: every caller sees the whole catalogue),
 * logging at BENCH_GATEWAY_LOG_LEVEL; `extra` overrides last.
 */
export function gatewaySpec(
  upstreamUrl: string,
  scopeEndpoint: string | undefined,
  logLevel: string,
  extra: DeepPartial<GatewayConfig> = {},
): ServiceSpec['gateway'] {
  return {
    noScopeEndpoint: scopeEndpoint === undefined,
    overrides: {
      ...extra,
      listen: { host: '127.0.0.1', port: 0 },
      log: { level: logLevel as GatewayConfig['log']['level'] },
      upstreams: [{ url: upstreamUrl, ...extra.upstreams?.[0] }],
      ...(scopeEndpoint ? { scopes: { ...extra.scopes, endpoint: scopeEndpoint } } : { scopes: { ...extra.scopes } }),
    },
  };
}
