import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { localhostAllowedHostnames, localhostAllowedOrigins, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../../config/types.ts';
import { jsonRpcErrorBody, type ErrorKind } from '../errors.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Answers at the edge with the JSON-RPC error body of `kind` (the request is never dispatched). */
export function rejectAtEdge(ctx: Parameters<Middleware>[0], kind: ErrorKind, message: string, id: string | number | null = null): void {
  const { status, body } = jsonRpcErrorBody(kind, message, id);
  ctx.status = status;
  ctx.body = body;
}

/**
 * Request identity and accounting: honours a sane incoming `X-Request-Id` (else generates one),
 * echoes it, hands it on as `ctx.state.requestId` (the MCP endpoint passes it on explicitly, to the
 * upstream hop and to every request logger: obs/request-context.ts), logs one access line and observes `http_request_duration_seconds` when the response closes.
 */
export function requestIdentity(log: Logger, metrics: GatewayMetrics, inflight: { count: number }): Middleware {
  // The access line's fields are safe by construction (a request id that passed REQUEST_ID or was
  // generated, the method, the path without its query, status, duration): written without the
  // redaction pass every other line gets (obs/log.ts), which measured about 5 µs a line.
  const accessLog = log.child({}, { redact: [] });
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('x-request-id', requestId);
    ctx.state.requestId = requestId;
    const started = performance.now();
    inflight.count++;
    let done = false;
    ctx.res.once('close', () => {
      if (done) return;
      done = true;
      inflight.count--;
      const seconds = (performance.now() - started) / 1000;
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const status = ctx.res.statusCode;
      metrics.httpRequestDuration.observe({ route: typeof route === 'string' ? route : 'unmatched', method: ctx.method, status_code: String(status) }, seconds);
      accessLog.info({ requestId, method: ctx.method, path: ctx.path, status, durationMs: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    await next();
  };
}

/** True for binds only this machine can reach: DNS-rebinding protection is on by default for them. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/**
 * Host and Origin validation (spec 2026-07-28 basic/transports/streamable-http, Security): a present
 * Origin must be allowed (403 otherwise); on loopback binds (or with `security.allowedHosts`) the Host
 * header must name an allowed host, which is what stops DNS rebinding.
 */
export function originGuard(config: GatewayConfig): Middleware {
  const loopback = isLoopbackHost(config.listen.host);
  const hosts = [...config.security.allowedHosts, ...(loopback ? localhostAllowedHostnames() : [])];
  const checkHost = (config.security.dnsRebindingProtection ?? loopback) || config.security.allowedHosts.length > 0;
  const origins = [...config.security.allowedOrigins, ...(loopback ? localhostAllowedOrigins() : [])];
  return async (ctx, next) => {
    if (checkHost) {
      const host = validateHostHeader(ctx.get('host'), hosts);
      if (!host.ok) return rejectAtEdge(ctx, 'forbidden_host', host.message);
    }
    const origin = validateOriginHeader(ctx.get('origin') || undefined, origins);
    if (!origin.ok) return rejectAtEdge(ctx, 'forbidden_origin', origin.message);
    await next();
  };
}

/**
 * CORS for browser-based MCP clients from allowed origins (the guard has already refused the rest):
 * preflight allows and responses expose the MCP headers and the credential headers. Preflight
 * advertises only the methods the path serves: POST on the MCP endpoints (`mcpPaths`; GET and DELETE
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
  const expose = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'www-authenticate', 'x-request-id'].join(', ');
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (origin) {
      ctx.set('access-control-allow-origin', origin);
      ctx.vary('origin');
      ctx.set('access-control-expose-headers', expose);
    }
    if (ctx.method !== 'OPTIONS') return next();
    // SEP-2243 Mcp-Param-* headers are per tool: allow whichever the browser asks for.
    const requested = ctx
      .get('access-control-request-headers')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h.startsWith('mcp-param-'));
    // Exact paths, as the router matches them (app.ts): a preflight for `/mcp/` must not promise POST.
    ctx.set('access-control-allow-methods', mcpPaths.includes(ctx.path) ? 'POST, OPTIONS' : 'GET, OPTIONS');
    ctx.set('access-control-allow-headers', [...allowHeaders, ...requested].join(', '));
    ctx.set('access-control-max-age', '600');
    ctx.status = 204;
  };
}
