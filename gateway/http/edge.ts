import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import { localhostAllowedHostnames, localhostAllowedOrigins, validateOriginHeader } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../config/types.ts';
import { checksHost, isLoopbackHost } from '../../config/hosts.ts';
import { isAuthorizationServerPath, pathPrefix } from '../auth/oauth/paths.ts';
import { jsonRpcErrorBody, type ErrorKind } from '../errors.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import type { Exchange } from './exchange.ts';
import { clientAddressOf, plainAddress } from './client-address.ts';
import type { UnparsedRequest } from './node-server.ts';
import { hasDuplicateHost, readHost, toOriginForm } from './request-target.ts';
import { isConsolePath, refusalPage } from './browser-pages.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Answers at the edge with the JSON-RPC error body of `kind` (the request is never dispatched); `data` joins `kind`. */
export function rejectAtEdge(ctx: Exchange, kind: ErrorKind, message: string, id: string | number | null = null, data?: Record<string, unknown>): void {
  const { status, text } = jsonRpcErrorBody(kind, message, id, data);
  answerAtEdge(ctx, status, text);
}

/** Answers at the edge with a JSON-RPC error response already written (wire/jsonrpc.ts `errorResponse`). */
export function answerAtEdge(ctx: Exchange, status: number, json: string): void {
  ctx.status = status;
  // Set before the body, so Koa keeps it instead of calling a string text/plain.
  ctx.set('content-type', 'application/json; charset=utf-8');
  ctx.body = json;
}

/**
 * Request identity and accounting: honours a sane incoming `X-Request-Id` (else generates one),
 * echoes it, hands it on as `ctx.state.requestId` (the MCP endpoint passes it on explicitly, to the
 * upstream hop and to every request logger: obs/request-context.ts), sets `ctx.ip` to the client
 * address (client-address.ts: what every per-address budget counts), logs one access line and observes
 * `http_request_duration_seconds` when the response closes.
 */
export function requestIdentity(config: Pick<GatewayConfig, 'security'>, log: Logger, metrics: GatewayMetrics, inflight: { count: number }): Middleware {
  const account = requestAccounting(config, log, metrics, inflight);
  return async (ctx, next) => {
    const { requestId, address } = account(ctx.req, ctx.res, ctx.path, () => {
      // The router's template, else a label a handler outside the router set (the authorization server,
      // the pages for a browser); always bounded, never the raw path.
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute ?? ctx.state.route;
      return typeof route === 'string' ? route : 'unmatched';
    });
    ctx.state.requestId = requestId;
    ctx.state.address = address;
    // Koa's own reading of ctx.ip (the first X-Forwarded-For entry when app.proxy) is never used.
    ctx.request.ip = address;
    await next();
  };
}

/** The trace id of an MCP request's exchange (http/mcp-endpoint.ts), for its access line: see {@link noteTraceId}. */
const traceIds = new WeakMap<ServerResponse, string>();

/** Puts `traceId` on the access line of the exchange answered through `res`, so the line joins its trace. */
export function noteTraceId(res: ServerResponse, traceId: string | undefined): void {
  if (traceId) traceIds.set(res, traceId);
}

/** The status counted for a request whose client closed the connection before any answer: nginx's 499. */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * {@link requestIdentity} for one exchange, Koa or not: returns the request id it set on the response
 * and the client address (client-address.ts), and on the response's close logs the access line (with
 * that address) and observes the duration under `route()`: status 499 ({@link CLIENT_CLOSED_REQUEST})
 * when the client left before the answer began, `incomplete: true` when it left during it.
 */
export function requestAccounting(
  config: Pick<GatewayConfig, 'security'>,
  log: Logger,
  metrics: GatewayMetrics,
  inflight: { count: number },
): (req: IncomingMessage, res: ServerResponse, path: string, route: () => string) => { requestId: string; address: string } {
  // The access line's fields are safe by construction (a request id that passed REQUEST_ID or was
  // generated, the client address, the method, the path without its query, status, duration): written
  // without the redaction pass every other line gets (obs/log.ts), which measured about 5 µs a line.
  const accessLog = log.child({}, { redact: [] });
  const clientAddress = clientAddressOf(config);
  return (req, res, path, route) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const address = clientAddress(req);
    res.setHeader('x-request-id', requestId);
    const started = performance.now();
    inflight.count++;
    res.once('close', () => {
      inflight.count--;
      const seconds = (performance.now() - started) / 1000;
      const method = req.method ?? 'GET';
      // Closed before the answer began: no status was sent, and Koa's default (404) would be counted as the
      // gateway's answer; 499 as nginx logs it (client closed request). Closed once begun: the status sent,
      // the line marked `incomplete`.
      const status = res.headersSent ? res.statusCode : CLIENT_CLOSED_REQUEST;
      metrics.httpRequestDuration.observe({ route: route(), method, status_code: String(status) }, seconds);
      const durationMs = Math.round(seconds * 1e4) / 10;
      const line: { requestId: string; traceId?: string; client: string; method: string; path: string; status: number; durationMs: number; incomplete?: true } =
        // An undefined traceId is left out of the line (pino writes no undefined member).
        { requestId, traceId: traceIds.get(res), client: address, method, path, status, durationMs };
      // An event stream ends when its client closes it: that is how one ends, not an answer cut short.
      if (!res.writableFinished && !String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) line.incomplete = true;
      accessLog.info(line, 'request');
    });
    return { requestId, address };
  };
}

/**
 * The access line and `http_request_duration_seconds` of a request answered before any handler ran
 * (node-server.ts: headers over `limits.headerBytes` 431, headers not received in time 408, a malformed request
 * 400, a CONNECT 405): route `unmatched`, method `unknown` unless known, 0 s (no request was timed), a fresh
 * request id, the socket's peer as client (no header was read, so no trusted proxy's), and Node's error code as
 * `reason`. "Every HTTP request the gateway answers" has its line (SRE try-out: header floods and slow clients
 * left none).
 */
export function unparsedRequestAccounting(log: Logger, metrics: GatewayMetrics): (request: UnparsedRequest) => void {
  const accessLog = log.child({}, { redact: [] });
  return ({ status, method = 'unknown', code, remoteAddress }) => {
    metrics.httpRequestDuration.observe({ route: 'unmatched', method, status_code: String(status) }, 0);
    const client = plainAddress(remoteAddress ?? '') ?? '';
    accessLog.info({ requestId: randomUUID(), client, method, path: '', status, durationMs: 0, ...(code ? { reason: code } : {}) }, 'request');
  };
}

/**
 * Host and Origin validation (spec 2026-07-28 basic/transports/streamable-http, Security), the one guard
 * in front of every route: an absolute-form request-target is taken as origin-form with its authority as
 * Host (RFC 9112 §3.2.2); a Host that is no host (user information, a numeric form other than a dotted
 * quad: request-target.ts `readHost`), or none at all on HTTP/1.1 (RFC 9112 §3.2), is 400 `malformed_target` on every route; on loopback binds (or with `security.allowedHosts`) the Host header must name
 * an allowed host (those, localhost's names on a loopback bind, and `publicUrl`'s and `oauth.issuer`'s), which is what stops DNS rebinding (a probe, {@link isProbe}, skips that check only);
 * a present Origin must be allowed (403 otherwise), except on the built-in authorization server's paths,
 * which browser-based clients call from their own origins (oidc-provider answers CORS per client, and
 * the sign-in pages check Origin and a CSRF token themselves).
 */
export function originGuard(config: GatewayConfig): Middleware {
  const refused = originRefusal(config);
  return async (ctx, next) => {
    if (!refused(ctx)) await next();
  };
}

/** {@link originGuard} for one exchange: true when it refused the request (and answered it). */
export function originRefusal(config: GatewayConfig): (ctx: Exchange) => boolean {
  const loopback = isLoopbackHost(config.listen.host);
  // The gateway's own public name (publicUrl, the OAuth issuer): requests a proxy passes on under it, and its own
  // pages posting back to it, are the gateway's, not a rebinding (try-out: `publicUrl: https://gw.example` on a
  // loopback bind behind a local proxy refused `Host: gw.example` with 403 until allowedHosts named it again).
  const own = ownHostnames(config);
  const hosts = [...config.security.allowedHosts, ...own, ...(loopback ? localhostAllowedHostnames() : [])];
  const checkHost = checksHost(config);
  const origins = [...config.security.allowedOrigins, ...own, ...(loopback ? localhostAllowedOrigins() : [])];
  const issuerPrefix = pathPrefix(config.oauth.issuer ?? config.publicUrl);
  const crossOriginPath = config.oauth.mode === 'builtin' ? (path: string) => isAuthorizationServerPath(path, issuerPrefix) : () => false;
  const allowed = new Set(hosts.map((h) => h.toLowerCase()));
  return (ctx) => {
    // First: an absolute-form target's authority becomes the Host (toOriginForm).
    const formed = toOriginForm(ctx.req) ?? (hasDuplicateHost(ctx.req) ? 'the request carries more than one Host header' : undefined);
    const presented = ctx.get('host');
    // RFC 9112 §3.2: an HTTP/1.1 request without a Host (or with an empty one: an http URI has a host) is a 400.
    const target = formed ?? (presented.trim() === '' && ctx.req.httpVersion !== '1.0' ? 'the request carries no Host header' : undefined);
    const host = presented ? readHost(presented) : undefined;
    if (target !== undefined || (host && 'refused' in host)) {
      const why = target ?? `the Host header is refused: ${(host as { refused: string }).refused}`;
      rejectAtEdge(ctx, 'malformed_target', `Bad Request: ${why} (RFC 9110 §7.2, RFC 9112 §3.2)`);
      return true;
    }
    if (checkHost && !isProbe(ctx)) {
      if (!host || !allowed.has(host.hostname)) {
        rejectAtEdge(ctx, 'forbidden_host', host ? `Invalid Host: ${host.hostname}` : 'Missing Host header');
        return true;
      }
    }
    if (crossOriginPath(ctx.path)) return false;
    const origin = validateOriginHeader(ctx.get('origin') || undefined, origins);
    if (origin.ok) return false;
    // A console form post is a person's (their browser sent the Origin): a page says why, not a JSON-RPC body.
    if (isConsolePath(ctx.path)) refusalPage(ctx, 403, 'Request refused', origin.message);
    else rejectAtEdge(ctx, 'forbidden_origin', origin.message);
    return true;
  };
}

/** The hostnames of `publicUrl` and `oauth.issuer`, lower case (an IPv6 literal bracketed, as a Host names it). */
function ownHostnames(config: Pick<GatewayConfig, 'publicUrl' | 'oauth'>): string[] {
  return [config.publicUrl, config.oauth.issuer].filter((url) => url !== undefined).map((url) => new URL(url).hostname.toLowerCase());
}

/** The paths a kubelet probe or a Prometheus scrape asks for (the metrics listener serves only the last). */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A kubelet probe or a Prometheus scrape: a GET (or HEAD) of `/healthz`, `/readyz` or `/metrics` sent by
 * no browser. Both address a pod by its IP (`Host: 10.1.2.3:3000`), which no `allowedHosts` list can
 * name, so these answer any Host. A browser marks every request it sends with `Sec-Fetch-Site` (Fetch
 * Metadata: Chromium 76, Firefox 90, Safari 16.4) and cross-origin ones with `Origin`: with either, a
 * probe path keeps the Host check, so a DNS-rebinding page still cannot read readiness reasons or metrics.
 */
export function isProbe(ctx: Exchange): boolean {
  return (ctx.method === 'GET' || ctx.method === 'HEAD') && PROBE_PATHS.has(ctx.path) && !ctx.get('origin') && !ctx.get('sec-fetch-site');
}

/**
 * CORS for browser-based MCP clients from allowed origins (the guard has already refused the rest):
 * preflight allows and responses expose the MCP headers and the credential headers. Preflight (and any
 * OPTIONS of an MCP endpoint, in `Allow`) advertises only the methods the path serves: POST on the MCP endpoints (`mcpPaths`; GET and DELETE
 * answer 405 there, no sessions), GET elsewhere (RFC 9728 metadata, which browser OAuth clients fetch
 * with an MCP-Protocol-Version header, health, metrics).
 */
export function cors(config: GatewayConfig, mcpPaths: readonly string[]): Middleware {
  const allowHeaders = [
    'content-type',
    'accept',
    'authorization',
    'mcp-protocol-version',
    'mcp-method',
    'mcp-name',
    'mcp-session-id',
    'last-event-id',
    'x-request-id',
    config.credentials.keyHeader.toLowerCase(),
    config.credentials.secretHeader.toLowerCase(),
  ];
  return async (ctx, next) => {
    exposeToOrigin(ctx);
    if (ctx.method !== 'OPTIONS') return next();
    // SEP-2243 Mcp-Param-* headers are per tool: allow whichever the browser asks for.
    const requested = ctx
      .get('access-control-request-headers')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h.startsWith('mcp-param-'));
    // Exact paths, as the router matches them (app.ts): a preflight for `/mcp/` must not promise POST.
    const mcp = mcpPaths.includes(ctx.path);
    // Allow too on the MCP endpoints: an OPTIONS without CORS headers asks what the path serves (RFC 9110 §9.3.7,
    // §10.2.1). Elsewhere this answer does not know (a console form takes POST, an unknown path serves nothing: review).
    if (mcp) ctx.set('allow', 'POST, OPTIONS');
    ctx.set('access-control-allow-methods', mcp ? 'POST, OPTIONS' : 'GET, OPTIONS');
    ctx.set('access-control-allow-headers', [...allowHeaders, ...requested].join(', '));
    ctx.set('access-control-max-age', '600');
    ctx.status = 204;
  };
}

const EXPOSED_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'www-authenticate', 'x-request-id'].join(', ');

/** The CORS headers of an actual (not preflight) request from an allowed Origin ({@link cors}). */
export function exposeToOrigin(ctx: Exchange): void {
  const origin = ctx.get('origin');
  if (!origin) return;
  ctx.set('access-control-allow-origin', origin);
  ctx.vary('origin');
  ctx.set('access-control-expose-headers', EXPOSED_HEADERS);
}
