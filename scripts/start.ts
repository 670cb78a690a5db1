/**
 * `npm start`: the whole reference stack in one process tree, with embedded defaults and no other setup.
 *
 * Ports (env overrides): platform API 3002 (PLATFORM_PORT), reference upstream MCP server 3001
 * (UPSTREAM_PORT), gateway 3000 (from the gateway config: GATEWAY_LISTEN_PORT or the YAML file).
 * Stops all three on SIGINT/SIGTERM, the gateway first so in-flight calls can still reach the upstream.
 */
import { loadConfig } from '../config/load.ts';
import { startGateway } from '../gateway/index.ts';
import { startPlatform } from '../upstream/platform/index.ts';
import { startUpstreamServer } from '../upstream/server/index.ts';

const host = process.env.HOST ?? '127.0.0.1';
const platform = await startPlatform({ host, port: Number(process.env.PLATFORM_PORT ?? 3002) });
const upstream = await startUpstreamServer({
  host,
  port: Number(process.env.UPSTREAM_PORT ?? 3001),
  platformUrl: platform.url,
});
const gateway = await startGateway(loadConfig({ path: process.argv[2] ?? process.env.GATEWAY_CONFIG }));

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
