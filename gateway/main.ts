/**
 * CLI: `tsx gateway/main.ts [--config path.yaml]` loads the configuration (else GATEWAY_CONFIG, else
 * config/cpzai.yaml; GATEWAY_* variables override) and runs the gateway until SIGINT/SIGTERM, which
 * close it gracefully. A bad configuration exits with status 2 and a message naming the key.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.ts';
import { startGateway } from './gateway.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string', short: 'c' } }, strict: true });
  const gateway = await startGateway(loadConfig({ path: values.config }));
  process.stderr.write(`gateway listening on ${gateway.url}/mcp\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: closing the gateway\n`);
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `gateway failed to start: ${(error as Error).stack ?? String(error)}`}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
