import { LRUCache } from 'lru-cache';
import type { Tool } from '@modelcontextprotocol/client';

/** A tools/list answer ready to serve: the tool definitions, serialised at most once, and their size. */
export interface Listing {
  readonly tools: Tool[];
  /** `JSON.stringify(tools)` as UTF-8, made on first use: the fast path (fast-path.ts) writes it instead of serialising per request. */
  readonly json: Buffer;
  /** Bytes of {@link json} (observed as `mcp_tools_list_bytes`). */
  readonly bytes: number;
  /**
   * Bytes derived from this listing once and kept beside it (a compressed answer body, by `key`),
   * counted in the cache's byte bound like the JSON.
   */
  derived(key: string, make: () => Buffer): Buffer;
}

/** What an entry costs besides its bytes: the entry, its key and the tools array (the definitions are the catalogue's). */
const ENTRY_OVERHEAD = 512;
const PER_TOOL = 16;

/**
 * Built tools/list answers keyed by surface, catalogue version and effective scope set, so a warm
 * tools/list is a lookup (and, on the fast path, a string copy). Entries are immutable and shared by
 * every caller with the same key. The JSON is made when a tools/list first needs it, not when the
 * listing is built: search_tools reads the compact listing for its own definition only, and at 10,000
 * tools serialising it would cost every new catalogue version some 75 ms.
 *
 * Bounded by bytes, not entries (`cache.listingBytes`): an entry counts its JSON and every derived
 * form (compressed bodies) once they exist, so at 10,000 tools (~8 MiB a listing) the bound holds
 * whatever the number of scope sets; least recently used entries go first. A listing larger than the
 * whole bound is served but not kept.
 */
export class ListingCache {
  private readonly entries: LRUCache<string, { listing: Listing; size: number }>;

  /**
   * @param changed - told the cache's bytes and entry count after each change (metrics gauges).
   * @param evicted - told of each listing the byte bound pushed out (`evicted`: least recently used, to
   *   make room) or never kept (`oversized`: larger than the whole bound once serialised).
   */
  constructor(
    private readonly maxBytes: number,
    private readonly changed: (bytes: number, entries: number) => void = () => {},
    private readonly evicted: (reason: 'evicted' | 'oversized') => void = () => {},
  ) {
    this.entries = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (entry) => entry.size,
      // 'set' is a listing re-set under its grown size (or refused as larger than the bound, counted in get), 'delete' never happens.
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') evicted('evicted');
      },
    });
  }

  /** The cached listing for `key`, building it with `build` on a miss. */
  get(key: string, build: () => Tool[]): Listing {
    const entry = this.entries.get(key);
    if (entry) return entry.listing;
    const listing = lazyListing(build(), (size) => {
      // Re-set under a fresh wrapper: lru-cache recomputes an entry's size only when the value changes.
      const current = this.entries.peek(key);
      if (current?.listing === listing) {
        // lru-cache drops an entry larger than maxSize on set: it is served this once, not kept.
        if (size > this.maxBytes) this.evicted('oversized');
        this.entries.set(key, { listing, size });
      }
      this.changed(this.entries.calculatedSize, this.entries.size);
    });
    this.entries.set(key, { listing, size: ENTRY_OVERHEAD + PER_TOOL * listing.tools.length });
    this.changed(this.entries.calculatedSize, this.entries.size);
    return listing;
  }

  /** Bytes the cached listings hold now (JSON and derived forms, plus a per-entry estimate). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** Listings cached now. */
  get size(): number {
    return this.entries.size;
  }
}

function lazyListing(tools: Tool[], resized: (size: number) => void): Listing {
  let json: Buffer | undefined;
  const derived = new Map<string, Buffer>();
  const size = () => ENTRY_OVERHEAD + PER_TOOL * tools.length + (json?.length ?? 0) + [...derived.values()].reduce((n, b) => n + b.length, 0);
  return {
    tools,
    get json() {
      if (json === undefined) {
        json = Buffer.from(JSON.stringify(tools));
        resized(size());
      }
      return json;
    },
    get bytes() {
      return this.json.length;
    },
    derived(key, make) {
      let bytes = derived.get(key);
      if (bytes === undefined) {
        bytes = make();
        derived.set(key, bytes);
        resized(size());
      }
      return bytes;
    },
  };
}
