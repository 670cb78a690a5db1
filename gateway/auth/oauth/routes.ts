import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { GatewayConfig } from '../../../config/types.ts';
import { registrationCharges } from '../attempt-budgets.ts';
import type { RateLimiter } from '../../store/rate-limiter.ts';
import type { AuthDecisions } from '../decisions.ts';
import { clip } from '../../wire/clip.ts';
import { namedFetchedUrl, PROTOCOL_SCOPES } from './provider.ts';
import { authorizationServerRoute, canonicalOAuthPath, discoveryPath, INTERACTION_PREFIX, isAuthorizationServerPath } from './paths.ts';

export interface RouteDeps {
  provider: Provider;
  /** The issuer (`oauth.issuer`, `publicUrl` or the listening URL): every URL the server writes is at its origin. */
  issuer: string;
  /** The issuer's path (paths.ts `pathPrefix`): '' or `/prefix`, which a reverse proxy strips before the gateway. */
  prefix: string;
  interaction: (ctx: Context) => Promise<void>;
  rateLimits: GatewayConfig['rateLimits'];
  limiter: RateLimiter;
  decide: AuthDecisions;
  /** `oauth.scopes`: what an authorization request that names no scope asks for. */
  supported: readonly string[];
}

/**
 * The authorization server as Koa middleware: the interaction pages (`interaction`), then everything
 * oidc-provider serves; other paths pass through. Nothing of it may be framed (clickjacking of the
 * consent page) or cached. A registration (RFC 7591) first spends the registration budgets
 * (`rateLimits.registrations`: per client address, and in total, shared through Redis): over one, 429
 * with Retry-After and the RFC 6749 code `temporarily_unavailable`, before anything is parsed or stored;
 * one refused as malformed (400) gets its points back, so only registrations made count.
 * Behind a path prefix (an issuer `https://host/prefix`, the proxy stripping `/prefix`) every URL the
 * server writes carries the prefix (oidc-provider takes it as its mount path), and the discovery
 * documents also answer at RFC 8414 §3's `/.well-known/oauth-authorization-server/prefix`.
 * An authorization request without `scope`, or with only `offline_access` / `openid` (which ask for no
 * permission), asks for the client's registered scope, else every supported one (RFC 6749 §3.3's
 * pre-defined default; the consent page offers those the key holds): oidc-provider alone would end it
 * with access_denied after consent. A scope of values the server does not know is invalid_scope (provider.ts).
 * Every URL the server writes (the RFC 8414 document's endpoints, redirects) is at the issuer's origin:
 * oidc-provider builds them from the request's Host (and, with an https issuer, X-Forwarded-Host and
 * -Proto), which a caller chooses, so the request is given the issuer's before it is handed on; the
 * endpoints of the document then always share the origin of its `issuer` (RFC 8414 §2, §3.3).
 */
export function authorizationServerRoutes(deps: RouteDeps): Middleware {
  const { provider, interaction, limiter, decide, prefix } = deps;
  const issuer = new URL(deps.issuer);
  const scheme = issuer.protocol.slice(0, -1);
  const handleProvider = provider.callback() as (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** The scope a request naming none asks for: the client's registered `scope` (RFC 7591 §2, all it may ask for), else every supported one; none for an unknown client (oidc-provider refuses it). */
  const defaultScope = async (clientId: string): Promise<string | undefined> => {
    const client = clientId ? await provider.Client.find(clientId).catch(() => undefined) : undefined;
    if (!client) return undefined;
    return client.scope ?? (deps.supported.join(' ') || undefined);
  };
  return async (ctx, next) => {
    const isInteraction = ctx.path.startsWith(INTERACTION_PREFIX);
    if (!isInteraction && !isAuthorizationServerPath(ctx.path, prefix)) return next();
    ctx.state.route = authorizationServerRoute(ctx.path, prefix);
    // After the edge's Host check (edge.ts), which this does not replace: only what oidc-provider reads.
    ctx.req.headers.host = issuer.host;
    ctx.req.headers['x-forwarded-host'] = issuer.host;
    ctx.req.headers['x-forwarded-proto'] = scheme;
    ctx.set(
      'content-security-policy',
      isInteraction ? "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'" : "frame-ancestors 'none'",
    );
    ctx.set('x-frame-options', 'DENY');
    ctx.set('cache-control', 'no-store');
    // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on our own form posts, which the Origin check refuses.
    ctx.set('referrer-policy', 'same-origin');
    if (isInteraction) return interaction(ctx);
    const canonical = ctx.path.startsWith('/oauth/') ? canonicalOAuthPath(ctx.path) : true;
    if (canonical !== true) {
      ctx.status = 404;
      ctx.body = {
        error: 'invalid_request',
        error_description: `no authorization server endpoint at ${clip(ctx.path, 200)}${canonical ? ` (paths are spelled exactly: ${canonical})` : ''}`,
      };
      return;
    }
    let registration: ReturnType<typeof registrationCharges> | undefined;
    if (ctx.method === 'POST' && ctx.path === '/oauth/register') {
      registration = registrationCharges(deps.rateLimits, ctx.ip);
      const decision = await limiter.consume(registration);
      if (!decision.ok) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        decide({
          requestId: ctx.state.requestId as string | undefined,
          endpoint: 'register',
          outcome: 'refused',
          reason: 'rate_limited',
          budget: decision.budget,
        });
        ctx.status = 429;
        ctx.set('retry-after', String(seconds));
        ctx.body = {
          error: 'temporarily_unavailable',
          error_description: `too many client registrations (${decision.budget.replaceAll('_', ' ')}); retry after ${seconds} s`,
        };
        return;
      }
    }
    // `offline_access` (or `openid`) alone asks for refresh tokens, no permission: it gets the same default as no scope,
    // where the consent page offered every scope the key held, pre-ticked, then ended in access_denied (try-out).
    const asked = ctx.query.scope;
    const values = typeof asked === 'string' ? asked.split(' ').filter(Boolean) : [];
    if (ctx.method === 'GET' && ctx.path === '/oauth/authorize' && !Array.isArray(asked) && values.every((s) => PROTOCOL_SCOPES.includes(s))) {
      const scope = await defaultScope(String(ctx.query.client_id ?? ''));
      if (scope) {
        const query = new URLSearchParams(ctx.querystring);
        query.set('scope', [...new Set([...values, ...scope.split(' ')])].join(' '));
        ctx.req.url = `${ctx.path}?${query}`;
      }
    }
    if (prefix) {
      const discovery = discoveryPath(ctx.path, prefix);
      if (discovery) ctx.req.url = discovery;
      // oidc-provider's mount path is what originalUrl has before url: the URLs it writes get the prefix back.
      (ctx.req as { originalUrl?: string }).originalUrl = `${prefix}${ctx.req.url}`;
    }
    for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) ctx.res.setHeader(name, value as string);
    ctx.respond = false;
    await handleProvider(ctx.req, ctx.res);
    // A document refused as malformed (400, RFC 7591 §3.2.2) stored nothing: its points are given back, so a developer
    // fixing one by hand is not locked out for the hour (try-out). Spent first all the same, so concurrent registrations
    // cannot all pass the budget; a 401 (a wrong initial access token) stays counted: that is guessing, and so does a
    // document naming a URL the server fetches (sector_identifier_uri, jwks_uri): the budget is what bounds those fetches.
    if (registration && ctx.res.statusCode === 400 && !namedFetchedUrl(ctx.req)) await limiter.refund(registration);
  };
}
