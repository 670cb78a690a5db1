import type { Client } from '@modelcontextprotocol/client';
import { runInBackground } from './forward-scope.ts';
import type { UpstreamInfo } from './types.ts';

/** What a resource watch needs of its upstream's client. */
export interface WatchedUpstream {
  readonly transport: 'http' | 'stdio';
  /** What the upstream advertised (connecting first if needed), asked for nobody. */
  describe(): Promise<UpstreamInfo>;
  /** The client every caller shares (2026-07-28, stateless 2025-era, stdio), while connected. */
  sharedClient(): Client | undefined;
  /** A new session of a sessionful 2025-era upstream, for nobody (no caller's credential). */
  openSession(): Promise<Client>;
}

/**
 * Subscriptions to resource updates held at one upstream outside any caller's request (no caller
 * credential), and the listeners of each URI. The upstream's `notifications/resources/updated`, on
 * whichever stream carries it (a listen stream, a session's GET stream, a forwarded request's own
 * response stream, the stdio pipe), reach the listeners through {@link updated}.
 */
export class ResourceWatch {
  private readonly listeners = new Map<string, Set<(uri: string) => void>>();
  /** The background session of a sessionful 2025-era upstream that carries its subscriptions. */
  private session?: Promise<Client>;

  constructor(private readonly upstream: WatchedUpstream) {}

  /** The upstream says `uri` changed: tells its listeners. */
  updated(uri: string): void {
    for (const listener of this.listeners.get(uri) ?? []) listener(uri);
  }

  /**
   * Holds a subscription to updates of `uri` and calls `onUpdated` for each update; resolves to the
   * subscription's closer, or undefined when the upstream cannot deliver updates: it does not declare
   * `resources.subscribe`, or it is a stateless 2025-era HTTP server (no stream to carry them). A
   * 2026-07-28 upstream gets a `subscriptions/listen` of its own per URI; a sessionful 2025-era one
   * `resources/subscribe` on one background session (which opens its standalone GET stream); stdio
   * `resources/subscribe` on its one session.
   */
  async watch(uri: string, onUpdated: (uri: string) => void): Promise<(() => Promise<void>) | undefined> {
    const info = await runInBackground(() => this.upstream.describe());
    if (info.capabilities.resources?.subscribe !== true) return undefined;
    const listeners = (this.listeners.get(uri) ?? new Set<(uri: string) => void>()).add(onUpdated);
    this.listeners.set(uri, listeners);
    const forget = () => {
      listeners.delete(onUpdated);
      if (listeners.size === 0) this.listeners.delete(uri);
    };
    if (info.era === 'modern') {
      const subscription = await runInBackground(() => this.upstream.sharedClient()!.listen({ resourceSubscriptions: [uri] }));
      return async () => {
        forget();
        await subscription.close();
      };
    }
    if (this.upstream.transport === 'http' && !info.sessionful) {
      forget();
      return undefined;
    }
    const client = this.upstream.transport === 'stdio' ? this.upstream.sharedClient()! : await this.backgroundSession();
    await runInBackground(() => client.subscribeResource({ uri }));
    return async () => {
      forget();
      if (!this.listeners.has(uri)) await runInBackground(() => client.unsubscribeResource({ uri })).catch(() => undefined);
    };
  }

  /** Closes the background session, if one was opened. */
  async close(): Promise<void> {
    await this.session?.then((c) => c.close()).catch(() => undefined);
  }

  private backgroundSession(): Promise<Client> {
    this.session ??= runInBackground(() => this.upstream.openSession());
    this.session.catch(() => (this.session = undefined));
    return this.session;
  }
}
