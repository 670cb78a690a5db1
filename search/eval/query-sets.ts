/**
 * The labelled query sets of the search evaluation (tests and bench/search) and the catalogues they are asked against.
 * Paths resolve from the project root: the catalogues and queries are the project's own copies in data/ (data/README.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { SearchableTool } from '../index.ts';
import { readCatalog, type CatalogEntry } from '../../upstream/replay/catalog-file.ts';
import { metaKeywords } from '../meta-keywords.ts';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** data/ of the checkout: public catalogues and labelled queries, each with its source and licence. */
export const DATA_DIR = resolve(PROJECT_ROOT, 'data');

/** One labelled query: any `gold` name is a hit; all of them count for recall. */
export type LabelledQuery = { id?: string; query: string; gold: string[]; category?: string };

export type QuerySet = {
  name: string;
  catalogPath: string;
  entries: CatalogEntry[];
  tools: SearchableTool[];
  queries: LabelledQuery[];
};

/** Parses a JSON-lines query file; throws naming the line that is not a labelled query. */
export function readQueries(path: string): LabelledQuery[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const q = JSON.parse(line) as LabelledQuery;
      if (typeof q.query !== 'string' || !Array.isArray(q.gold) || q.gold.length === 0) {
        throw new Error(`${path}:${i + 1}: expected {"query": string, "gold": [names]}`);
      }
      return q;
    });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function titleOf(tool: CatalogEntry['tool']): { title?: string } {
  const title = tool.title ?? tool.annotations?.title;
  return typeof title === 'string' ? { title } : {};
}

/** The catalogue's tools as the index takes them: upstream = the file's server key, if any; annotations
 *  and `_meta` keywords as the gateway passes them (gateway/catalog/search-index-cache.ts). */
export function searchableTools(entries: CatalogEntry[]): SearchableTool[] {
  return entries.map(({ tool, serverKey, category }) => ({
    name: tool.name,
    ...(isObject(tool.annotations) ? { annotations: tool.annotations as SearchableTool['annotations'] } : {}),
    ...(metaKeywords(tool._meta).length > 0 ? { keywords: metaKeywords(tool._meta) } : {}),
    ...titleOf(tool),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(category !== undefined ? { category } : {}),
    ...(serverKey !== undefined ? { upstream: serverKey } : {}),
  }));
}

function querySet(name: string, catalogPath: string, queriesPath: string): QuerySet {
  const entries = readCatalog(catalogPath);
  return { name, catalogPath, entries, tools: searchableTools(entries), queries: readQueries(queriesPath) };
}

/**
 * The query sets whose catalogues exist; `skipped` says why any other is missing. `cpzaiCatalog` replaces
 * the committed tool-catalog.json (to measure a catalogue being edited).
 */
export function loadQuerySets(opts: { cpzaiCatalog?: string } = {}): { sets: QuerySet[]; skipped: string[] } {
  const sets: QuerySet[] = [];
  const skipped: string[] = [];
  const cpzai = resolve(opts.cpzaiCatalog ?? resolve(PROJECT_ROOT, 'tool-catalog.json'));
  if (existsSync(cpzai)) sets.push(querySet('cpzai-dev', cpzai, resolve(DATA_DIR, 'queries/cpzai-dev.jsonl')));
  else skipped.push(`cpzai-dev: ${cpzai} does not exist yet (npm run export:catalog writes it)`);
  sets.push(querySet('livemcpbench-dev', resolve(DATA_DIR, 'catalogs/livemcpbench-tools.json'), resolve(DATA_DIR, 'queries/livemcpbench-dev.jsonl')));
  return { sets, skipped };
}
