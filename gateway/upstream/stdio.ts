import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { UpstreamConfig } from '../../config/types.ts';
import type { Logger } from '../obs/log.ts';

/** Longest stderr line logged as it is; the rest is cut (a server may print anything there). */
const MAX_STDERR_LINE = 2000;

const exits = new WeakMap<object, string>();

/** How a stdio transport's process ended ("exited with code 3", "was killed by SIGKILL"); "exited" before that is known. */
export function exitOf(transport: object): string {
  return exits.get(transport) ?? 'exited';
}

/**
 * The transport of a stdio upstream: `command` + `args` spawned by the SDK's StdioClientTransport with
 * `cwd` and `env` on top of the SDK's minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER: the gateway's own secrets are not passed on). Each stderr line is logged with the upstream's
 * name. One transport is one process; the UpstreamClient that owns it restarts it when it exits.
 */
export function stdioTransport(config: UpstreamConfig, log: Logger): StdioClientTransport {
  const transport = new StdioClientTransport({ command: config.command!, args: config.args, env: config.env, cwd: config.cwd, stderr: 'pipe' });
  // The SDK keeps its child process private and reports only that it closed; how it ended (its exit
  // code or signal) is what tells an operator a crash from a stop, so it is read off the child here.
  const start = transport.start.bind(transport);
  transport.start = () => {
    const started = start();
    (transport as unknown as { _process?: ChildProcess })._process?.once('exit', (code, signal) =>
      exits.set(transport, signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
    return started;
  };
  const stderr = transport.stderr as Readable | null;
  if (stderr) {
    const lines = createInterface({ input: stderr, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (line.trim())
        log.info(
          { upstream: config.name, pid: transport.pid ?? undefined, stderr: line.length > MAX_STDERR_LINE ? `${line.slice(0, MAX_STDERR_LINE)}…` : line },
          'upstream stderr',
        );
    });
    lines.on('error', () => undefined);
  }
  return transport;
}
