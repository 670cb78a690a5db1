import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { pino } from 'pino';
import { loadConfig, type DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { createOAuth, type OAuth } from '../../gateway/auth/oauth/index.ts';
import { ScopeCache } from '../../gateway/auth/scope-cache.ts';
import { createKvStore } from '../../gateway/store/kv-store.ts';
import { createMetrics, type GatewayMetrics } from '../../gateway/obs/metrics.ts';
import { authDecisions } from '../../gateway/auth/decisions.ts';
import { createAuditLog } from '../../gateway/obs/audit.ts';
import { createOutcomes, gatewaySubscribers } from '../../gateway/obs/outcomes.ts';
import { createRateLimiter } from '../../gateway/store/rate-limiter.ts';
import type { BuiltinDeps } from '../../gateway/auth/oauth/builtin.ts';
import { startPlatform } from '../../upstream/platform/index.ts';
import { LogCapture } from './log-capture.ts';

export const RESOURCE_PATHS = ['/mcp', '/mcp/compact'];

export interface OAuthHarness {
  url: string;
  oauth: OAuth;
  config: GatewayConfig;
  logs: LogCapture;
  platform: Awaited<ReturnType<typeof startPlatform>>;
  close(): Promise<void>;
}

/**
 * A standalone Koa app serving only `createOAuth(...).routes` (and a `/probe` that resolves a bearer
 * for `?resource=`), on a free loopback port, with the real platform stand-in as the scope endpoint.
 */
export async function startOAuthHarness(overrides: DeepPartial<GatewayConfig> = {}, platformIn?: OAuthHarness['platform']): Promise<OAuthHarness> {
  const platform = platformIn ?? (await startPlatform({ port: 0 }));
  const logs = new LogCapture();
  const config = loadConfig({
    env: {},
    overrides: {
      log: { level: 'debug' },
      ...overrides,
      upstreams: [{ url: 'http://127.0.0.1:9/mcp' }],
      scopes: { endpoint: `${platform.url}/v1/me`, ...overrides.scopes },
      oauth: { mode: 'builtin', ...overrides.oauth },
    },
  });
  const log = pino({ level: 'debug' }, logs);
  const metrics = createMetrics();
  const scopeCache = new ScopeCache(config.scopes, createKvStore(config.cache, { name: 'scopes', maxEntries: 100, ttlMs: 60_000, metrics, log }), metrics, log);
  let handler: Koa['callback'] extends () => infer H ? H : never;
  const server: Server = createServer((req, res) => handler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const oauth = (await createOAuth(config, {
    log,
    issuer: url,
    resourcePaths: RESOURCE_PATHS,
    lookupScopes: (headers) => scopeCache.lookup({ kind: 'key', headers, digest: createHash('sha256').update(JSON.stringify(headers)).digest('hex') }),
    ...decisionDeps(metrics, log, config.cache),
  }))!;
  const app = new Koa();
  app.use(oauth.routes);
  app.use(async (ctx) => {
    if (ctx.path !== '/probe') return;
    const token = /^Bearer (\S+)$/.exec(ctx.get('authorization'))?.[1] ?? '';
    ctx.body = await oauth.resolveBearer(token, String(ctx.query.resource ?? `${url}/mcp`));
  });
  handler = app.callback();
  return {
    url,
    oauth,
    config,
    logs,
    platform,
    close: async () => {
      await oauth.close();
      await scopeCache.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (!platformIn) await platform.close();
    },
  };
}

/** What createOAuth needs beyond the scope lookup, as a runtime builds it: an in-memory rate limiter and decisions recorded nowhere but the metrics. */
export function decisionDeps(metrics: GatewayMetrics, log: BuiltinDeps['log'], cache: GatewayConfig['cache']): Pick<BuiltinDeps, 'rateLimiter' | 'decide'> {
  return {
    rateLimiter: createRateLimiter({ store: 'memory', cache, metrics, log }),
    decide: authDecisions(createOutcomes(gatewaySubscribers(metrics, createAuditLog({ destination: 'off' })))),
  };
}

/** A cookie jar for one browser-like agent (names only; paths are ignored, which only sends more). */
export class Jar {
  readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT_URI = 'http://127.0.0.1:8976/callback';

/** RFC 7591 registration of a public client. */
export async function registerClient(
  base: string,
  extra: Record<string, unknown> = {},
  send: typeof fetch = fetch,
): Promise<{ client_id: string } & Record<string, unknown>> {
  const response = await send(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'native',
      ...extra,
    }),
  });
  if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { client_id: string };
}

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** One browser-like step: GET/POST with the jar's cookies, no redirect following. */
export async function step(
  jar: Jar,
  url: string,
  form?: Record<string, string | string[]>,
  headers: Record<string, string> = {},
  send: typeof fetch = fetch,
): Promise<Response> {
  let body: URLSearchParams | undefined;
  if (form) {
    body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
  }
  const response = await send(url, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: { cookie: jar.header(), ...headers, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body,
  });
  jar.take(response);
  return response;
}

export interface FlowOptions {
  clientId: string;
  key?: string;
  secret?: string;
  /** Scopes ticked on the consent page; default all offered. */
  grant?: string[];
  /** The `scope` asked for; '' sends none. */
  scope?: string;
  resource?: string;
  state?: string;
  pkce?: Pkce;
  redirectUri?: string;
  /** How requests are sent; default the network (an in-process gateway passes its own fetch). */
  fetch?: typeof fetch;
}

/**
 * The authorize request (PKCE S256) and the sign-in page it redirects to, as a browser opens them, in
 * `options.jar` (else a new one): both responses, the page's text and CSRF token, the interaction URL.
 * Defaults as {@link signInFlow}'s. Throws with the answer when authorize does not redirect (303).
 */
export async function openSignInPage(
  base: string,
  options: Omit<FlowOptions, 'key' | 'secret' | 'grant'> & { jar?: Jar },
): Promise<{ jar: Jar; pkce: Pkce; authorize: Response; interaction: string; page: Response; html: string; csrf: string }> {
  const jar = options.jar ?? new Jar();
  const send = options.fetch ?? fetch;
  const p = options.pkce ?? pkce();
  const authorize = await step(
    jar,
    authorizeUrl(base, {
      client_id: options.clientId,
      response_type: 'code',
      redirect_uri: options.redirectUri ?? REDIRECT_URI,
      scope: options.scope === '' ? undefined : (options.scope ?? 'accounts:read positions:read orders:read'),
      resource: options.resource ?? `${base}/mcp`,
      state: options.state ?? 'state-123',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    }),
    undefined,
    {},
    send,
  );
  if (authorize.status !== 303) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  const interaction = new URL(authorize.headers.get('location')!, base).href;
  const page = await step(jar, interaction, undefined, {}, send);
  const html = await page.text();
  return { jar, pkce: p, authorize, interaction, page, html, csrf: csrfOf(html) };
}

/**
 * Drives authorize -> sign-in -> consent -> redirect like a browser would (HTTP only), returning the
 * callback URL's parameters. Throws with the page's status when a step does not go as a success would.
 */
export async function signInFlow(
  base: string,
  options: FlowOptions,
): Promise<{ code: string; state: string | null; iss: string | null; pkce: Pkce; callback: URL }> {
  const send = options.fetch ?? fetch;
  const { jar, pkce: p, interaction, csrf } = await openSignInPage(base, options);
  let response = await step(jar, `${interaction}/login`, { csrf, key: options.key ?? 'cpz_demo_data', secret: options.secret ?? 'demo-secret-data' }, {}, send);
  if (response.status !== 303) throw new Error(`sign-in answered ${response.status}`);
  response = await step(jar, interaction, undefined, {}, send);
  const consent = await response.text();
  const offered = [...consent.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!);
  response = await step(jar, `${interaction}/consent`, { csrf: csrfOf(consent), decision: 'allow', scope: options.grant ?? offered }, {}, send);
  if (response.status !== 303) throw new Error(`consent answered ${response.status}: ${await response.text()}`);
  let location = new URL(response.headers.get('location')!, base).href;
  while (new URL(location).origin === new URL(base).origin) {
    response = await step(jar, location, undefined, {}, send);
    if (![302, 303].includes(response.status))
      throw new Error(`resume answered ${response.status}: ${(await response.text()).replace(/<style>[\s\S]*<\/style>/, '')}`);
    location = new URL(response.headers.get('location')!, base).href;
  }
  const callback = new URL(location);
  return { code: callback.searchParams.get('code') ?? '', state: callback.searchParams.get('state'), iss: callback.searchParams.get('iss'), pkce: p, callback };
}

/**
 * Redeems `flow`'s authorization code at `base`'s token endpoint (RFC 6749 §4.1.3, with its PKCE verifier)
 * for `clientId`; `resource` defaults to `base`'s /mcp (another instance's token endpoint can redeem a code
 * issued for the first: pass its resource).
 */
export function redeemCode(
  base: string,
  flow: { code: string; pkce: Pkce },
  clientId: string,
  options: { resource?: string; fetch?: typeof fetch } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return tokenRequest(
    base,
    {
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.pkce.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: options.resource ?? `${base}/mcp`,
    },
    options.fetch,
  );
}

export async function tokenRequest(
  base: string,
  params: Record<string, string>,
  send: typeof fetch = fetch,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await send(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function probe(base: string, token: string, resource = `${base}/mcp`): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}/probe?resource=${encodeURIComponent(resource)}`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as Record<string, unknown>;
}

/**
 * The OAuth steps a client and its user take, against an in-process gateway (`serve`: its runtime's
 * fetch) or any base URL: register, sign in and consent, redeem the code, refresh, revoke, and use a token.
 */
export function oauthClient(base: string, serve: (request: Request) => Promise<Response> = (r) => fetch(r)) {
  const send = ((url: string | URL | Request, init: RequestInit = {}) => serve(new Request(url, init))) as typeof fetch;
  const form = (path: string, params: Record<string, string>) =>
    send(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });
  return {
    send,
    register: (extra: Record<string, unknown> = {}) => registerClient(base, extra, send),
    /** Registers nothing: POSTs this registration document as it is. */
    registerRaw: (document: unknown, headers: Record<string, string> = {}) =>
      send(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(document) }),
    /** Signs in and consents through the pages, then redeems the code: the token response. */
    async tokens(clientId: string, options: Omit<FlowOptions, 'clientId' | 'fetch'> = {}) {
      const flow = await signInFlow(base, { ...options, clientId, fetch: send });
      return tokenRequest(
        base,
        {
          grant_type: 'authorization_code',
          code: flow.code,
          code_verifier: flow.pkce.verifier,
          redirect_uri: options.redirectUri ?? REDIRECT_URI,
          client_id: clientId,
          resource: options.resource ?? `${base}/mcp`,
        },
        send,
      );
    },
    refresh: (clientId: string, refreshToken: string, extra: Record<string, string> = {}) =>
      tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra }, send),
    revoke: (clientId: string, token: string) => form('/oauth/revoke', { token, client_id: clientId }),
    /** A 2026-07-28 tools/list at `path` with `Authorization: Bearer <token>`: its status and tool names. */
    async listTools(token: string, path = '/mcp', host?: string): Promise<{ status: number; tools?: string[] }> {
      const response = await send(`${base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
          authorization: `Bearer ${token}`,
          ...(host ? { host } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'oauth-tests', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      const body = (await response.json()) as { result?: { tools: { name: string }[] } };
      return { status: response.status, ...(body.result ? { tools: body.result.tools.map((t) => t.name) } : {}) };
    },
  };
}

export type OAuthClient = ReturnType<typeof oauthClient>;

/** The `auth_decision` lines of an audit capture, parsed. */
export function authDecisionsOf(audit: LogCapture): Record<string, unknown>[] {
  return audit.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.event === 'auth_decision');
}
