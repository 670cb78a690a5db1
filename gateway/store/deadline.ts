/**
 * A deadline on one store operation (Redis or any other): the operation's own outcome if it settles
 * within `ms`, else a rejection with `late()`'s error. The timer is cleared either way and never keeps the
 * process alive. The operation itself is not stopped (a Redis command cannot be recalled): a caller that
 * needs it gone closes its connection.
 */
export function withinDeadline<T>(operation: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
    timer.unref();
  });
  return Promise.race([operation, deadline]).finally(() => clearTimeout(timer));
}

/** The error {@link withinDeadline} rejects with when the deadline passed (`instanceof` tells it from the operation's own). */
export class DeadlineExceeded extends Error {
  constructor(what: string, ms: number) {
    super(`${what} exceeded ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}
