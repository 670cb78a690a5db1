import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from './log.ts';
import { outsideTrace } from './tracing.ts';

/**
 * The HTTP request being served, as logging sees it, carried across awaits with AsyncLocalStorage:
 * its id and its child logger, nothing else. Everything a decision depends on (the credential, the
 * scopes, the request id sent upstream) is passed explicitly instead (auth/authenticated.ts). Set once
 * by the edge (http/edge.ts) and never changed.
 */
export interface RequestContext {
  readonly requestId: string;
  readonly log: Logger;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * The context of request `requestId`: its logger is `root`'s child carrying the request id, made on
 * first use (most requests log nothing but their access line, which is written without it: http/edge.ts).
 */
export function requestContext(requestId: string, root: Logger): RequestContext {
  let log: Logger | undefined;
  return {
    requestId,
    get log() {
      return (log ??= root.child({ requestId }));
    },
  };
}

/** Runs `fn` with `context` as the current request. */
export function runWithRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/**
 * The logger of the request being served (its lines carry the request id), or `fallback` in background
 * work (catalogue refresh, listen streams). The only read of the ambient request state: it feeds logging.
 */
export function requestLogger(fallback: Logger): Logger {
  return storage.getStore()?.log ?? fallback;
}

/** Runs `fn` outside any request (and its trace): for work that outlives the request that triggered it. */
export function runOutsideRequest<T>(fn: () => T): T {
  return storage.exit(() => outsideTrace(fn));
}
