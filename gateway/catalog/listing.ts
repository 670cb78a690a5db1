import { LRUCache } from 'lru-cache';
import type { Tool } from '@modelcontextprotocol/client';

/** A tools/list answer ready to serve: the tool definitions, serialised at most once, and their size. */
export interface Listing {
  readonly tools: Tool[];
  /** `JSON.stringify(tools)` as UTF-8, made on first use: the fast path (fast-path.ts) writes it instead of serialising per request. */
  readonly json: Buffer;
  /** Bytes of {@link json} (observed as `mcp_tools_list_bytes`). */
  readonly bytes: number;
}

/**
 * Built tools/list answers keyed by surface, catalogue version and effective scope set, so a warm
 * tools/list is a lookup (and, on the fast path, a string copy). Entries are immutable and shared by
 * every caller with the same key. The JSON is made when a tools/list first needs it, not when the
 * listing is built: search_tools reads the compact listing for its own definition only, and at 10,000
 * tools serialising it would cost every new catalogue version some 75 ms.
 */
export class ListingCache {
  private readonly entries = new LRUCache<string, Listing>({ max: 2000 });

  /** The cached listing for `key`, building it with `build` on a miss. */
  get(key: string, build: () => Tool[]): Listing {
    let listing = this.entries.get(key);
    if (!listing) {
      listing = lazyListing(build());
      this.entries.set(key, listing);
    }
    return listing;
  }
}

function lazyListing(tools: Tool[]): Listing {
  let json: Buffer | undefined;
  return {
    tools,
    get json() {
      return (json ??= Buffer.from(JSON.stringify(tools)));
    },
    get bytes() {
      return this.json.length;
    },
  };
}
