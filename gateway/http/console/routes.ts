/**
 * `/console`: the operator's pages (pages.ts), mounted only when `console.adminToken` is configured.
 * Every console route, assets included, answers 401 without the admin token (HTTP Basic with the token
 * as the password, which a browser prompts for, or `Authorization: Bearer <token>`), compared in
 * constant time over SHA-256 digests. Pages are `no-store` with a CSP that allows only the console's
 * own stylesheet and script; the POSTs (the credential lookup, approving a tool definition: pins.ts)
 * must come from the console's own origin when the browser says where it comes from (CSRF).
 *
 * The credential lookup sends the submitted credential to this gateway's own MCP endpoints in process
 * (`serve`), lists the tools, and renders them; the credential is neither stored, logged nor echoed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { EmptyQueryError, matchedFields } from '../../../search/index.ts';
import type { Catalog, CatalogTool } from '../../catalog/catalog.ts';
import { credentialHeaders, credentialView, type SurfaceView } from '../../ops/credential-view.ts';
import type { BearerResolution } from '../../auth/oauth/index.ts';
import { baseUrl, tokenAudience } from '../protected-resource.ts';
import { redactArgs, redactText, redactUrl } from '../../obs/redact.ts';
import { resolveTool, type Resolved } from '../../policy/tool-resolution.ts';
import { OPERATOR_ACCESS } from '../../policy/visibility.ts';
import type { GatewayRuntime } from '../../runtime-state.ts';
import { consoleSignInCharges } from '../../auth/attempt-budgets.ts';
import { headerRepeats } from '../../auth/credentials.ts';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.ts';
import type { CatalogData, Counter, OverviewData, SearchData, UpstreamStatus } from './model.ts';
import { catalogPage, credentialPage, overviewPage, searchPage, unauthorizedPage } from './pages.ts';
import { mountPins } from './pins.ts';
import { mountOperatorPages } from './operator.ts';
import { PERSON_HEADERS, refusalPage } from '../browser-pages.ts';

/**
 * Serves one request through this gateway's own app without a socket (runtime.fetch). `reached`: the local
 * address and port it is to be taken as having reached, those of the request it is made for (the console's
 * lookup), which the token audience rule reads (protected-resource.ts `tokenAudience`); none: it keeps its Host's.
 */
export type ServeInProcess = (request: Request, reached?: { localPort?: number; localAddress?: string }) => Promise<Response>;

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const FORM_LIMIT = '16kb';

/** Mounts the console's routes on `router` when `console.adminToken` is set; else mounts nothing (404). */
export function mountConsole(router: Router, runtime: GatewayRuntime, serve: ServeInProcess): void {
  const token = runtime.config.console.adminToken;
  if (!token) return;
  const guard = adminGuard(runtime, token);
  const parseForm = bodyParser({ enableTypes: ['form'], formLimit: FORM_LIMIT, encoding: 'utf-8' });
  const page =
    (render: (ctx: Context) => Promise<string> | string): Middleware =>
    async (ctx) => {
      const body = await render(ctx);
      ctx.set('cache-control', 'no-store');
      ctx.set('content-security-policy', CSP);
      ctx.set('x-content-type-options', 'nosniff');
      // Not no-referrer: the browser would send `Origin: null` with the form post, which the edge refuses.
      ctx.set('referrer-policy', 'same-origin');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = body;
    };
  const asset =
    (type: string, text: string): Middleware =>
    (ctx) => {
      ctx.set('cache-control', 'no-cache');
      ctx.set('x-content-type-options', 'nosniff');
      ctx.type = type;
      ctx.body = text;
    };

  router.get(
    '/console',
    guard,
    page(async () => overviewPage(await overview(runtime))),
  );
  router.get('/console/counters', guard, async (ctx) => {
    ctx.set('cache-control', 'no-store');
    ctx.body = { at: Date.now(), counters: Object.fromEntries((await counters(runtime)).map((c) => [c.id, c.value])) };
  });
  router.get(
    '/console/catalog',
    guard,
    page(async () => catalogPage(await catalogData(runtime))),
  );
  router.get(
    '/console/credential',
    guard,
    page(() => credentialPage(credentialForm(runtime))),
  );
  router.post(
    '/console/credential',
    guard,
    sameOrigin,
    parseForm,
    page(async (ctx) => credentialPage(await lookup(runtime, serve, ctx))),
  );
  router.get(
    '/console/search',
    guard,
    page(async (ctx) => searchPage(await search(runtime, ctx))),
  );
  mountPins(router, runtime, { guard, page, sameOrigin, parseForm });
  mountOperatorPages(router, runtime, { guard, page, sameOrigin, parseForm });
  router.get('/console/console.css', guard, asset('text/css; charset=utf-8', CONSOLE_CSS));
  router.get('/console/console.js', guard, asset('text/javascript; charset=utf-8', CONSOLE_JS));
  // Anything else under /console is refused the same way before it is a 404.
  router.all('/console/{*rest}', guard, (ctx) => void (ctx.status = 404));
}

/**
 * 401 (with a Basic challenge, so a browser asks) unless the request carries the admin token. The right
 * token is always let in, even from an address over its budget: what stops guessing it is its length
 * (16 characters at least, config/schema.json; a random one cannot be guessed), while a lockout that let
 * no one in would let anyone at an address (behind a proxy without `security.trustedProxies`, everyone)
 * lock the operators out by sending wrong tokens. Each wrong token spends a point of its address's
 * budget (`rateLimits.consoleSignIns`, shared through Redis): over it, 429 with Retry-After instead of
 * 401, counted in `mcp_rate_limited_total`, so a guesser shows up and is told to stop. Each wrong token
 * is an audit record.
 */
function adminGuard(runtime: GatewayRuntime, token: string): Middleware {
  const expected = digest(token);
  return async (ctx, next) => {
    // Every console answer, a refusal too (a framed 401 page was shown), forbids framing; pages add their own CSP.
    ctx.set(PERSON_HEADERS);
    // Node keeps the first of repeated Authorization headers: refused as the MCP routes refuse a repeated
    // credential (auth/credentials.ts), so the token checked is never one of two a proxy chain disagrees on.
    if (authorizationRepeats(ctx.req)) {
      refusalPage(ctx, 400, 'Bad request', 'The Authorization header was sent more than once: send the admin token once.');
      return;
    }
    const presented = presentedToken(ctx.get('authorization'));
    if (presented !== undefined) {
      if (timingSafeEqual(digest(presented), expected)) return next();
      const charges = runtime.rateLimiter ? consoleSignInCharges(runtime.config.rateLimits, ctx.ip) : [];
      const decision = charges.length ? await runtime.rateLimiter!.consume(charges) : undefined;
      const requestId = ctx.state.requestId as string | undefined;
      if (decision && !decision.ok) {
        runtime.authDecisions({ requestId, endpoint: 'console', outcome: 'refused', reason: 'rate_limited', budget: decision.budget, address: ctx.ip });
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        refusalPage(ctx, 429, 'Too many wrong admin tokens', `Too many wrong admin tokens from this address. Try again in ${seconds} s.`);
        ctx.set('retry-after', String(seconds));
        return;
      }
      runtime.authDecisions({ requestId, endpoint: 'console', outcome: 'refused', reason: 'invalid_token', address: ctx.ip });
    }
    ctx.status = 401;
    ctx.set('www-authenticate', 'Basic realm="MCP gateway console", charset="UTF-8"');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = unauthorizedPage();
  };
}

const authorizationRepeats = headerRepeats(['authorization']);

/** The token of `Authorization: Bearer <token>`, or the password of `Basic` (any user name). */
function presentedToken(authorization: string): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A POST whose Origin (or, without one, Referer) names another origin is refused 403, and so is one a
 * browser marks as sent from another site or origin (Fetch Metadata `Sec-Fetch-Site: cross-site` or
 * `same-site`, W3C Fetch Metadata Request Headers §2.1) though it sent neither header. A client that is no
 * browser (the `pins` CLI) sends none of them.
 */
const sameOrigin: Middleware = async (ctx, next) => {
  const from = ctx.get('origin') || ctx.get('referer');
  const site = ctx.get('sec-fetch-site').toLowerCase();
  if ((from && URL.canParse(from) && new URL(from).host !== ctx.host) || site === 'cross-site' || site === 'same-site') {
    refusalPage(ctx, 403, 'Request refused', 'Forbidden: cross-origin form post. Send the form from the console itself.');
    return;
  }
  return next();
};

async function overview(runtime: GatewayRuntime): Promise<OverviewData> {
  const catalog = runtime.upstreamSet.lastCatalog();
  return {
    now: Date.now(),
    readiness: runtime.upstreamSet.readiness(),
    upstreams: runtime.upstreams.map(({ client, catalog }): UpstreamStatus => {
      const health = client.health();
      const status = catalog.status();
      return {
        name: client.name,
        transport: client.transport,
        // Shown, screenshotted and shared: no credential a URL or a command line carries (obs/redact.ts).
        target: client.transport === 'stdio' ? redactArgs([client.config.command!, ...client.config.args]).join(' ') : redactUrl(client.config.url!),
        state: health.state,
        since: health.since,
        ...(health.reason ? { reason: redactText(health.reason) } : {}),
        reconnects: health.reconnects,
        catalogVersion: status.version,
        tools: status.tools,
        lastRefresh: status.lastSuccessAt,
        ...(status.lastError ? { lastError: redactText(status.lastError) } : {}),
      };
    }),
    counters: await counters(runtime),
    ...(catalog ? { catalog: { version: catalog.version, tools: catalog.tools.length } } : {}),
  };
}

/** The live figures: sums over the gateway's own Prometheus series (obs/metrics.ts). */
async function counters(runtime: GatewayRuntime): Promise<Counter[]> {
  const { metrics } = runtime;
  type Series = { values: { value: number; labels: Record<string, string | number> }[] };
  const sum = async (
    metric: { get(): Promise<Series> | Series },
    where: (labels: Record<string, string | number>) => boolean = () => true,
  ): Promise<number> => {
    const { values } = await metric.get();
    return values.filter((v) => where(v.labels)).reduce((total, v) => total + v.value, 0);
  };
  const refused = new Set(['refused', 'invalid_arguments', 'output_schema_violation']);
  const figures: [id: string, label: string, value: Promise<number>][] = [
    ['mcp_requests', 'MCP messages', sum(metrics.mcpRequests)],
    ['mcp_errors', 'MCP errors', sum(metrics.mcpRequests, (l) => l.outcome === 'error')],
    ['tool_calls', 'Tool calls', sum(metrics.toolCalls)],
    ['tool_calls_refused', 'Tool calls refused or invalid', sum(metrics.toolCalls, (l) => refused.has(String(l.outcome)))],
    ['tool_calls_is_error', 'Tool calls with isError', sum(metrics.toolCalls, (l) => l.outcome === 'is_error')],
    ['upstream_errors', 'Upstream errors', sum(metrics.upstreamErrors)],
    ['upstream_reconnects', 'Upstream reconnects', sum(metrics.upstreamReconnects)],
    ['scope_lookups', 'Scope lookups (misses)', sum(metrics.scopeLookups, (l) => l.result !== 'hit')],
  ];
  return Promise.all(figures.map(async ([id, label, value]) => ({ id, label, value: await value })));
}

/** The merged catalogue: the one fetched last, else fetched now (outside any caller: no credential). */
async function currentCatalog(runtime: GatewayRuntime): Promise<Catalog> {
  return runtime.upstreamSet.lastCatalog() ?? (await runtime.upstreamSet.catalog());
}

/**
 * A catalogue tool as the gateway decides it for a caller permitted everything (policy/tool-resolution.ts):
 * read or write, and whether `/mcp/compact` lists it up front. The console shows the gateway's
 * decision, never one of its own.
 */
function operatorView(runtime: GatewayRuntime, catalog: Catalog, name: string): { tool: CatalogTool; readOnly: boolean; advertised: boolean } {
  const { tool, readOnly } = resolveTool(catalog, OPERATOR_ACCESS, name, 'full') as Resolved;
  return { tool, readOnly, advertised: resolveTool(catalog, OPERATOR_ACCESS, name, 'compact', runtime.config.compact.codeMode.enabled).advertised };
}

async function catalogData(runtime: GatewayRuntime): Promise<CatalogData> {
  const several = runtime.config.upstreams.length > 1;
  let catalog: Catalog;
  try {
    catalog = await currentCatalog(runtime);
  } catch (error) {
    return { rows: [], several, error: `No catalogue yet: ${(error as Error).message}` };
  }
  return {
    version: catalog.version,
    several,
    rows: catalog.tools.map((tool) => {
      const { readOnly, advertised } = operatorView(runtime, catalog, tool.name);
      return {
        name: tool.name,
        upstream: tool.upstream,
        ...(tool.definition.title !== undefined ? { title: tool.definition.title } : {}),
        ...(tool.category !== undefined ? { category: tool.category } : {}),
        requiredScopes: tool.requiredScopes,
        ...(tool.floorScopes ? { floorScopes: tool.floorScopes } : {}),
        readOnly,
        hasOutputSchema: tool.definition.outputSchema !== undefined,
        advertised,
      };
    }),
  };
}

function credentialForm(runtime: GatewayRuntime) {
  const { keyHeader, secretHeader, bearer } = runtime.config.credentials;
  return { keyHeader, secretHeader, bearer };
}

async function lookup(runtime: GatewayRuntime, serve: ServeInProcess, ctx: Context) {
  const form = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
  const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : undefined);
  const input = { key: field('key'), secret: field('secret'), bearer: runtime.config.credentials.bearer ? field('bearer') : undefined };
  const base = credentialForm(runtime);
  if (!input.bearer?.trim() && !(input.key?.trim() && input.secret?.trim())) return { ...base, error: 'Enter a key and its secret, or a bearer token.' };
  const headers = credentialHeaders(runtime.config.credentials, input);
  const paths = runtime.config.compact.enabled ? ['/mcp', '/mcp/compact'] : ['/mcp'];
  // In process: the request never leaves the gateway, and carries this request's Host (already accepted) and
  // the address and port this one reached, so a token is held to the rule a client's request here would be.
  const origin = `${ctx.protocol}://${ctx.host}`;
  const reached = { localPort: ctx.req.socket.localPort, localAddress: ctx.req.socket.localAddress };
  const views = await credentialView(origin, paths, headers, (url, init) => serve(new Request(url, init), reached));
  const { whose, audiences } = await identify(runtime, ctx, input, paths);
  return { ...base, whose, views: views.map((view) => ({ ...view, ...audienceHint(view, audiences, baseUrl(runtime.config, ctx)) })) };
}

/**
 * Whose view a lookup shows, in words that name no secret: a configured API key by its `name`; a key of
 * the scope endpoint by a masked id; an OAuth access token by its account and client, read with the
 * same resolver the MCP endpoints use (auth/oauth `resolveBearer`), once per endpoint, for the audience
 * they would check (protected-resource.ts `tokenAudience`), so an audience mismatch is told apart from a
 * refused token, and a token is never shown as taken where this page's URL would have the endpoint refuse it.
 */
async function identify(
  runtime: GatewayRuntime,
  ctx: Context,
  input: { key?: string; secret?: string; bearer?: string },
  paths: readonly string[],
): Promise<{ whose: string; audiences: Map<string, BearerResolution> }> {
  const audiences = new Map<string, BearerResolution>();
  const token = input.bearer?.trim().replace(/^bearer\s+/i, '');
  const { apiKeys } = runtime.config.credentials;
  if (token) {
    const oauth = runtime.oauth;
    if (oauth && token.split('.').length === (oauth.mode === 'builtin' ? 5 : 3)) {
      for (const path of paths) {
        const audience = tokenAudience(runtime.config, ctx, path);
        if (typeof audience !== 'string') {
          // No endpoint checks a token at this URL (421): the reason is the page's, not the token's.
          for (const each of paths) audiences.set(each, { kind: 'invalid', error: 'invalid_token', description: audience.refused });
          return { whose: `An OAuth access token that is not checked at the URL this page was reached at: ${audience.refused}.`, audiences };
        }
        audiences.set(path, await oauth.resolveBearer(token, audience));
      }
      const ok = [...audiences.values()].find((r) => r.kind === 'ok');
      if (ok?.kind === 'ok')
        return {
          whose: `An OAuth access token of account ${ok.subject}, issued to client ${ok.clientId}, with the scopes ${ok.scopes.join(' ') || '(none)'}.`,
          audiences,
        };
      // Its store or the identity provider's keys cannot be read: no verdict on the token itself.
      const unchecked = [...audiences.values()].find((r) => r.kind === 'unavailable');
      if (unchecked) return { whose: `An OAuth access token that cannot be checked right now: ${unchecked.description}.`, audiences };
      return { whose: 'An OAuth access token that no endpoint accepts (expired, revoked, or not issued by this gateway).', audiences };
    }
    const named = apiKeys.find((k) => k.token === token);
    return { whose: named ? `The configured API token "${named.name}".` : 'A platform API token, checked with the scope sources.', audiences };
  }
  const key = input.key!.trim();
  const named = apiKeys.find((k) => k.key === key);
  return { whose: named ? `The configured API key "${named.name}".` : `The key ${masked(key)}, checked with the scope sources.`, audiences };
}

/** A key id shown without most of it: its first 4 and last 2 characters. */
function masked(key: string): string {
  return key.length <= 8 ? '…' : `${key.slice(0, 4)}…${key.slice(-2)}`;
}

/**
 * Why an endpoint refused a token another endpoint accepts: it was issued for that other endpoint (its
 * RFC 8707 resource, the token's audience), and each MCP endpoint is a resource of its own.
 */
function audienceHint(view: SurfaceView, audiences: ReadonlyMap<string, BearerResolution>, base: string): { explain?: string } {
  const here = audiences.get(view.path);
  if (!here || here.kind === 'ok') return {};
  const accepted = [...audiences].filter(([, r]) => r.kind === 'ok').map(([path]) => path);
  if (accepted.length === 0)
    return {
      explain:
        here.kind === 'unavailable' ? `The token cannot be checked here right now: ${here.description}.` : `The token is refused here: ${here.description}.`,
    };
  return {
    explain: `This token was issued for ${accepted.join(', ')} (its audience, the RFC 8707 resource the client asked for), not for ${view.path}: each MCP endpoint is a resource of its own. A client reaches ${view.path} with a token asked for resource=${base}${view.path}.`,
  };
}

async function search(runtime: GatewayRuntime, ctx: Context): Promise<SearchData> {
  const { searchLimit, maxSearchLimit } = runtime.config.compact;
  // A field given twice (`?q=a&q=b`, a hand-made link) is read once, its first value, and said.
  const repeated: string[] = [];
  const param = (name: string) => {
    const value = ctx.query[name];
    if (!Array.isArray(value)) return typeof value === 'string' ? value : '';
    repeated.push(name);
    return value[0] ?? '';
  };
  const query = param('q');
  const category = param('category');
  const limitText = param('limit').trim();
  const asked = Number.parseInt(limitText, 10);
  const limit = Number.isInteger(asked) ? Math.min(Math.max(asked, 1), maxSearchLimit) : Math.min(searchLimit * 2, maxSearchLimit);
  const data: SearchData = { query, category, limit, maxLimit: maxSearchLimit, categories: [], hints: [] };
  for (const name of repeated) data.hints.push(`The field "${name}" was given more than once: the first value is used.`);
  // Said, never done silently: a limit out of range, one that is not a number.
  if (limitText && !Number.isInteger(asked)) data.hints.push(`The limit "${limitText}" is not a whole number: showing ${limit}.`);
  else if (Number.isInteger(asked) && asked !== limit)
    data.hints.push(`The limit ${asked} is out of range (1 to compact.maxSearchLimit, ${maxSearchLimit}): showing ${limit}, as search_tools would.`);
  let catalog: Catalog;
  try {
    catalog = await currentCatalog(runtime);
  } catch (error) {
    return { ...data, error: `No catalogue yet: ${(error as Error).message}` };
  }
  const index = await runtime.searchIndexes.get(catalog);
  data.categories = index.categories;
  data.catalogVersion = catalog.version;
  if (category && !index.categories.includes(category))
    data.hints.push(`No tool has the category "${category}": it matches nothing. Known categories: ${index.categories.join(', ') || 'none'}.`);
  if (query.trim() === '') return data;
  try {
    const hits = index.search(query, { limit, ...(category ? { category } : {}) });
    data.rows = hits.map((hit, i) => {
      const { tool, readOnly, advertised } = operatorView(runtime, catalog, hit.name);
      return {
        rank: i + 1,
        name: tool.name,
        score: hit.score,
        ...(tool.category !== undefined ? { category: tool.category } : {}),
        ...(runtime.config.upstreams.length > 1 ? { upstream: tool.upstream } : {}),
        readOnly,
        advertised,
        matched: matchedFields(runtime.searchIndexes.searchable(tool), query),
      };
    });
  } catch (error) {
    if (!(error instanceof EmptyQueryError)) throw error;
    data.error = `The query has no searchable words: ${error.message}`;
  }
  return data;
}
