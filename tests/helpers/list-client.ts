import type { Tool } from '@modelcontextprotocol/client';
import type { GatewayConfig } from '../../config/types.ts';
import type { UpstreamClient } from '../../gateway/upstream/client.ts';

/**
 * The part of an UpstreamClient a CatalogCache reads, for unit tests of the cache alone: an upstream named
 * `u` (the config's first), always up, whose every list is `toolsFor(who)` (`who`: the credential digest
 * it was fetched with, or `anonymous`), its items all on one page, `private` for an hour. `fetches()`
 * counts the lists asked of it.
 */
export function listClient(config: GatewayConfig, toolsFor: (who: string) => Tool[]): { client: UpstreamClient; fetches: () => number } {
  let fetches = 0;
  const client = {
    name: 'u',
    config: config.upstreams[0]!,
    callerScoped: true,
    health: () => ({ state: 'up' }),
    onListChanged: () => () => {},
    onReconnect: () => () => {},
    async listAll(_method: string, onBehalfOf: { credential?: { digest: string } }, onPage?: (items: unknown[]) => void) {
      fetches++;
      const items = toolsFor(onBehalfOf.credential?.digest ?? 'anonymous');
      onPage?.(items);
      return { items, ttlMs: 3_600_000, cacheScope: 'private' as const };
    },
  };
  return { client: client as unknown as UpstreamClient, fetches: () => fetches };
}
