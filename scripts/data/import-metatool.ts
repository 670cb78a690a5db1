/**
 * Converts MetaTool (github.com/HowieHwong/MetaTool, MIT) into the project's data/ formats: its 199
 * tools (dataset/plugin_des.json: a name and a one-line description each, no schemas) as one flat
 * catalogue, and a fixed sample of its labelled queries: for each tool, the one of its single-tool
 * queries (dataset/data/all_clean_data.csv) whose SHA-256 is least, and the 60 two-tool queries
 * (dataset/data/multi_tool_query_golden.json) of least SHA-256. Hashes, not a random draw: the same
 * sample on every machine, with nothing to seed.
 *
 *   npx tsx scripts/data/import-metatool.ts <MetaTool checkout>
 *
 * writes data/catalogs/metatool-tools.json and data/queries/metatool-dev.jsonl.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const MULTI = 60;
const source = process.argv[2];
if (!source) throw new Error('usage: import-metatool.ts <MetaTool checkout>');
const root = resolve(import.meta.dirname, '../..');
const hash = (text: string): string => createHash('sha256').update(text).digest('hex');

const descriptions = JSON.parse(readFileSync(resolve(source, 'dataset/plugin_des.json'), 'utf8')) as Record<string, string>;
const tools = Object.entries(descriptions).map(([name, description]) => ({ name, description: description.trim(), inputSchema: { type: 'object' } }));

/** RFC 4180 rows of a two-column CSV (quoted fields may hold commas, quotes and newlines). */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

const [header, ...rows] = csvRows(readFileSync(resolve(source, 'dataset/data/all_clean_data.csv'), 'utf8'));
if (header.join(',') !== 'Query,Tool') throw new Error(`unexpected header ${header.join(',')}`);
const single = new Map<string, string>();
for (const [query, tool] of rows) {
  if (!query || !(tool in descriptions)) continue;
  const best = single.get(tool);
  if (best === undefined || hash(query) < hash(best)) single.set(tool, query);
}
const multi = (JSON.parse(readFileSync(resolve(source, 'dataset/data/multi_tool_query_golden.json'), 'utf8')) as { query: string; tool: string[] }[])
  .filter((q) => q.tool.every((t) => t in descriptions))
  .sort((a, b) => (hash(a.query) < hash(b.query) ? -1 : 1))
  .slice(0, MULTI);
const lines = [
  ...[...single]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([tool, query]) => ({ id: `metatool-single-${hash(query).slice(0, 12)}`, query: query.trim(), gold: [tool] })),
  ...multi.map((q) => ({ id: `metatool-multi-${hash(q.query).slice(0, 12)}`, query: q.query.trim(), gold: q.tool })),
].map((q) => JSON.stringify(q));
writeFileSync(resolve(root, 'data/catalogs/metatool-tools.json'), `${JSON.stringify(tools, null, 1)}\n`);
writeFileSync(resolve(root, 'data/queries/metatool-dev.jsonl'), `${lines.join('\n')}\n`);
console.log(`${tools.length} tools, ${lines.length} queries`);
