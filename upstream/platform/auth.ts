import type { Context, Next } from 'koa';
import { authenticate, type Principal, type ResourceScope, type StoredCredential } from './credentials.ts';
import { HttpError } from './http-errors.ts';

/** Koa state the platform's routes rely on. */
export interface PlatformState {
  requestId: string;
  principal: Principal;
}

const header = (ctx: Context, name: string): string | undefined => {
  const value = ctx.get(name);
  return value === '' ? undefined : value;
};

/**
 * Authenticates every `/v1` and `/cpz` request: `X-CPZ-Key` + `X-CPZ-Secret`, or
 * `Authorization: Bearer <token>`. Missing or wrong credentials are a 401 (no hint which part was wrong).
 */
export function authenticator(credentials: () => readonly StoredCredential[]) {
  return async function authenticateRequest(ctx: Context, next: Next): Promise<void> {
    if (!ctx.path.startsWith('/v1/') && !ctx.path.startsWith('/cpz/')) return next();
    const key = header(ctx, 'x-cpz-key');
    const secret = header(ctx, 'x-cpz-secret');
    const authorization = header(ctx, 'authorization');
    const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (key === undefined && secret === undefined && authorization === undefined) {
      throw new HttpError(401, 'unauthorized', 'Missing credentials: send X-CPZ-Key and X-CPZ-Secret, or Authorization: Bearer <token>');
    }
    if ((key === undefined) !== (secret === undefined)) {
      throw new HttpError(401, 'unauthorized', 'Incomplete credentials: X-CPZ-Key and X-CPZ-Secret must be sent together');
    }
    if (key === undefined && bearer === undefined) {
      throw new HttpError(401, 'unauthorized', 'Unsupported Authorization scheme: use Authorization: Bearer <token>');
    }
    const principal = authenticate(credentials(), key !== undefined ? { key, secret } : { bearer });
    if (!principal) throw new HttpError(401, 'unauthorized', 'Invalid credentials: unknown API key, wrong secret, or unknown token');
    ctx.state.principal = principal;
    await next();
  };
}

/** Route guard: 403 `insufficient_scope` naming the scope the credential lacks and the route. */
export function requireScope(scope: ResourceScope) {
  return async function checkScope(ctx: Context, next: Next): Promise<void> {
    const principal = (ctx.state as PlatformState).principal;
    if (!principal.scopes.has(scope)) {
      const route = `${ctx.method} ${(ctx as Context & { _matchedRoute?: string })._matchedRoute ?? ctx.path}`;
      throw new HttpError(403, 'insufficient_scope', `Forbidden: this credential lacks the scope "${scope}" required by ${route}`, undefined, {
        required_scope: scope,
      });
    }
    await next();
  };
}
