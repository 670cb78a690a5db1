import type { Client } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import type { UpstreamConfig } from '../../config/types.ts';
import type { OnBehalfOf } from './forward-scope.ts';

/**
 * The sessions of a sessionful 2025-era HTTP upstream (its handshake issued an Mcp-Session-Id): one per
 * credential digest, so that everything a session sends is for one credential (one for every caller when
 * `forwardCredentials` is off), in a bounded LRU pool (`sessions.maxEntries`; a session pushed out is
 * closed). A session is opened on first use by `open`, and forgotten when opening it fails.
 */
export class SessionPool {
  private readonly sessions: LRUCache<string, Promise<Client>>;

  constructor(
    private readonly config: UpstreamConfig,
    private readonly open: (owner: OnBehalfOf) => Promise<Client>,
  ) {
    this.sessions = new LRUCache({ max: config.sessions.maxEntries, dispose: (client) => void client.then((c) => c.close()).catch(() => {}) });
  }

  /** The session of `onBehalfOf`'s credential, opened for it if there is none. */
  client(onBehalfOf: OnBehalfOf): Promise<Client> {
    const key = this.key(onBehalfOf);
    let client = this.sessions.get(key);
    if (!client) {
      client = this.open(onBehalfOf);
      client.catch(() => this.sessions.delete(key));
      this.sessions.set(key, client);
    }
    return client;
  }

  /** Takes `client` as the session of `onBehalfOf`'s credential (the connection's own handshake opened it). */
  adopt(onBehalfOf: OnBehalfOf, client: Client): void {
    this.sessions.set(this.key(onBehalfOf), Promise.resolve(client));
  }

  /** Closes and drops the session of `onBehalfOf`'s credential (the upstream forgot it). */
  forget(onBehalfOf: OnBehalfOf): void {
    this.sessions.delete(this.key(onBehalfOf));
  }

  /** Closes and drops every session. */
  clear(): void {
    this.sessions.clear();
  }

  /** Sessions follow the credential that is forwarded; with forwarding off, every caller shares one. */
  private key(onBehalfOf: OnBehalfOf): string {
    if (!this.config.forwardCredentials) return 'shared';
    return onBehalfOf.credential?.digest ?? 'anonymous';
  }
}
