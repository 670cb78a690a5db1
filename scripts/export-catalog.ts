/**
 * `npm run export:catalog`: writes tool-catalog.json (the reference upstream's tools/list result,
 * sorted by name) from the server's own tool definitions. Commit the result; a test fails when stale.
 */
import { writeFileSync } from 'node:fs';
import { catalogSnapshot } from '../upstream/server/catalog-snapshot.ts';
import { parseCommandLine } from '../gateway/cli/args.ts';

parseCommandLine({
  usage: `
Usage: npm run export:catalog (tsx scripts/export-catalog.ts)

Writes tool-catalog.json: the reference upstream's tools/list result, sorted by name.

Options:
  -h, --help   show this help
`,
  options: {},
});

const target = new URL('../tool-catalog.json', import.meta.url);
const snapshot = catalogSnapshot();
writeFileSync(target, snapshot);
console.log(`wrote ${target.pathname}: ${JSON.parse(snapshot).tools.length} tools, ${Buffer.byteLength(snapshot)} bytes`);
