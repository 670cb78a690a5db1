import { LRUCache } from 'lru-cache';
import { buildToolIndexAsync, type ToolIndex } from '../search/index.ts';
import type { Catalog } from './catalog.ts';
import type { Logger } from './log.ts';

/**
 * One search index per catalogue version, shared by every caller: scope filtering is a `filter` on
 * the shared index (search/index.ts), never a rebuild per caller. Concurrent misses share one build,
 * which yields to the event loop between chunks so a large catalogue does not stall other requests.
 * A failed build is not cached; the next search tries again.
 */
export class SearchIndexCache {
  // A few versions: the current one, and the one before it while callers move over.
  private readonly entries = new LRUCache<string, Promise<ToolIndex>>({ max: 4 });

  constructor(private readonly log: Logger) {}

  /** The index of `catalog` (tools under their exposed names, with category and upstream). */
  get(catalog: Catalog): Promise<ToolIndex> {
    let index = this.entries.get(catalog.version);
    if (!index) {
      index = this.build(catalog);
      this.entries.set(catalog.version, index);
      index.catch(() => this.entries.delete(catalog.version));
    }
    return index;
  }

  private async build(catalog: Catalog): Promise<ToolIndex> {
    const started = performance.now();
    const index = await buildToolIndexAsync(
      catalog.tools.map((tool) => ({
        name: tool.name,
        title: tool.definition.title,
        description: tool.definition.description,
        inputSchema: tool.definition.inputSchema,
        category: tool.category,
        upstream: tool.upstream,
      })),
    );
    this.log.info({ version: catalog.version.slice(0, 12), tools: index.size, ms: Math.round(performance.now() - started) }, 'search index built');
    return index;
  }
}
