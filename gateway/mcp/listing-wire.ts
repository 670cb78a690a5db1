import type { Listing } from '../catalog/listing.ts';
import type { Era } from '../wire/revisions.ts';
import { toolsForEra } from '../wire/server-codec.ts';

const cached: Readonly<Record<Era, WeakMap<Listing, Buffer>>> = { modern: new WeakMap(), legacy: new WeakMap() };

/**
 * A listing's `tools` as JSON for a tools/list answer of `era`, through the SDK's codec for that era
 * (wire/server-codec.ts `toolsForEra`: 2026-07-28 drops `execution`, 2025 wraps a non-object
 * outputSchema root): the listing's own cached bytes when the codec changes nothing, else the codec's
 * tools serialised once per listing and counted in its bytes (listing.ts `derived`).
 */
export function listingToolsJson(listing: Listing, era: Era): Buffer {
  let json = cached[era].get(listing);
  if (json === undefined) {
    const tools = toolsForEra(era, listing.tools);
    json = tools === listing.tools ? listing.json : listing.derived(`tools|${era}`, () => Buffer.from(JSON.stringify(tools)));
    cached[era].set(listing, json);
  }
  return json;
}
