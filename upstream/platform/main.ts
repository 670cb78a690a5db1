/** CLI entry of the platform API stand-in (compose, manual runs). Env: HOST, PLATFORM_PORT (3002). */
import { startPlatform } from './index.ts';

const platform = await startPlatform({
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PLATFORM_PORT ?? 3002),
  log: true,
});
console.log(`platform API ${platform.url}/v1`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void platform.close().finally(() => process.exit(0)));
}
