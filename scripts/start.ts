/**
 * `npm start`: the whole reference stack in one process tree, with embedded defaults and no other setup
 * (`npm start -- --help` prints the usage).
 *
 * Ports (env overrides): platform API 3002 (PLATFORM_PORT), reference upstream MCP server 3001
 * (UPSTREAM_PORT), gateway 3000 (GATEWAY_LISTEN_PORT, or the config file). Whatever config is given,
 * its references to the reference services' default addresses follow the ports actually bound
 * (gateway/cli/reference-ports.ts). Stops all three on SIGINT/SIGTERM, the gateway first so in-flight
 * calls can still reach the upstream. SIGHUP reloads the gateway's configuration (gateway/reload/plan.ts).
 */
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig } from '../config/load.ts';
import { parseCommandLine, usageFailure, UsageError } from '../gateway/cli/args.ts';
import { followBoundPorts } from '../gateway/cli/reference-ports.ts';
import { driveReloads } from '../gateway/cli/reload-driver.ts';
import { startGateway } from '../gateway/gateway.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';

const USAGE = `
Usage: npm start [-- [--config FILE]]
       (node --import ./scripts/register-ts.mjs scripts/start.ts [--config FILE])

Starts the reference stack: the platform API stand-in, the CPZAI MCP server and the gateway in front of it.

Options:
  -c, --config FILE   gateway configuration (YAML); default: $GATEWAY_CONFIG, else config/cpzai.yaml
                      (a bare FILE argument is taken too)
  -h, --help          show this help

Environment:
  PLATFORM_PORT (3002), UPSTREAM_PORT (3001), GATEWAY_LISTEN_PORT (3000), HOST (127.0.0.1);
  GATEWAY_* variables override configuration keys (docs/config.md).
`;

const { values, positionals } = parseCommandLine({ usage: USAGE, options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
let configPath: string | undefined;
try {
  if (positionals.length > 1 || (positionals.length === 1 && values.config !== undefined)) throw new UsageError(`unexpected argument "${positionals.at(-1)}"`);
  configPath = values.config ?? positionals[0] ?? process.env.GATEWAY_CONFIG;
} catch (error) {
  usageFailure(USAGE, error);
}
const host = process.env.HOST ?? '127.0.0.1';

/** Starts one service, or exits with one line naming it (a busy port is the usual cause), not a stack trace. */
async function started<T>(what: string, start: () => Promise<T> | T): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`npm start: ${error.message}`);
      process.exit(2);
    }
    const { code, message } = error as NodeJS.ErrnoException;
    const hint = code === 'EADDRINUSE' ? ' (port busy: set PLATFORM_PORT, UPSTREAM_PORT or GATEWAY_LISTEN_PORT)' : '';
    console.error(`npm start: could not start the ${what}: ${message}${hint}`);
    process.exit(1);
  }
}

/** A port from the environment, or one line naming the variable and exit 2. */
function port(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (Number.isInteger(value) && value >= 0 && value <= 65535) return value;
  console.error(`npm start: ${name} must be a port number (0-65535), got "${raw}"`);
  process.exit(2);
}

// The configuration first: a bad one is reported before anything binds a port.
const config = await started('gateway', () => loadConfig({ path: configPath }));
const platform = await started('platform API', () => startPlatform({ host, port: port('PLATFORM_PORT', 3002) }));
const upstream = await started('reference MCP server', () => startUpstreamServer({ host, port: port('UPSTREAM_PORT', 3001), platformUrl: platform.url }));
followBoundPorts(config, { upstreamUrl: upstream.url, platformUrl: platform.url });
const gateway = await started('gateway', async () => startGateway(config));

console.log(`platform API   ${platform.url}/v1`);
console.log(`upstream MCP   ${upstream.url}`);
console.log(`gateway        ${gateway.url}/mcp  and  ${gateway.url}/mcp/compact`);
if (config.console.adminToken) console.log(`console        ${gateway.url}/console`);
console.log(`reload         kill -HUP ${process.pid}`);

// SIGHUP (and with reload.watch a change of the file) reloads the gateway's configuration.
const reloadPath = configPath ?? DEFAULT_CONFIG_PATH;
driveReloads(gateway, {
  load: () => followBoundPorts(loadConfig({ path: reloadPath }), { upstreamUrl: upstream.url, platformUrl: platform.url }),
  path: reloadPath,
  config,
  report: (line) => console.error(`npm start: ${line}`),
});

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await gateway.close({ reason: signal });
  } finally {
    try {
      await upstream.close();
    } finally {
      await platform.close();
    }
  }
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
