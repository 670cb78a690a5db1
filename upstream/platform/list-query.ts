import type { ParsedUrlQuery } from 'node:querystring';
import { HttpError } from './http-errors.ts';

/** How one query filter is parsed: free text, a UUID, a boolean, a YYYY-MM-DD date, or one of an enum. */
export type FilterKind = 'string' | 'uuid' | 'boolean' | 'date' | readonly string[];

export interface ListQuery {
  limit: number;
  offset: number;
  filters: Record<string, string | boolean | undefined>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const invalid = (field: string, message: string) => new HttpError(400, 'invalid_query', message, field);

function parseInteger(field: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw invalid(field, `${field} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function parseFilter(field: string, raw: string, kind: FilterKind): string | boolean {
  if (Array.isArray(kind)) {
    if (!kind.includes(raw)) throw invalid(field, `${field} must be one of ${kind.join(', ')}, got "${raw}"`);
    return raw;
  }
  switch (kind) {
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw invalid(field, `${field} must be true or false, got "${raw}"`);
      return raw === 'true';
    case 'uuid':
      if (!UUID.test(raw)) throw invalid(field, `${field} must be a UUID, got "${raw}"`);
      return raw.toLowerCase();
    case 'date':
      if (!DATE.test(raw) || Number.isNaN(Date.parse(raw))) throw invalid(field, `${field} must be a date YYYY-MM-DD, got "${raw}"`);
      return raw;
    default:
      if (raw.length === 0 || raw.length > 200) throw invalid(field, `${field} must be 1-200 characters`);
      return raw;
  }
}

/**
 * Parses `limit` (1-100, default `defaultLimit`), `offset` (>= 0, default 0) and the route's filters.
 * Unknown parameters, repeated parameters and bad values are 400 `invalid_query` naming the field.
 */
export function parseListQuery(query: ParsedUrlQuery, spec: Record<string, FilterKind>, defaultLimit = 50): ListQuery {
  const result: ListQuery = { limit: defaultLimit, offset: 0, filters: {} };
  for (const [field, value] of Object.entries(query)) {
    if (Array.isArray(value)) throw invalid(field, `${field} was given more than once`);
    if (value === undefined) continue;
    if (field === 'limit') result.limit = parseInteger(field, value, 1, 100);
    else if (field === 'offset') result.offset = parseInteger(field, value, 0, Number.MAX_SAFE_INTEGER);
    else if (field in spec) result.filters[field] = parseFilter(field, value, spec[field]!);
    else throw invalid(field, `Unknown query parameter ${field}; allowed: ${['limit', 'offset', ...Object.keys(spec)].join(', ')}`);
  }
  return result;
}

/** The page `{ data, count }` where `count` is the number of records on this page. */
export function page<T>(items: readonly T[], query: ListQuery): { data: T[]; count: number } {
  const data = items.slice(query.offset, query.offset + query.limit);
  return { data, count: data.length };
}

/** Whether `value` (YYYY-MM-DD or RFC 3339) falls within the optional inclusive `from`/`to` dates. */
export function withinDates(value: string, from: unknown, to: unknown): boolean {
  const day = value.slice(0, 10);
  return (typeof from !== 'string' || day >= from) && (typeof to !== 'string' || day <= to);
}
