/**
 * CLI of the replay upstream:
 *   tsx upstream/replay/cli.ts --catalog data/catalogs/livemcpbench-tools.json [--port 3005]
 *       [--host 127.0.0.1] [--page-size 100]
 *   tsx upstream/replay/cli.ts --synthetic 10000 [...]
 * Prints the MCP URL; stops on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';

import { startReplayUpstream } from './index.ts';
import { syntheticCatalog } from './synthetic-catalog.ts';

const USAGE = `usage: tsx upstream/replay/cli.ts (--catalog FILE | --synthetic N) [--port P] [--host H] [--page-size N]
  --catalog FILE   serve the tools of a catalogue file (data/catalogs/*.json)
  --synthetic N    serve N generated tools instead
  --port P         port to listen on (default 3005; 0: any free port)
  --host H         address to listen on (default 127.0.0.1)
  --page-size N    tools per tools/list page (default 100)
  -h, --help       print this and exit`;

/** Ends the process with `message` and the usage on stderr, exit code 2 (a usage error, never a stack trace). */
function usageError(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      catalog: { type: 'string' },
      synthetic: { type: 'string' },
      port: { type: 'string', default: '3005' },
      host: { type: 'string', default: '127.0.0.1' },
      'page-size': { type: 'string', default: '100' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  usageError((error as Error).message);
}

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.catalog === undefined && values.synthetic === undefined) usageError('one of --catalog or --synthetic is required');
for (const [option, value, least] of [
  ['--synthetic', values.synthetic, 1],
  ['--port', values.port, 0],
  ['--page-size', values['page-size'], 1],
] as const) {
  if (value !== undefined && !(/^\d+$/.test(value) && Number(value) >= least && (option !== '--port' || Number(value) <= 65535)))
    usageError(`${option}: expected a whole number${option === '--port' ? ' from 0 to 65535' : ` of at least ${least}`}, got ${JSON.stringify(value)}`);
}

const upstream = await startReplayUpstream({
  ...(values.synthetic !== undefined ? { tools: syntheticCatalog(Number(values.synthetic)) } : { catalogPath: values.catalog }),
  port: Number(values.port),
  host: values.host,
  pageSize: Number(values['page-size']),
});
console.log(`replay upstream: ${upstream.tools.length} tools at ${upstream.url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void upstream.close().finally(() => process.exit(0));
  });
}
