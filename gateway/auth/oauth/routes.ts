import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { INTERACTION_PREFIX, isAuthorizationServerPath } from './paths.ts';

/**
 * The authorization server as Koa middleware: the interaction pages (`interaction`), then everything
 * oidc-provider serves; other paths pass through. Nothing of it may be framed (clickjacking of the
 * consent page) or cached.
 */
export function authorizationServerRoutes(provider: Provider, interaction: (ctx: Context) => Promise<void>): Middleware {
  const handleProvider = provider.callback() as (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  return async (ctx, next) => {
    const isInteraction = ctx.path.startsWith(INTERACTION_PREFIX);
    if (!isInteraction && !isAuthorizationServerPath(ctx.path)) return next();
    ctx.set(
      'content-security-policy',
      isInteraction ? "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'" : "frame-ancestors 'none'",
    );
    ctx.set('x-frame-options', 'DENY');
    ctx.set('cache-control', 'no-store');
    // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on our own form posts, which the Origin check refuses.
    ctx.set('referrer-policy', 'same-origin');
    if (isInteraction) return interaction(ctx);
    for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) ctx.res.setHeader(name, value as string);
    ctx.respond = false;
    await handleProvider(ctx.req, ctx.res);
  };
}
