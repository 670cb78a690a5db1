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

const { values } = parseArgs({
  options: {
    catalog: { type: 'string' },
    synthetic: { type: 'string' },
    port: { type: 'string', default: '3005' },
    host: { type: 'string', default: '127.0.0.1' },
    'page-size': { type: 'string', default: '100' },
  },
});

if (values.catalog === undefined && values.synthetic === undefined) {
  console.error('usage: tsx upstream/replay/cli.ts (--catalog FILE | --synthetic N) [--port P] [--host H] [--page-size N]');
  process.exit(2);
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
