import { LRUCache } from 'lru-cache';
import type { Tool } from '@modelcontextprotocol/server';

/** A tools/list answer ready to serve: the tool definitions and their serialised size. */
export interface Listing {
  readonly tools: Tool[];
  /** Bytes of the JSON `tools` array (observed as `mcp_tools_list_bytes`). */
  readonly bytes: number;
}

/**
 * Built tools/list answers keyed by surface, catalogue version and effective scope set, so a warm
 * tools/list is a lookup. Entries are immutable and shared by every caller with the same key.
 */
export class ListingCache {
  private readonly entries = new LRUCache<string, Listing>({ max: 2000 });

  /** The cached listing for `key`, building it with `build` on a miss. */
  get(key: string, build: () => Tool[]): Listing {
    let listing = this.entries.get(key);
    if (!listing) {
      const tools = build();
      listing = { tools, bytes: Buffer.byteLength(JSON.stringify(tools)) };
      this.entries.set(key, listing);
    }
    return listing;
  }
}
