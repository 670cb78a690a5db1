import type { Context, Next } from 'koa';

/**
 * An API error answered as `{ error: { code, message, field?, ...details } }` with `status`.
 * `field` names the offending query parameter or body path (dotted, e.g. `targets.0.weight`).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: string): HttpError => new HttpError(404, 'not_found', `No ${what} with id ${id}`);

/** Maps thrown errors to the JSON error body; anything unexpected is a 500 that names no internals. */
export function errorResponder(onUnexpected: (error: unknown, ctx: Context) => void) {
  return async function respondWithErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new HttpError(404, 'not_found', `No route ${ctx.method} ${ctx.path}`);
      }
      if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = { error: { code: 'method_not_allowed', message: `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}` } };
        ctx.status = 405;
      }
    } catch (error) {
      if (error instanceof HttpError) {
        ctx.status = error.status;
        ctx.body = { error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), ...error.details } };
        if (error.status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="cpz"');
        return;
      }
      onUnexpected(error, ctx);
      ctx.status = 500;
      ctx.body = { error: { code: 'internal_error', message: 'The platform failed to process the request' } };
    }
  };
}
