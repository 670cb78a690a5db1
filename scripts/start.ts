/**
 * `npm start`: the whole reference stack in one process tree, with embedded defaults and no other setup.
 *
 * Ports (env overrides): platform API 3002 (PLATFORM_PORT), reference upstream MCP server 3001
 * (UPSTREAM_PORT), gateway 3000 (from the gateway config: GATEWAY_LISTEN_PORT or the YAML file).
 * Stops all three on SIGINT/SIGTERM, the gateway first so in-flight calls can still reach the upstream.
 */
import { loadConfig } from '../config/load.ts';
import { startGateway } from '../gateway/gateway.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';

const host = process.env.HOST ?? '127.0.0.1';

/** Starts one service, or exits with one line naming it (a busy port is the usual cause), not a stack trace. */
async function started<T>(what: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const hint = code === 'EADDRINUSE' ? ' (port busy: set PLATFORM_PORT, UPSTREAM_PORT or GATEWAY_LISTEN_PORT)' : '';
    console.error(`npm start: could not start the ${what}: ${message}${hint}`);
    process.exit(1);
  }
}

const platform = await started('platform API', () => startPlatform({ host, port: Number(process.env.PLATFORM_PORT ?? 3002) }));
const upstream = await started('reference MCP server', () =>
  startUpstreamServer({ host, port: Number(process.env.UPSTREAM_PORT ?? 3001), platformUrl: platform.url }),
);
const configPath = process.argv[2] ?? process.env.GATEWAY_CONFIG;
if (configPath === undefined) {
  // The embedded default (config/cpzai.yaml) points at 3001/3002: follow the ports actually bound,
  // unless the environment already says where the gateway should look.
  process.env.GATEWAY_UPSTREAMS_0_URL ??= upstream.url;
  process.env.GATEWAY_SCOPES_ENDPOINT ??= `${platform.url}/v1/me`;
}
const gateway = await started('gateway', async () => startGateway(loadConfig({ path: configPath })));

console.log(`platform API   ${platform.url}/v1`);
console.log(`upstream MCP   ${upstream.url}`);
console.log(`gateway        ${gateway.url}/mcp  and  ${gateway.url}/mcp/compact`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await gateway.close();
  } finally {
    try {
      await upstream.close();
    } finally {
      await platform.close();
    }
  }
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
