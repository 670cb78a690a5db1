/**
 * A catalogue cache built by a reload that changes its upstream's list policy (a `repolicy` reload)
 * takes the earlier cache's lists over as expired copies: a read refetches under the new policy, and a
 * copy serves only when that fails. A merged read (several upstreams: `stale`) must not take a copy
 * the earlier policy called `public` at once: fetched with one caller's credential, under a policy now
 * `private` it is that caller's alone (review of the stale-while-refresh read).
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { loadConfig } from '../../config/load.ts';
import { CatalogCache } from '../../gateway/catalog/catalog-cache.ts';
import { createLogger } from '../../gateway/obs/log.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { listClient } from '../helpers/list-client.ts';

/** An upstream whose list names the caller it was fetched for (its only tool is `for_<digest>`). */
const callerNamingUpstream = (config: ReturnType<typeof loadConfig>) =>
  listClient(config, (who): Tool[] => [{ name: `for_${who}`, inputSchema: { type: 'object' } }]).client;

/** The upstream's lists made `public` by the gateway's override, or (none) as the upstream says: `private`. */
const configWith = (cacheScope?: 'public') =>
  loadConfig({ env: {}, overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp', ...(cacheScope ? { catalog: { cacheScope } } : {}) }] } });

describe('a reload that drops the override making a private list public', () => {
  it("serves a merged read the caller's own list, not the copy fetched with another caller's credential", async () => {
    const before = configWith('public');
    // The override removed: the upstream's own word (private) holds again.
    const after = configWith();
    const log = createLogger({ ...before, log: { ...before.log, level: 'silent' } });
    const metrics = createMetrics();
    const old = new CatalogCache(callerNamingUpstream(before), before.cache, metrics, log, undefined, { policy: before.upstreams[0] });
    let next: CatalogCache | undefined;
    try {
      const alice = { credential: { digest: 'alice' } as never };
      const bob = { credential: { digest: 'bob' } as never };
      expect((await old.served(alice)).catalog.tools.map((t) => t.name)).toEqual(['for_alice']);
      // The reload comes later than the fetch (a copy that has lived a while).
      await new Promise((resolve) => setTimeout(resolve, 20));
      next = new CatalogCache(callerNamingUpstream(after), after.cache, metrics, log, undefined, { policy: after.upstreams[0], inherit: old });
      expect((await next.served(bob, { stale: true })).catalog.tools.map((t) => t.name)).toEqual(['for_bob']);
    } finally {
      await old.close();
      await next?.close();
    }
  });
});
