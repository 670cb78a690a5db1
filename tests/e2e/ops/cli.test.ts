import { spawn, type ChildProcess } from 'node:child_process';
import { unreachableUrl } from '../../fixtures/scope-endpoint.ts';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { followBoundPorts } from '../../../gateway/cli/reference-ports.ts';
import { connectV2, DATA_KEY_TOOLS, DEMO_KEYS, DEMO_SECRETS, namesOf } from '../../helpers/clients.ts';
import { freePort } from '../../helpers/free-port.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

const ROOT = new URL('../../..', import.meta.url).pathname;
const TSX = `${ROOT}node_modules/.bin/tsx`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an entry point to completion with a clean GATEWAY_* environment. */
async function run(script: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(TSX, [script, ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [status] = (await once(child, 'exit')) as [number | null];
  return { status, stdout, stderr };
}

function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('GATEWAY_') && !/^(PLATFORM|UPSTREAM)_PORT$/.test(name)),
  ) as Record<string, string>;
  return { ...env, ...extra };
}

const STACK_TRACE = /\n\s+at .+:\d+:\d+/;

// Each test spawns tsx processes (seconds each on a loaded machine): generous timeouts.
describe('every entry point: --help and bad command lines', { timeout: 90_000 }, () => {
  const entries = ['gateway/main.ts', 'scripts/start.ts', 'scripts/surfaces.ts', 'scripts/export-catalog.ts'];

  it.each(entries)('%s --help prints the usage and exits 0 without doing anything else', async (script) => {
    const result = await run(script, ['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage:/);
    expect(result.stdout).toContain('--help');
    expect(result.stderr).toBe('');
  });

  it.each(entries)('%s with an unknown option exits 2 with one error line and the synopsis, no stack trace', async (script) => {
    const result = await run(script, ['--no-such-option']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^error: Unknown option '--no-such-option'/);
    expect(result.stderr).toContain('Usage:');
    expect(result.stderr).not.toMatch(STACK_TRACE);
  });

  it('gateway/main.ts names a bad configuration key and exits 2', async () => {
    const result = await run('gateway/main.ts', ['--config', 'config/cpzai.yaml'], { GATEWAY_SCOPES_TIMEOUT_MS: 'soon' });
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe('invalid configuration: scopes.timeoutMs: must be integer (from GATEWAY_SCOPES_TIMEOUT_MS)');
  });

  it('gateway/main.ts refuses a tampered pin lock file with an audit file on: exit 2, one line, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-lock-'));
    try {
      // A definition beside a digest that is not its own (catalog/pinning.ts lockedPinProblem).
      const definition = { name: 'get_weather', inputSchema: { type: 'object' } };
      writeFileSync(join(dir, 'pins.json'), JSON.stringify({ lockfileVersion: 1, upstreams: { cpzai: { get_weather: { digest: 'sha256:0', definition } } } }));
      const result = await run('gateway/main.ts', ['--config', 'config/cpzai.yaml'], {
        GATEWAY_PINNING_LOCK_FILE: join(dir, 'pins.json'),
        GATEWAY_AUDIT_DESTINATION: join(dir, 'audit.log'),
        GATEWAY_LISTEN_PORT: '0',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^invalid configuration: pinning\.lockFile: .*upstreams\.cpzai\.get_weather: its digest sha256:0 is not the digest/m);
      expect(result.stderr).not.toMatch(STACK_TRACE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gateway/main.ts pins says on stderr which gateway it asks, and where that came from', async () => {
    // Nothing listens there: the default configuration's listen port was otherwise whatever gateway answered, silently (try-out).
    const port = await freePort();
    const result = await run('gateway/main.ts', ['pins', 'list'], { GATEWAY_LISTEN_PORT: String(port) });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      `pins: gateway http://127.0.0.1:${port} (listen of config/cpzai.yaml, the default configuration, with GATEWAY_LISTEN_PORT from the environment; --url or --config picks another)`,
    );
    expect(result.stdout).toBe('');
  });

  // One process per case: four in a row took over 90 s on a loaded 2-core machine.
  it.each([
    { what: 'an unknown command', args: ['frobnicate'], error: /^error: unknown command "frobnicate"/ },
    { what: 'an option of the other command', args: ['serve', '--key', 'k'], error: /^error: --key belongs to the tools command/ },
    { what: 'tools without a credential', args: ['tools'], error: /^error: tools needs a credential/ },
    {
      what: 'a --url without a scheme',
      args: ['tools', '--url', '127.0.0.1:3000', '--key', 'k', '--secret', 's'],
      error: /^error: --url "127\.0\.0\.1:3000" is not a gateway URL: the scheme is missing \(did you mean --url http:\/\/127\.0\.0\.1:3000\?\)/,
    },
  ])('gateway/main.ts refuses $what: exit 2, the error names it', async ({ args, error }) => {
    const result = await run('gateway/main.ts', args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(error);
  });
});

describe('npm start: one --config convention, port variables honoured with any config', { timeout: 90_000 }, () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    // npm runs the script through sh: end the whole process group, not just npm.
    if (child && child.exitCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      await once(child, 'exit');
    }
  });

  it('npm start -- --config config/cpzai.yaml on PLATFORM_PORT/UPSTREAM_PORT/GATEWAY_LISTEN_PORT serves the data key its 10 tools', async () => {
    const [platformPort, upstreamPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
    child = spawn('npm', ['start', '--silent', '--', '--config', 'config/cpzai.yaml'], {
      cwd: ROOT,
      env: cleanEnv({
        PLATFORM_PORT: String(platformPort),
        UPSTREAM_PORT: String(upstreamPort),
        GATEWAY_LISTEN_PORT: String(gatewayPort),
        GATEWAY_LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = () => child!.exitCode !== null || child!.signalCode !== null;
    await waitFor('npm start to print its reload command, or exit', () => stdout.includes('reload ') || exited(), { timeoutMs: 60_000 });
    expect(exited(), `npm start exited: ${stderr}`).toBe(false);
    expect(stdout).toContain(`http://127.0.0.1:${platformPort}/v1`);
    expect(stdout).toContain(`http://127.0.0.1:${upstreamPort}/mcp`);
    expect(stdout).toContain(`http://127.0.0.1:${gatewayPort}/mcp`);
    const client = await connectV2(`http://127.0.0.1:${gatewayPort}/mcp`, DEMO_KEYS.data);
    try {
      expect(namesOf(await client.listTools())).toEqual(DATA_KEY_TOOLS);
    } finally {
      await client.close();
    }
  });

  it('a config that points elsewhere is left alone; the reference addresses follow the bound ports', () => {
    const config = loadConfig({ env: {} });
    followBoundPorts(config, { upstreamUrl: 'http://127.0.0.1:4001/mcp', platformUrl: 'http://127.0.0.1:4002' }, {});
    expect(config.upstreams[0]!.url).toBe('http://127.0.0.1:4001/mcp');
    expect(config.scopes.endpoint).toBe('http://127.0.0.1:4002/v1/me');
    const elsewhere = loadConfig({
      env: {},
      overrides: { upstreams: [{ url: 'http://upstream.example:3001/mcp' }], scopes: { endpoint: 'http://127.0.0.1:9999/me' } },
    });
    followBoundPorts(elsewhere, { upstreamUrl: 'http://127.0.0.1:4001/mcp', platformUrl: 'http://127.0.0.1:4002' }, {});
    expect(elsewhere.upstreams[0]!.url).toBe('http://upstream.example:3001/mcp');
    expect(elsewhere.scopes.endpoint).toBe('http://127.0.0.1:9999/me');
    const pinned = loadConfig({ env: {} });
    followBoundPorts(
      pinned,
      { upstreamUrl: 'http://127.0.0.1:4001/mcp', platformUrl: 'http://127.0.0.1:4002' },
      { GATEWAY_UPSTREAMS_0_URL: 'http://127.0.0.1:3001/mcp' },
    );
    expect(pinned.upstreams[0]!.url).toBe('http://127.0.0.1:3001/mcp');
  });
});

describe('gateway/main.ts tools: what a credential sees on each surface', { timeout: 90_000 }, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('--url asks a running gateway: 10 tools for the data key on /mcp, 6 on /mcp/compact; the secret is not printed', async () => {
    const result = await run('gateway/main.ts', [
      'tools',
      '--url',
      stack.gatewayUrl,
      '--key',
      DEMO_KEYS.data['x-cpz-key'],
      '--secret',
      DEMO_KEYS.data['x-cpz-secret'],
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('/mcp: 10 tools');
    expect(result.stdout).toContain('/mcp/compact: 6 tools');
    for (const name of DATA_KEY_TOOLS) expect(result.stdout).toMatch(new RegExp(`^  ${name} +read`, 'm'));
    for (const secret of DEMO_SECRETS) expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('--json, and a refused credential fails with the status and exit 1', async () => {
    const ok = await run('gateway/main.ts', [
      'tools',
      '--json',
      '--url',
      stack.gatewayUrl,
      '--key',
      DEMO_KEYS.identity['x-cpz-key'],
      '--secret',
      DEMO_KEYS.identity['x-cpz-secret'],
    ]);
    const views = JSON.parse(ok.stdout) as { path: string; tools: { name: string }[] }[];
    expect(views.map((v) => v.path)).toEqual(['/mcp', '/mcp/compact']);
    expect(views[0]!.tools.map((t) => t.name).sort()).toEqual(['get_profile']);
    const refused = await run('gateway/main.ts', ['tools', '--url', stack.gatewayUrl, '--key', 'cpz_demo_data', '--secret', 'wrong-secret']);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/\/mcp: /);
    expect(refused.stdout).not.toContain('wrong-secret');
  });

  it('names the URL and the cause when nothing answers at --url', async () => {
    const nobody = await unreachableUrl('');
    const result = await run('gateway/main.ts', ['tools', '--url', nobody, '--key', 'k', '--secret', 's']);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`/mcp: cannot reach ${nobody}/mcp (ECONNREFUSED): is a gateway running there?`);
  });

  it('without --url it starts a gateway from the configuration and asks it', async () => {
    const result = await run('gateway/main.ts', ['tools', '--key', DEMO_KEYS.data['x-cpz-key'], '--secret', DEMO_KEYS.data['x-cpz-secret']], {
      GATEWAY_UPSTREAMS_0_URL: stack.upstreamUrl,
      GATEWAY_SCOPES_ENDPOINT: `${stack.platformUrl}/v1/me`,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('/mcp: 10 tools');
    // config/cpzai.yaml serves code mode: run_code besides search_tools, call_tool and the four anchors.
    expect(result.stdout).toContain('/mcp/compact: 7 tools');
  });
});
