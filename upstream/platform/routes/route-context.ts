import type Router from '@koa/router';
import { HttpError, notFound } from '../http-errors.ts';
import type { PlatformState } from '../auth.ts';
import type { PlatformStore } from '../store.ts';

/** What every route module receives: the router to register on, the store, and the clock (ms). */
export interface RouteContext {
  router: Router<PlatformState>;
  store: PlatformStore;
  now: () => number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The record whose `id` is the path parameter: 400 naming the parameter when malformed, 404 when absent. */
export function recordById<T extends { id: string }>(items: readonly T[], id: string, what: string, param = 'id'): T {
  if (!UUID.test(id)) throw new HttpError(400, 'invalid_path', `${param} must be a UUID, got "${id}"`, param);
  const record = items.find((item) => item.id === id.toLowerCase());
  if (!record) throw notFound(what, id);
  return record;
}

/** Newest first by the given timestamp field, then by id, so pages are stable. */
export function newestFirst<T extends { id: string }>(items: readonly T[], field: keyof T): T[] {
  return [...items].sort((a, b) => String(b[field]).localeCompare(String(a[field])) || a.id.localeCompare(b.id));
}
