import { AsyncLocalStorage } from 'node:async_hooks';
import type { Credential } from '../auth/credentials.ts';
import type { Logger } from './log.ts';
import type { ScopeResult } from '../auth/scope-cache.ts';

/**
 * What the gateway knows about the HTTP request being served, carried across awaits with
 * AsyncLocalStorage so the upstream transport's `fetch` can attach the caller's credential and request
 * id without any layer in between passing them (the SDK's per-request `headers` option drops
 * `authorization` and `mcp-*`, so the fetch is the only place that can).
 */
export interface RequestContext {
  requestId: string;
  log: Logger;
  credential?: Credential;
  /** This request's scope lookup, started at most once (edge pre-check and tools/list share it). */
  scopes?: Promise<ScopeResult>;
  /** Messages of this POST that reached a server instance (message-metrics.ts counts the others). */
  dispatched?: string[];
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` with `context` as the current request. */
export function runWithRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request being served, or undefined in background work (catalogue refresh, listen streams). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** Runs `fn` outside any request: for work that outlives the request that triggered it. */
export function runOutsideRequest<T>(fn: () => T): T {
  return storage.exit(fn);
}
