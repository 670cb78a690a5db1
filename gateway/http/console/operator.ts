/**
 * The console's operator routes (issue 33), behind the admin token like every console route:
 * - `GET /console/config`: the configuration in force, redacted (obs/redact.ts);
 * - `GET /console/scopes`: every scope with its description and the tools it unlocks (the merged
 *   catalogue's own required scopes: catalog/catalog.ts decides them, this page only groups them);
 * - `GET /console/oauth`: the built-in authorization server's clients and grants (auth/oauth/admin.ts);
 *   `POST /console/oauth/revoke` (form: `grant`) revokes one, same-origin only, then 303 back.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { GatewayRuntime } from '../../runtime-state.ts';
import { REDACTED, redactConfig } from '../../obs/redact.ts';
import type { ConsoleParts } from './pins.ts';
import { configPage, oauthPage, scopesPage, type OAuthData, type ScopeRow, type ScopesData } from './operator-pages.ts';
import { outcomeLocation, sealedOutcome } from './outcome-link.ts';

/** Mounts the configuration, scopes and OAuth pages on the console's router. */
export function mountOperatorPages(router: Router, runtime: GatewayRuntime, { guard, page, sameOrigin, parseForm }: ConsoleParts): void {
  router.get(
    '/console/config',
    guard,
    page(() => {
      const json = JSON.stringify(redactConfig(runtime.config), null, 2);
      return configPage({ json, redacted: json.split(`"${REDACTED}`).length - 1 });
    }),
  );
  router.get(
    '/console/scopes',
    guard,
    page(async () => scopesPage(await scopesData(runtime))),
  );
  router.get(
    '/console/oauth',
    guard,
    page(async (ctx) => oauthPage(await oauthData(runtime, ctx))),
  );
  router.post('/console/oauth/revoke', guard, sameOrigin, parseForm, async (ctx) => {
    const admin = runtime.oauth?.admin;
    const grant = (ctx.request as { body?: Record<string, unknown> }).body?.grant;
    if (!admin || typeof grant !== 'string' || !/^[\w-]{1,128}$/.test(grant)) {
      ctx.status = 400;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'Bad Request: the form names no grant of the built-in authorization server.';
      return;
    }
    const revoked = await admin.revokeGrant(grant, ctx.state.requestId as string | undefined).catch(() => undefined);
    // The outcome travels as a code, never as text a link could make the console show.
    ctx.status = 303;
    ctx.redirect(outcomeLocation('/console/oauth', revoked === undefined ? { refused: 'unavailable' } : revoked ? { revoked: 1 } : { refused: 'none' }));
  });
}

async function scopesData(runtime: GatewayRuntime): Promise<ScopesData> {
  const { oauth, upstreams } = runtime.config;
  const several = upstreams.length > 1;
  const upstreamScopes = upstreams.filter((u) => u.scopes.required.length).map((u) => ({ upstream: u.name, scopes: [...u.scopes.required] }));
  const rowOf = new Map<string, ScopeRow>();
  const row = (scope: string) => {
    let found = rowOf.get(scope);
    if (!found) {
      const description = oauth.scopeDescriptions[scope];
      rowOf.set(scope, (found = { scope, ...(description ? { description } : {}), offered: oauth.scopes.includes(scope), tools: [] }));
    }
    return found;
  };
  for (const scope of oauth.scopes) row(scope);
  const publicTools: string[] = [];
  let error: string | undefined;
  try {
    const catalog = runtime.upstreamSet.lastCatalog() ?? (await runtime.upstreamSet.catalog());
    for (const tool of catalog.tools) {
      if (tool.requiredScopes.length === 0) publicTools.push(tool.name);
      for (const scope of tool.requiredScopes) row(scope).tools.push({ name: tool.name, upstream: tool.upstream, readOnly: tool.readOnly });
    }
  } catch (e) {
    error = `No catalogue yet: ${(e as Error).message}`;
  }
  for (const { scopes } of upstreamScopes) for (const scope of scopes) row(scope);
  const rows = [...rowOf.values()].sort((a, b) => a.scope.localeCompare(b.scope));
  return { rows, publicTools, upstreamScopes, several, ...(error ? { error } : {}) };
}

async function oauthData(runtime: GatewayRuntime, ctx: Context): Promise<OAuthData> {
  const data: OAuthData = { mode: runtime.config.oauth.mode, clients: [], grants: [], now: Date.now() };
  // The outcome of a revocation, sealed by its redirect (outcome-link.ts): a link cannot make the page say it.
  const outcome = sealedOutcome(ctx.querystring);
  if (outcome.get('revoked') === '1') data.notice = 'The grant is revoked: every token issued from it is refused from now on.';
  if (outcome.get('refused') === 'none') data.error = 'No such live grant: it was revoked or expired already.';
  if (outcome.get('refused') === 'unavailable') data.error = 'The authorization server store is unreachable: nothing was revoked. Try again.';
  const admin = runtime.oauth?.admin;
  if (!admin) return data;
  try {
    [data.clients, data.grants] = await Promise.all([admin.clients(), admin.grants()]);
  } catch (error) {
    data.error = `The authorization server store is unreachable: ${(error as Error).message}`;
  }
  return data;
}
