import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const EVERYTHING = 'node_modules/@modelcontextprotocol/server-everything/dist/index.js';
const PRELOAD = fileURLToPath(new URL('./listen-on-loopback.mjs', import.meta.url));

/** @modelcontextprotocol/server-everything run from its CLI (`streamableHttp`), as a child process. */
export interface EverythingServer {
  /** Its MCP endpoint, http://127.0.0.1:<port>/mcp. */
  url: string;
  /** The process id of the current server. */
  pid(): number;
  /** Kills the server (SIGKILL: no goodbye to its clients) and starts a new one on the same port. */
  restart(): Promise<void>;
  /** Kills the server without starting another one. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts `mcp-server-everything streamableHttp` with PORT=0 on 127.0.0.1 (listen-on-loopback.mjs binds
 * it there and reports the port), and resolves once it listens.
 */
export async function startEverythingServer(): Promise<EverythingServer> {
  let child = await spawnServer(0);
  const port = child.port;
  const kill = async () => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    const exited = new Promise((resolve) => child.process.once('exit', resolve));
    child.process.kill('SIGKILL');
    await exited;
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: () => child.process.pid!,
    async restart() {
      await kill();
      child = await spawnServer(port);
    },
    kill,
    close: kill,
  };
}

async function spawnServer(port: number): Promise<{ process: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', PRELOAD, EVERYTHING, 'streamableHttp'], {
    cwd: root,
    env: { PATH: process.env.PATH!, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Never outlive the test process, even when a suite dies before its afterAll.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`server-everything did not start: ${stderr}`)), 20_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const exited = (code: number | null) => fail(new Error(`server-everything exited with ${code}: ${stderr}`));
    child.once('exit', exited);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      const found = /LOOPBACK_PORT=(\d+)/.exec(stderr);
      if (found) {
        clearTimeout(timer);
        child.off('exit', exited);
        child.stderr!.removeAllListeners('data');
        child.stderr!.resume();
        resolve({ process: child, port: Number(found[1]) });
      }
    });
  });
}
