/**
 * The `subscriptions/listen` streams open per account on this replica (mcp/admission.ts counts one from
 * its admission until its response closes): one account cannot hold an unbounded number of long-lived
 * streams, each a socket, the SDK's state for it and the upstream resource subscriptions it asked for
 * (`limits.listenStreamsPerAccount`). In memory: a stream lives on one connection to one replica, so each
 * replica counts its own. A live reload hands the counts over with the streams still open (gateway.ts).
 */
export class ListenStreams {
  private readonly open = new Map<string, number>();

  /**
   * One more stream for `account` (the keyed digest the rate budgets count, auth/credentials.ts `account`,
   * else the credential's digest) when it has fewer than `max` open: the function that releases it
   * (once, whatever calls it later), else undefined.
   */
  acquire(account: string, max: number): (() => void) | undefined {
    const mine = this.open.get(account) ?? 0;
    if (mine >= max) return undefined;
    this.open.set(account, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(account) ?? 1) - 1;
      if (left > 0) this.open.set(account, left);
      else this.open.delete(account);
    };
  }
}
