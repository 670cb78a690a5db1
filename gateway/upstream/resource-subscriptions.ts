/**
 * The relay of resource subscriptions (spec 2026-07-28 basic/patterns/subscriptions,
 * `resourceSubscriptions`): while at least one caller's `subscriptions/listen` stream asks for a URI, the
 * gateway holds ONE subscription to it at the upstream that owns it, and each `notifications/resources/updated`
 * the upstream sends is published to the gateway's listen streams, whose router (the SDK's) delivers it
 * to the streams that asked for that URI. Reference-counted per URI: the upstream subscription ends when
 * the last caller's stream closes.
 *
 * The upstream side is an {@link UpstreamWatch}: a 2026-07-28 upstream gets a `subscriptions/listen` of
 * its own, a 2025-era one `resources/subscribe` on a session that can carry its notifications (see
 * UpstreamClient.watchResource). Both run outside any caller's request, without a caller's credential.
 */

/** Opens the upstream subscription to `uri`; resolves to its closer, or undefined when it cannot be had. */
export type UpstreamWatch = (uri: string, onUpdated: (uri: string) => void) => Promise<(() => Promise<void>) | undefined>;

interface Entry {
  count: number;
  /** The open upstream subscription (its closer), once known. */
  opened: Promise<(() => Promise<void>) | undefined>;
}

export interface SubscriptionLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export class ResourceSubscriptionRelay {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param watch - opens the upstream subscription of a URI (routing to its owner is the watch's job).
   * @param publish - hands an update to the gateway's listen streams (the SDK bus: `notify.resourceUpdated`).
   */
  constructor(
    private readonly watch: UpstreamWatch,
    private readonly publish: (uri: string) => void,
    private readonly log: SubscriptionLog,
  ) {}

  /** The URIs with an upstream subscription held (or being opened), for tests and metrics. */
  get watched(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Holds the upstream subscriptions of `uris` for one caller's stream; the returned release (idempotent)
   * drops them. A URI no upstream can watch is held as well (the caller's stream simply receives nothing
   * for it), and logged once when first asked for.
   */
  retain(uris: readonly string[]): () => void {
    const unique = [...new Set(uris.filter((u) => typeof u === 'string' && u.length > 0))];
    for (const uri of unique) {
      const entry = this.entries.get(uri);
      if (entry) {
        entry.count++;
        continue;
      }
      const opened = this.watch(uri, (updated) => this.publish(updated)).then(
        (close) => {
          if (!close) this.log.warn({ uri }, 'no upstream can deliver updates of this resource; the subscription receives none');
          return close;
        },
        (error: unknown) => {
          this.log.warn({ uri, err: (error as Error)?.message }, 'upstream resource subscription failed; the subscription receives no updates');
          return undefined;
        },
      );
      this.entries.set(uri, { count: 1, opened });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const uri of unique) this.release(uri);
    };
  }

  private release(uri: string): void {
    const entry = this.entries.get(uri);
    if (!entry) return;
    if (--entry.count > 0) return;
    this.entries.delete(uri);
    void entry.opened
      .then((close) => close?.())
      .catch((error: unknown) => this.log.info({ uri, err: (error as Error)?.message }, 'closing an upstream resource subscription failed'));
  }

  /** Ends every upstream subscription (gateway shutdown). */
  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(entries.map(async (e) => (await e.opened)?.()));
  }
}

/** The URIs a `subscriptions/listen` request asks updates for (`params.notifications.resourceSubscriptions`). */
export function requestedResourceSubscriptions(message: unknown): string[] {
  if (typeof message !== 'object' || message === null || (message as { method?: unknown }).method !== 'subscriptions/listen') return [];
  const notifications = ((message as { params?: { notifications?: unknown } }).params?.notifications ?? {}) as { resourceSubscriptions?: unknown };
  return Array.isArray(notifications.resourceSubscriptions) ? notifications.resourceSubscriptions.filter((u): u is string => typeof u === 'string') : [];
}

/**
 * A `subscriptions/listen` request with its `notifications.resourceSubscriptions` replaced by `uris`
 * (removed when empty): the filter the SDK then honours, acknowledges and delivers by.
 */
export function withResourceSubscriptions(message: Record<string, unknown>, uris: readonly string[]): Record<string, unknown> {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const { resourceSubscriptions: _dropped, ...rest } = (params.notifications ?? {}) as Record<string, unknown>;
  return { ...message, params: { ...params, notifications: uris.length ? { ...rest, resourceSubscriptions: [...uris] } : rest } };
}
