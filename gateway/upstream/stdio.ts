import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { UpstreamConfig } from '../../config/types.ts';
import type { Logger } from '../obs/log.ts';
import { configuredSecrets, withoutSecrets } from '../obs/redact.ts';

/** Longest stderr line logged as it is; the rest is cut (a server may print anything there). */
const MAX_STDERR_LINE = 2000;

const exits = new WeakMap<object, string>();
/** When each transport's process last wrote to stdout (epoch ms): any part of any message. */
const heard = new WeakMap<object, number>();

/** When the process of `transport` last wrote anything on stdout (epoch ms), undefined before it did. */
export function lastHeardFrom(transport: StdioClientTransport): number | undefined {
  return heard.get(transport);
}

/** How a stdio transport's process ended ("exited with code 3", "was killed by SIGKILL"); "exited" before that is known. */
export function exitOf(transport: object): string {
  return exits.get(transport) ?? 'exited';
}

/** How long a stdio server gets to exit after its stdin ends, and again after SIGTERM, before the next step (ms). */
export const STOP_GRACE_MS = 2000;

/** Every stdio server process this gateway started that has not exited yet. */
const running = new Set<ChildProcess>();
let endAtExit = false;

/**
 * Remembers `child` until it exits. At the gateway's own exit, any still running is sent SIGTERM: a server that
 * ignores its stdin's end would otherwise outlive us, reparented to init (a failed handshake's process whose
 * stop was under way, a `process.exit` before a close finished). SIGTERM, not SIGKILL, so a server that flushes
 * on it keeps its data; the exit handler cannot wait to escalate. Not the SDK's own version probe: it spawns a
 * short-lived sibling of its own (never through this transport) and stops it itself within a second, so an
 * exit in that second can leave it running (review).
 */
function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (endAtExit) return;
  endAtExit = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGTERM');
  });
}

/** Resolves true when `exited` settles within `ms`, false after; the timer holds the event loop, so a stop in progress is not cut short by an exit. */
function within(exited: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Stops a stdio server as MCP 2025-11-25 basic/lifecycle §Shutdown (stdio) says: its stdin ends, then SIGTERM
 * after {@link STOP_GRACE_MS}, then SIGKILL after as long again; resolves once it has exited. The SDK's own close
 * does the same with timers that do not hold the event loop, so an exiting gateway left such a server running.
 */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  if (await within(exited, STOP_GRACE_MS)) return;
  child.kill('SIGTERM');
  if (await within(exited, STOP_GRACE_MS)) return;
  child.kill('SIGKILL');
  await exited;
}

/** At most one warning about stray stdout lines per this many ms and process. */
const STRAY_WARNING_MS = 60_000;

/**
 * Watches a stdio server's stdout for lines that are no JSON-RPC message, which the SDK's reader skips
 * without a word (a server printing its own logs on stdout, the usual mistake: stdout is the protocol's
 * channel, MCP 2025-11-25 basic/transports §stdio): the first such line, and then at most one a minute,
 * is logged with how many were dropped since, as it came (as stderr lines are). A JSON log line (pino,
 * winston) starts with `{` and is not caught here: the SDK's reader drops it unlogged. A line is taken for a message when its first byte is `{`
 * (or it is blank, or starts with whitespace); only that byte is read, so the check costs nothing per
 * message. Returns the chunk reader: it takes a chunk and whether it starts a line, and says whether the next one does.
 */
function strayLines(config: UpstreamConfig, log: Logger, pid: () => number | undefined): (chunk: Buffer, atLineStart: boolean) => boolean {
  // A server's banner on stdout may print its key as well as one on stderr (review).
  const secrets = configuredSecrets(config);
  let dropped = 0;
  let warnedAt = Number.NEGATIVE_INFINITY;
  const check = (chunk: Buffer, at: number) => {
    const first = chunk[at]!;
    if (first === 0x7b || first === 0x0a || first === 0x0d || first === 0x20 || first === 0x09) return;
    dropped++;
    const now = Date.now();
    if (now - warnedAt < STRAY_WARNING_MS) return;
    warnedAt = now;
    const end = chunk.indexOf(0x0a, at);
    // Masked before the cut (a secret across it would leave its head: review), then cut to 200 characters.
    const line = withoutSecrets(chunk.toString('utf8', at, end === -1 ? chunk.length : end), secrets).slice(0, 200);
    log.warn(
      { upstream: config.name, pid: pid(), dropped, line },
      `upstream ${config.name} wrote lines on stdout that are no JSON-RPC message: dropped (stdout carries the protocol; a server logs on stderr)`,
    );
    dropped = 0;
  };
  return (chunk, atLineStart) => {
    if (chunk.length === 0) return atLineStart;
    if (atLineStart) check(chunk, 0);
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, newline + 1)) {
      if (newline + 1 < chunk.length) check(chunk, newline + 1);
    }
    return chunk[chunk.length - 1] === 0x0a;
  };
}

/** A stdio line (one JSON-RPC message, a whole list page included) may be this many times `limits.resultBytes` (64 MiB by default). */
export const STDIO_LINE_FACTOR = 16;

/**
 * The transport of a stdio upstream: `command` + `args` spawned by the SDK's StdioClientTransport with
 * `cwd` and `env` on top of the SDK's minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER: the gateway's own secrets are not passed on). Each stderr line is logged with the upstream's
 * name, cut at {@link MAX_STDERR_LINE} characters (the rest of a longer line is dropped unread). One
 * transport is one process; the UpstreamClient that owns it restarts it when it exits; closing the transport
 * stops the process ({@link stop}) and resolves once it has exited. A stdout message
 * (one line) may be `maxLineBytes` long (the SDK's `maxBufferSize`, which otherwise stops at 10 MiB, is set
 * above it); past it the process is stopped and its exit says why ({@link exitOf}).
 */
export function stdioTransport(config: UpstreamConfig, log: Logger, maxLineBytes: number): StdioClientTransport {
  const transport = new StdioClientTransport({
    command: config.command!,
    args: config.args,
    env: config.env,
    cwd: config.cwd,
    stderr: 'pipe',
    // The SDK's own bound (10 MiB by default) counts a whole chunk, the start of the next message in it too:
    // given room, so a message up to ours passes and ours, exact, stops the process.
    maxBufferSize: 2 * maxLineBytes,
  });
  // The SDK keeps its child process private and reports only that it closed; how it ended (its exit
  // code or signal) is what tells an operator a crash from a stop, so it is read off the child here.
  const start = transport.start.bind(transport);
  transport.start = () => {
    const started = start();
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    if (child) track(child);
    child?.once('exit', (code, signal) => {
      if (!exits.has(transport)) exits.set(transport, signal ? `was killed by ${signal}` : `exited with code ${code}`);
    });
    let unterminated = 0;
    const strayLine = strayLines(config, log, () => transport.pid ?? undefined);
    let atLineStart = true;
    child?.stdout?.on('data', (chunk: Buffer) => {
      heard.set(transport, Date.now());
      atLineStart = strayLine(chunk, atLineStart);
      const newline = chunk.lastIndexOf(0x0a);
      unterminated = newline === -1 ? unterminated + chunk.length : chunk.length - newline - 1;
      if (unterminated <= maxLineBytes || exits.has(transport)) return;
      exits.set(transport, `was stopped: it wrote more than ${maxLineBytes} bytes on stdout without a newline (${STDIO_LINE_FACTOR} x limits.resultBytes)`);
      log.warn({ upstream: config.name, pid: transport.pid ?? undefined, maxLineBytes }, `upstream ${config.name} ${exits.get(transport)}`);
      child.kill('SIGKILL');
    });
    return started;
  };
  const close = transport.close.bind(transport);
  transport.close = async () => {
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    if (child) await stop(child);
    return close();
  };
  const stderr = transport.stderr as Readable | null;
  if (stderr) {
    let line = '';
    let cut = false;
    // A server that prints its own key (a startup banner, a failed request's dump) must not put it in our log (review).
    const secrets = configuredSecrets(config);
    const logLine = (raw: string) => {
      // A CRLF split between two chunks leaves its CR on the line.
      const text = withoutSecrets(raw.endsWith('\r') ? raw.slice(0, -1) : raw, secrets);
      if (text.trim()) log.info({ upstream: config.name, pid: transport.pid ?? undefined, stderr: text }, 'upstream stderr');
    };
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      const parts = chunk.split(/\r?\n/);
      for (let i = 0; i < parts.length; i++) {
        const last = i === parts.length - 1;
        if (!cut) {
          line += parts[i];
          if (line.length > MAX_STDERR_LINE) {
            // Masked whole before the cut: a secret across it would leave its head in the log (review).
            logLine(`${withoutSecrets(line, secrets).slice(0, MAX_STDERR_LINE)}…`);
            cut = true;
            line = '';
          }
        }
        if (last) break;
        if (!cut) logLine(line);
        line = '';
        cut = false;
      }
    });
    stderr.on('end', () => {
      if (!cut) logLine(line);
    });
    stderr.on('error', () => undefined);
  }
  return transport;
}
