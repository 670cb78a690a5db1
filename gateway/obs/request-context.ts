import type { Logger } from './log.ts';

/**
 * The logger of the HTTP request `requestId`: `root`'s child, so its lines carry the request id; `root`
 * itself for work no request asked for (catalogue warm-up, refreshes, listen streams). The request id
 * travels explicitly (auth/authenticated.ts, upstream/forward-scope.ts `OnBehalfOf`), never in ambient
 * state: an AsyncLocalStorage in the process turns on async hooks for every promise, which measured
 * 0.08-0.09 ms of CPU per tools/call (docs/performance.md).
 */
export function requestLog(root: Logger, requestId: string | undefined): Logger {
  return requestId === undefined ? root : root.child({ requestId });
}
