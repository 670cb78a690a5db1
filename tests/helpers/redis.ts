import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

/**
 * Whether the Redis suites run: `redis-server` on PATH, or CI (under CI=true a missing redis-server fails
 * the suite instead of hiding it). `.ci/run` installs it.
 */
export const hasRedis = spawnSync('redis-server', ['--version']).status === 0 || process.env.CI === 'true';

/** A redis-server child process of one test file, on a free loopback port, without persistence. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  port: number;
  process: ChildProcess;
  /** SIGKILL (no goodbye to its clients); resolves once the process has exited. */
  kill(): Promise<void>;
  /** Runs redis-cli against the plain port; its stdout. */
  cli(...args: string[]): string;
}

/**
 * Starts redis-server and resolves once it answers PING on its plain port (5 s at most) AND the server
 * answering is this child (its INFO process_id): a free port can be taken between freePort() and the
 * bind by a suite running beside this one, and that other server would answer the PING (a Cluster test
 * once joined another suite's node). A child that exits (its port, or a cluster bus port +10000, taken)
 * or a port answered by another process is retried on a new port, 5 tries at most. `args`: more
 * redis-server options (a TLS port, cluster mode, `--replicaof`), `cwd`: where it writes its files.
 */
export async function startRedis(options: { args?: string[]; cwd?: string } = {}): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(options);
    if (started !== 'port taken') return started;
    if (attempt === 5) throw new Error('redis-server: 5 free ports in a row were taken before it could bind them');
  }
}

async function startOnce(options: { args?: string[]; cwd?: string }): Promise<RedisServer | 'port taken'> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(options.args ?? [])], {
    stdio: 'ignore',
    cwd: options.cwd,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout;
  let answered = false;
  try {
    await waitFor(`redis-server to answer PING on ${port}`, async () => child.exitCode !== null || (answered = await pong(port)), { timeoutMs: 5000 });
  } catch (error) {
    await kill();
    throw error;
  }
  if (child.exitCode !== null || (answered && !cli('INFO', 'server').includes(`process_id:${child.pid}\r`))) {
    await kill();
    return 'port taken';
  }
  return { url: `redis://127.0.0.1:${port}`, port, process: child, kill, cli };
}

/**
 * Starts redis-server on `port`, where a test pointed a gateway while nothing listened (Redis down at
 * start), and resolves once it answers PING (with `password`: `--requirepass`, asked with AUTH).
 * The caller kills the child.
 */
export async function startRedisAt(port: number, password?: string): Promise<ChildProcess> {
  const auth = password ? ['--requirepass', password] : [];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth], { stdio: 'ignore' });
  const answers = () =>
    password
      ? spawnSync('redis-cli', ['-p', String(port), '--no-auth-warning', '-a', password, 'PING'], { encoding: 'utf8' }).stdout.trim() === 'PONG'
      : pong(port);
  await waitFor(`redis-server to answer on ${port}`, answers, { timeoutMs: 5000 });
  return child;
}

/** True when the server on `port` answers PING with +PONG. */
export function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.end();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/** A TCP relay in front of a Redis whose link can be cut and restored: an outage without losing Redis's data. */
export interface RedisLink {
  /** `redis://127.0.0.1:<relay port>`. */
  url: string;
  /** Drops every relayed connection, and each new one at once, until {@link restore}. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** Starts a {@link RedisLink} to the Redis on `port`. */
export async function redisLink(port: number): Promise<RedisLink> {
  const sockets = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
