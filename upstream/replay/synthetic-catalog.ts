/**
 * Synthetic-but-realistic catalogues of any size, built from the real catalogues in data/catalogs
 * ( livemcpbench 527 tools from 70 servers, GitHub's 117): the real tools repeated
 * under distinct server prefixes. Copy 1 of server `s` keeps the key `s`, copy n becomes `s-n`; every tool
 * is named `<server key>__<name>` so that names are unique at any size. Deterministic.
 *
 * CLI: `tsx upstream/replay/synthetic-catalog.ts --size 2000 [--out file.json]` writes `{ tools: [...] }`
 * (stdout without --out), ready for `startReplayUpstream({ catalogPath })`.
 */
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { readCatalog, type CatalogEntry } from './catalog-file.ts';
import { replayTools, SERVER_SEPARATOR } from './replay-tools.ts';

const CATALOGS = resolve(dirname(fileURLToPath(import.meta.url)), '../../data/catalogs');

/** The real tools the synthetic catalogues repeat, each with a server key. */
export function baseEntries(catalogsDir = CATALOGS): CatalogEntry[] {
  const livemcpbench = readCatalog(resolve(catalogsDir, 'livemcpbench-tools.json'));
  const github = readCatalog(resolve(catalogsDir, 'github-mcp-server-tools.json')).map((e) => ({ ...e, serverKey: 'github', category: 'Code' }));
  return [...livemcpbench, ...github];
}

/** A catalogue of exactly `size` tools with unique names (see module docstring). */
export function syntheticCatalog(size: number, base: CatalogEntry[] = baseEntries()): CatalogEntry[] {
  if (!Number.isSafeInteger(size) || size < 1) throw new Error(`size must be a positive integer, got ${size}`);
  if (base.length === 0) throw new Error('no base tools to repeat');
  return Array.from({ length: size }, (_, i) => {
    const entry = base[i % base.length];
    const copy = Math.floor(i / base.length) + 1;
    const serverKey = copy === 1 ? (entry.serverKey ?? 'server') : `${entry.serverKey ?? 'server'}-${copy}`;
    return { ...entry, serverKey, tool: { ...entry.tool, name: `${serverKey}${SERVER_SEPARATOR}${entry.tool.name}` } };
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { size: { type: 'string' }, out: { type: 'string' } } });
  const size = Number(values.size);
  const json = JSON.stringify({ tools: replayTools(syntheticCatalog(size)) }, null, 1);
  if (values.out) writeFileSync(values.out, json);
  else process.stdout.write(`${json}\n`);
}
