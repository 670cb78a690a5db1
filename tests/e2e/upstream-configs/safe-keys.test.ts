/**
 * Every shipped example config gives each key only the tools its name promises, as the gateway itself
 * decides it: each config in config/ is started with its real upstreams, each of its keys lists /mcp,
 * and what it sees is judged by the tools' own definitions (annotations as served, readOnlyOverrides
 * applied; descriptions), never by a list of tool names that could go stale:
 * - a key whose name does not say it writes (`full`, `write`) sees read-only tools only (`readOnlyHint: true`);
 * - no key sees a tool that hands out the process environment.
 * A config's keys are its `credentials.apiKeys`, and the platform's demo keys where it asks the platform
 * (`scopes.endpoint`). A config with neither (one catalogue for every caller: the replay and conformance
 * fixtures) names no key to hold to a promise; the test says which those are.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { DEMO_CREDENTIALS } from '../../../upstream/platform/credentials.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { startEverythingServer, type EverythingServer } from '../../fixtures/everything-server.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { startConfigGateway } from '../../helpers/stack.ts';

const CONFIG_DIR = fileURLToPath(new URL('../../../config/', import.meta.url));
const CONFIGS = readdirSync(CONFIG_DIR)
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => file.replace(/\.yaml$/, ''))
  .sort();

/** A name that promises state changes. */
const WRITES = /full|write/i;
/** A tool that hands out the process environment, by its own description. */
const ENVIRONMENT = /\benvironment variables\b/i;

interface Key {
  name: string;
  headers: Record<string, string>;
}
interface SeenTool {
  name: string;
  description?: string;
  annotations?: { readOnlyHint?: boolean };
}

let platform: Awaited<ReturnType<typeof startPlatform>>;
let cpzai: Awaited<ReturnType<typeof startUpstreamServer>>;
let everything: EverythingServer;
let root: string;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gateway-safe-keys-')));
  platform = await startPlatform({ port: 0 });
  cpzai = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  everything = await startEverythingServer();
}, 120_000);
afterAll(async () => {
  await everything?.close();
  await cpzai?.close();
  await platform?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The environment that points a config at this test's upstreams (an HTTP upstream the test cannot start fails by name). */
function environmentFor(name: string): Record<string, string> {
  const config = loadConfig({ path: join(CONFIG_DIR, `${name}.yaml`), env: { FILESYSTEM_ROOT: root } });
  const env: Record<string, string> = { FILESYSTEM_ROOT: root };
  const started: Record<string, string> = { cpzai: cpzai.url, everything: everything.url };
  config.upstreams.forEach((upstream, i) => {
    if (upstream.url === undefined) return;
    const url = started[upstream.name];
    if (!url) throw new Error(`config/${name}.yaml: this test does not know how to start upstream "${upstream.name}"; add it to environmentFor`);
    env[`GATEWAY_UPSTREAMS_${i}_URL`] = url;
  });
  if (config.scopes.endpoint) env.GATEWAY_SCOPES_ENDPOINT = `${platform.url}/v1/me`;
  return env;
}

/** The keys a config serves: its own API keys, and the platform's demo keys when it asks the platform. */
function keysOf(name: string): Key[] {
  const config = loadConfig({ path: join(CONFIG_DIR, `${name}.yaml`), env: { FILESYSTEM_ROOT: root } });
  const own = config.credentials.apiKeys.map(
    (key): Key => ({
      name: key.name,
      headers: key.token !== undefined ? { authorization: `Bearer ${key.token}` } : { 'x-cpz-key': key.key!, 'x-cpz-secret': key.secret! },
    }),
  );
  const platformKeys = config.scopes.endpoint
    ? DEMO_CREDENTIALS.map((demo) => ({ name: demo.keyId, headers: { 'x-cpz-key': demo.keyId, 'x-cpz-secret': demo.secret } }))
    : [];
  return [...own, ...platformKeys];
}

describe('the shipped example configs', () => {
  it('name no key only where every caller gets one catalogue (the fixtures)', () => {
    expect(CONFIGS.filter((name) => keysOf(name).length === 0)).toEqual(['conformance', 'replay']);
  });

  for (const name of CONFIGS) {
    it.skipIf(keysOf(name).length === 0)(`config/${name}.yaml gives each key only what its name promises`, { timeout: 120_000 }, async () => {
      const gw = await startConfigGateway(name, environmentFor(name));
      const problems: string[] = [];
      let seen = 0;
      try {
        for (const key of keysOf(name)) {
          const client = await connectV2(gw.mcpUrl, key.headers);
          try {
            const tools = (await client.listTools()).tools as SeenTool[];
            seen += tools.length;
            for (const tool of tools) {
              if (!WRITES.test(key.name) && tool.annotations?.readOnlyHint !== true)
                problems.push(`${key.name} (its name does not say it writes) sees state-changing ${tool.name}`);
              if (ENVIRONMENT.test(tool.description ?? '')) problems.push(`${key.name} sees ${tool.name}, which hands out the process environment`);
            }
          } finally {
            await client.close();
          }
        }
      } finally {
        await gw.close();
      }
      expect(seen, 'no key sees any tool: are the upstreams up?').toBeGreaterThan(0);
      expect(problems).toEqual([]);
    });
  }
});
