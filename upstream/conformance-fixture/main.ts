/**
 * CLI: `tsx upstream/conformance-fixture/main.ts [--port N]` (or PORT) starts the conformance fixture and
 * prints its MCP URL on stdout as one line, `{"url": "..."}`, so scripts can wait for it and read the port.
 */
import { parseArgs } from 'node:util';
import { startConformanceFixture } from './index.ts';

const { values } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' } } });
const port = Number(values.port ?? process.env.PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`conformance-fixture: --port must be an integer 0-65535, got ${values.port ?? process.env.PORT}`);
  process.exit(2);
}
const fixture = await startConformanceFixture({ port, host: values.host });
console.log(JSON.stringify({ url: fixture.url }));
const stop = () => {
  void fixture.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
