/**
 * CLI entry of the reference CPZAI MCP server (compose, manual runs).
 * Env: HOST, UPSTREAM_PORT (3001), PLATFORM_URL (http://127.0.0.1:3002).
 */
import { startUpstreamServer } from './index.ts';

const upstream = await startUpstreamServer({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.UPSTREAM_PORT ?? 3001),
  platformUrl: process.env.PLATFORM_URL ?? 'http://127.0.0.1:3002',
  log: true,
});
console.log(`upstream MCP ${upstream.url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void upstream.close().finally(() => process.exit(0)));
}
