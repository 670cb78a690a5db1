import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Exchange } from './exchange.ts';
import { bodyParser } from '@koa/bodyparser';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { PROTOCOL_VERSION_META_KEY, isJsonContentType, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { authenticatedRequest, authInfoFor, type AuthenticatedRequest } from '../auth/authenticated.ts';
import type { Standing } from '../auth/authenticate.ts';
import type { Credential } from '../auth/credentials.ts';
import { accessFor, type Access } from '../policy/visibility.ts';
import { CALL_TOOL, resolveTool } from '../policy/tool-resolution.ts';
import { answerAtEdge, rejectAtEdge } from './edge.ts';
import { answerPlainRequest } from '../mcp/fast-path.ts';
import { MODERN_REVISIONS, SERVED_REVISIONS } from '../wire/revisions.ts';
import { errorResponse } from '../wire/jsonrpc.ts';
import { classifyPost, type Cancellation, type ParamHeaderCheck, type PostDescription } from './classify.ts';
import { withJsonForLegacyClients } from './legacy-json.ts';
import { countMessages, withMessageCounting } from '../mcp/message-metrics.ts';
import { paramHeaderMismatch, paramHeaders } from '../checks/mcp-param-headers.ts';
import type { Surface } from '../mcp/types.ts';
import { baseUrl, bearerChallenge } from './protected-resource.ts';
import { bearerCredential } from '../auth/oauth/credential.ts';
import { requestLog } from '../obs/request-context.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import { recordSpan, type RequestTrace } from '../obs/tracing.ts';
import { chargedMessages, describeBudget, requestCharge } from '../policy/rate-limits.ts';
import type { RateDecision } from '../store/rate-limiter.ts';
import { auditEdgeRefusal } from '../surfaces/tool-decision.ts';
import { describeBreach } from '../checks/input-limits.ts';
import { withResourceSubscriptions } from '../upstream/resource-subscriptions.ts';
import { createCaller } from '../policy/caller.ts';

/**
 * The MCP endpoint of one surface, mounted in Koa: POST is checked at the edge and handed to the
 * SDK handler (`createMcpHandler` + `toNodeHandler`) with the parsed body and the caller's AuthInfo,
 * with `ctx.respond = false` so Koa leaves the response to the SDK. In order:
 * 415 for a non-JSON Content-Type; authentication before any body is read (auth/authenticate.ts: 401
 * with the RFC 9728 challenge without a credential, or for one no source knows or the scope endpoint
 * refuses, on every method; 503 with Retry-After when the scope lookup failed and every upstream's
 * failure mode is `closed`); 413 over `limits.bodyBytes`, 415 for an unsupported Content-Encoding, and
 * 400/-32700 for malformed JSON or an empty body; past the request budget, 400/-32600 for JSON that is
 * no request (a scalar, `[]`, a message or batch element with a malformed member), 400/-32600 (-32602 inside params) over an input limit
 * (`limits.jsonDepth`/`stringLength`/`arrayLength`; tool arguments are the call's to refuse:
 * tool-call.ts), 400/-32022 for a revision the gateway does not serve (the `_meta` claim, else the
 * `MCP-Protocol-Version` header; `data.supported` as server/discover, the message naming both eras), 400/-32600 for a batch under a
 * revision without batching; a body of JSON-RPC responses
 * (a 2025-era caller answering what the gateway asked on a call's stream) is answered here, 202 or
 * 400/-32600 as unknown ({@link answerPostedResponses}); 503 for a call, read or prompt bound
 * for a `closed` upstream while the lookup fails ({@link closedTarget}); 400/-32020 for a 2026-07-28
 * tools/call whose `Mcp-Param-*` headers disagree with its arguments ({@link paramHeaderRejection}).
 * A 2025-era `notifications/cancelled` aborts the call it names (inflight-calls.ts) before the SDK
 * answers it 202. A plain tools/list or tools/call is then answered by the fast path (fast-path.ts,
 * unless `dispatch.fastPath` is off), everything else by the SDK; both authorise each call against the
 * caller's access before contacting an upstream. A 2026-07-28 `subscriptions/listen` keeps only the
 * `resourceSubscriptions` the caller may read, held at their upstreams while its stream is open
 * ({@link listenSubscriptions}). GET and DELETE go to the SDK as they are (405: no
 * sessions). The body is classified once (classify.ts); every rule here reads that description. Past
 * authentication the request runs inside its trace span (obs/tracing.ts), spends the credential's
 * `requests` budget (429 with Retry-After when spent, policy/rate-limits.ts), and every tools/call
 * refused here is audited as a tool decision.
 */
export function mcpRoute(runtime: GatewayRuntime, surface: Surface, handler: McpHttpHandler): (ctx: Exchange) => Promise<void> {
  const { config, log, metrics } = runtime;
  const node = toNodeHandler(withMessageCounting(withJsonForLegacyClients(handler), surface.name, metrics), {
    maxRequestBodySize: config.limits.bodyBytes,
    onerror: (error) => log.error({ err: error.message, surface: surface.name }, 'MCP handler failed'),
  });
  // Not strict: a scalar body is valid JSON, which JSON-RPC 2.0 §5.1 answers -32600 (Invalid Request), not -32700.
  const parseJson = bodyParser({ enableTypes: ['json'], jsonLimit: config.limits.bodyBytes, encoding: 'utf-8', jsonStrict: false });
  const everyUpstreamClosed = config.upstreams.every((u) => u.scopes.failureMode === 'closed');
  return async (ctx: Exchange) => {
    if (ctx.method !== 'POST') return handOff(ctx, node);
    if (!isJsonContentType(ctx.get('content-type')))
      return rejectAtEdge(ctx, 'unsupported_media_type', 'Unsupported Media Type: Content-Type must be application/json');
    const requestId = ctx.state.requestId as string;
    const oauth = runtime.oauth;
    const exchange = oauth
      ? (c: Credential) =>
          bearerCredential(oauth, c, `${baseUrl(config, ctx)}${surface.path}`, config.credentials.bearer, runtime.digestKey, runtime.previousDigestKey)
      : undefined;
    const authStarted = performance.timeOrigin + performance.now();
    const authentication = await runtime.authenticator.authenticate(ctx.req.headers, { requestId, exchange });
    const authEnded = performance.timeOrigin + performance.now();
    if (authentication.kind === 'invalid') {
      if (authentication.reason === 'refused')
        return challenge(ctx, runtime, surface, `Unauthorized: ${authentication.description ?? 'the credential was refused'}`, 'invalid_token');
      const how = `${config.credentials.keyHeader} and ${config.credentials.secretHeader}${config.credentials.bearer || oauth ? ', or Authorization: Bearer <token>' : ''}`;
      return challenge(ctx, runtime, surface, `Unauthorized: send ${how}`);
    }
    if (authentication.kind === 'unavailable') {
      ctx.set('retry-after', String(Math.max(1, Math.ceil(config.cache.operationTimeoutMs / 1000))));
      return rejectAtEdge(ctx, 'auth_unavailable', `Service Unavailable: ${authentication.description}; nothing was forwarded. Retry later.`);
    }
    const { credential, standing } = authentication;
    // A failed lookup serves a credential only what its last good answer held, on `open` upstreams: one never seen valid gets 503.
    if (standing.kind === 'unverified' && (everyUpstreamClosed || !standing.lastKnown)) return scopesUnavailable(ctx, runtime, standing);
    const access = accessFor(standing, config.upstreams);
    const body = await readBody(ctx, parseJson, config.limits.bodyBytes);
    if (body === undefined) return;
    const post = classifyPost(body, ctx.req.headers, config.limits);
    const trace = startRequestTrace(runtime, surface, ctx, post);
    const authenticated = authenticatedRequest(credential, requestId, standing, trace.traceId);
    return trace.run(() => {
      // The caller's scopes were resolved (cached or looked up) before the span existed: record that step in it.
      recordSpan('scope lookup', { 'ai.cpz.gateway.scopes.result': standing.kind }, authStarted, authEnded);
      return serve(ctx, post, authenticated, access, standing);
    });
  };

  async function serve(ctx: Exchange, post: PostDescription, authenticated: AuthenticatedRequest, access: Access, standing: Standing): Promise<void> {
    // From here on every message is counted in mcp_requests_total: refused here, or by the SDK (message-metrics.ts);
    // a refused tools/call is still a tool decision: each one is audited (surfaces/tool-decision.ts).
    const started = performance.now();
    const refuse = (outcome: AuditOutcome, reason: string) => {
      countMessages(metrics, surface.name, post.messages, 'error');
      auditEdgeRefusal(runtime, surface, authenticated, post.messages, { outcome, reason, started });
    };
    const limited = await spendRequestBudget(runtime, authenticated.credential, chargedMessages(post.messages));
    if (limited) {
      refuse('rate_limited', 'rate_limited');
      return tooManyRequests(ctx, limited, post.id);
    }
    if (post.notARequest)
      return rejectAtEdge(ctx, 'invalid_request', `Invalid Request: the body is ${post.notARequest}, not a JSON-RPC request object`, post.id);
    if (post.limitBreach) {
      const { breach, inParams } = post.limitBreach;
      refuse(inParams ? 'invalid_arguments' : 'invalid_request', `limits.${breach.limit}`);
      return rejectAtEdge(
        ctx,
        inParams ? 'params_over_limit' : 'invalid_request',
        `${inParams ? 'Invalid params' : 'Invalid Request'}: ${describeBreach(breach)}`,
        post.id,
      );
    }
    if (post.unsupportedRevision !== undefined) {
      refuse('invalid_request', 'unsupported_protocol_version');
      const requested = post.unsupportedRevision;
      const shown = requested.length > 64 ? `${JSON.stringify(requested.slice(0, 64))}…` : JSON.stringify(requested);
      return rejectAtEdge(
        ctx,
        'unsupported_protocol_version',
        `Unsupported protocol version: ${shown}; this gateway serves ${SERVED_REVISIONS.join(', ')}`,
        post.id,
        // As server/discover's supportedVersions (the conformance suite holds the two equal); the message names both eras.
        { supported: [...MODERN_REVISIONS], requested },
      );
    }
    if (post.batchRefused) {
      refuse('invalid_request', 'batch_not_supported');
      return rejectAtEdge(ctx, 'batch_not_supported', `Invalid Request: JSON-RPC batches are not supported by protocol revision ${post.revision}`);
    }
    // The SDK's revision ladder (its classifier, then the SEP-2243 standard headers), answered here as its entry would answer it.
    const ladder = post.ladderRejection ?? post.headerRejection;
    if (ladder) {
      refuse('invalid_request', ladder.cell);
      return answerAtEdge(ctx, ladder.httpStatus, errorResponse('entry', post.id, ladder.code, ladder.message, ladder.data));
    }
    if (post.responses) return answerPostedResponses(ctx, runtime, authenticated, post.responses);
    if (standing.kind === 'unverified') {
      for (const message of post.messages) {
        if (await closedTarget(runtime, surface, authenticated, access, message)) {
          refuse('error', 'scopes_unavailable');
          return scopesUnavailable(ctx, runtime, standing);
        }
      }
    }
    for (const cancellation of post.cancellations) cancelInFlight(runtime, authenticated, cancellation);
    if (post.toolCall && runtime.oauth?.insufficientScope && authenticated.credential.granted) {
      const needed = await scopesNeeded(runtime, surface, authenticated, post.toolCall.name);
      if (needed) {
        refuse('refused_scope', 'insufficient_scope');
        ctx.set('www-authenticate', bearerChallenge(config, ctx, surface.path, { error: 'insufficient_scope', scope: needed.join(' ') }));
        return rejectAtEdge(ctx, 'insufficient_scope', `Forbidden: the access token lacks the scope this tool needs (one of: ${needed.join(', ')})`, post.id);
      }
    }
    if (post.paramHeaderCheck) {
      const mismatch = await paramHeaderRejection(runtime, surface, authenticated, access, post.paramHeaderCheck, (name) => headerValue(ctx, name));
      if (mismatch) {
        refuse('invalid_arguments', 'header_mismatch');
        return rejectAtEdge(ctx, 'header_mismatch', `Bad Request: the request headers and body disagree: ${mismatch}`, post.id);
      }
    }
    if (config.dispatch.fastPath && post.plain && (await answerPlainRequest(ctx, runtime, surface, authenticated, post.plain))) return;
    let body = post.body;
    if (post.resourceSubscriptions.length) {
      const uris = await listenSubscriptions(runtime, authenticated, post.resourceSubscriptions);
      if (uris.length !== post.resourceSubscriptions.length) body = withResourceSubscriptions(body as Record<string, unknown>, uris);
      // Held at the upstreams while this listen stream is open (upstream/resource-subscriptions.ts).
      const release = runtime.resourceSubscriptions.retain(uris);
      ctx.res.once('close', release);
    }
    return handOff(ctx, node, body, authInfoFor(authenticated));
  }
}

/**
 * A POST of JSON-RPC responses: a 2025-era client answering the requests the gateway wrote on its calls'
 * SSE streams (upstream/input-bridge.ts, tied back by the gateway-issued id and the credential digest).
 * 2025-11-25 basic/transports §Sending Messages to the Server: 202 with no body when the gateway accepts
 * them; otherwise 400 with an id-less JSON-RPC error (-32600), the same answer whether the id was never
 * issued, was answered or given up already (timeout, the call ended), belongs to another credential, or
 * was issued by another gateway instance. In a batch (2025-03-26) the responses that match are accepted
 * even when another is refused.
 */
function answerPostedResponses(
  ctx: Exchange,
  runtime: GatewayRuntime,
  authenticated: AuthenticatedRequest,
  responses: readonly Record<string, unknown>[],
): void {
  const refused = responses.filter((response) => !runtime.inputBridge.answer(authenticated.credential.digest, response)).length;
  if (refused === 0) {
    ctx.respond = false;
    ctx.res.statusCode = 202;
    ctx.res.end();
    return;
  }
  rejectAtEdge(
    ctx,
    'invalid_request',
    `Invalid Request: ${refused === 1 ? 'the response answers' : `${refused} responses answer`} no request this gateway is waiting on for this credential (unknown id, already answered, or given up)`,
  );
}

/**
 * The `resourceSubscriptions` of a 2026-07-28 `subscriptions/listen` the gateway honours: URIs that
 * route to an upstream the caller may read (the resources/read rule, policy/caller.ts `route`). The
 * rest are dropped before the SDK sees the listen, so they are neither held upstream nor delivered to
 * this stream (the SDK delivers an update to every stream listing its URI) nor acknowledged: a URI
 * the caller may not read is answered exactly as one nobody owns.
 */
async function listenSubscriptions(runtime: GatewayRuntime, request: AuthenticatedRequest, uris: readonly string[]): Promise<string[]> {
  const caller = createCaller(runtime, request, 'modern');
  const routed = await Promise.all(
    uris.map((uri) =>
      caller.route('resources/read', { uri }).then(
        () => uri,
        () => undefined,
      ),
    ),
  );
  return routed.filter((uri): uri is string => uri !== undefined);
}

/**
 * The request's SERVER span (obs/tracing.ts), parented by the `traceparent` header or the single
 * message's `_meta.traceparent`, ended when the response closes; its trace id goes on the
 * authenticated request (audit events carry it).
 */
function startRequestTrace(runtime: GatewayRuntime, surface: Surface, ctx: Exchange, post: PostDescription): RequestTrace {
  const message = post.batch ? undefined : post.messages[0];
  const claim = (message?.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[PROTOCOL_VERSION_META_KEY];
  const trace = runtime.tracing.startRequest({
    path: surface.path,
    surface: surface.name,
    httpMethod: ctx.method,
    headers: ctx.req.headers,
    message,
    protocolVersion: post.revision || (typeof claim === 'string' ? claim : undefined),
    sessionId: ctx.get('mcp-session-id') || undefined,
  });
  if (runtime.tracing.enabled) ctx.res.once('close', () => trace.end({ httpStatus: ctx.res.statusCode }));
  return trace;
}

/** Spends the credential's `requests` budget (policy/rate-limits.ts); the refusal when it is spent. */
async function spendRequestBudget(
  runtime: GatewayRuntime,
  credential: Credential,
  messages: number,
): Promise<Extract<RateDecision, { ok: false }> | undefined> {
  if (messages === 0) return undefined;
  const charge = runtime.rateLimiter && requestCharge(runtime.config.rateLimits, credential.account ?? credential.digest, messages);
  if (!charge) return undefined;
  const decision = await runtime.rateLimiter!.consume([charge]);
  return decision.ok ? undefined : decision;
}

/** HTTP 429 with Retry-After in whole seconds (RFC 6585 §4, RFC 9110 §10.2.3), before anything is dispatched; its JSON-RPC error carries the request's id when it could be read. */
function tooManyRequests(ctx: Exchange, refused: Extract<RateDecision, { ok: false }>, id: PostDescription['id']): void {
  const seconds = Math.max(1, Math.ceil(refused.retryAfterMs / 1000));
  ctx.set('retry-after', String(seconds));
  rejectAtEdge(
    ctx,
    'rate_limited',
    `Too Many Requests: this account's ${refused.budget} budget (${describeBudget(refused.limit)}) is spent; retry after ${seconds} s`,
    id,
  );
}

/**
 * SEP-2243 server validation of `Mcp-Param-*` headers (spec 2026-07-28 basic/transports/streamable-http
 * §Server Validation), which the SDK only runs for tools an McpServer registered itself: on a 2026-07-28
 * tools/call of a catalogue tool this surface advertises to the caller (policy/tool-resolution.ts)
 * whose inputSchema declares `x-mcp-header`,
 * every argument it marks must come with its header, decoding to the same value. A tool the surface
 * does not list (found with search_tools on /mcp/compact) is not checked: its caller had no definition
 * to mirror from; the upstream gets headers built from the arguments either way (forwarding.ts). A tool
 * the caller may not see is not checked either (its answer would describe it): dispatch refuses the
 * call as unknown. Checked here because the spec wants 400, and a handler's error travels in-band (200).
 * Returns why the request is refused, or undefined.
 */
async function paramHeaderRejection(
  runtime: GatewayRuntime,
  surface: Surface,
  request: AuthenticatedRequest,
  access: Access,
  call: ParamHeaderCheck,
  header: (name: string) => string | undefined,
): Promise<string | undefined> {
  const catalog = await runtime.upstreamSet.catalog({ credential: request.credential, requestId: request.requestId }).catch(() => undefined);
  const target = catalog && resolveTool(catalog, access, call.name, surface.name);
  const scan = target?.advertised ? paramHeaders(target.tool.definition.inputSchema) : undefined;
  return scan?.valid && scan.headers.length ? paramHeaderMismatch(scan.headers, call.arguments, header) : undefined;
}

/**
 * Whether a message acts on an upstream the caller may not reach because its scope lookup failed and
 * that upstream's failure mode is `closed` (a tools/call of one of its tools, directly or through
 * call_tool, or a read, prompt or completion routed to it). Lists are not: they leave such an
 * upstream's items out (policy/visibility.ts). Reads the catalogue and the list caches only.
 */
async function closedTarget(
  runtime: GatewayRuntime,
  surface: Surface,
  request: AuthenticatedRequest,
  access: Access,
  message: Record<string, unknown>,
): Promise<boolean> {
  const onBehalfOf = { credential: request.credential, requestId: request.requestId };
  const params = (message.params ?? {}) as Record<string, unknown>;
  try {
    if (message.method === 'tools/call') {
      const name = surface.name === 'compact' && params.name === CALL_TOOL ? (params.arguments as { name?: unknown } | undefined)?.name : params.name;
      if (typeof name !== 'string') return false;
      const { tool } = resolveTool(await runtime.upstreamSet.catalog(onBehalfOf), access, name, surface.name);
      return tool !== undefined && access.of(tool.upstream) === 'none';
    }
    if (message.method === 'resources/read' || message.method === 'prompts/get' || message.method === 'completion/complete') {
      const route = await runtime.upstreamSet.route(message.method, params, onBehalfOf);
      return access.of(route.upstream.client.name) === 'none';
    }
  } catch {
    // Unknown names and unreachable catalogues are answered by dispatch, as for any caller.
  }
  return false;
}

/**
 * 503 with Retry-After (RFC 9110 §10.2.3, seconds): the caller's scopes could not be established (the
 * lookup timed out, failed or had no scopes field) and the upstream's failure mode is `closed`, so
 * nothing is forwarded. The reason was logged and counted by the lookup (mcp_scope_lookups_total).
 */
function scopesUnavailable(ctx: Exchange, runtime: GatewayRuntime, standing: Extract<Standing, { kind: 'unverified' }>): void {
  ctx.set('retry-after', String(Math.max(1, Math.ceil(runtime.config.scopes.timeoutMs / 1000))));
  rejectAtEdge(
    ctx,
    'scopes_unavailable',
    `Service Unavailable: the caller's scopes could not be looked up (${standing.reason}); nothing was forwarded. Retry later.`,
  );
}

/**
 * Step-up (MCP 2026-07-28 authorization "Scope Challenge Handling", RFC 6750 §3.1), only with
 * `oauth.external.insufficientScope`: a tools/call of a catalogue tool that the OAuth token's scopes do
 * not reach gets 403 naming the scopes that would (any one suffices). Off by default, because it tells
 * the caller that a hidden tool exists. Returns those scopes, or undefined to let the call go on.
 */
async function scopesNeeded(runtime: GatewayRuntime, surface: Surface, request: AuthenticatedRequest, name: string): Promise<string[] | undefined> {
  const catalog = await runtime.upstreamSet.catalog({ credential: request.credential, requestId: request.requestId }).catch(() => undefined);
  const granted = accessFor({ kind: 'scopes', scopes: request.credential.granted!.scopes }, runtime.config.upstreams);
  const target = catalog && resolveTool(catalog, granted, name, surface.name);
  if (!target?.tool || target.visible) return undefined;
  return [...target.tool.requiredScopes];
}

/** A 2025-era `notifications/cancelled` (its own POST): aborts the forwarded call it names, if unambiguous. */
function cancelInFlight(runtime: GatewayRuntime, request: AuthenticatedRequest, { requestId, reason }: Cancellation): void {
  const outcome = runtime.inflightCalls.cancel(request.credential.digest, requestId, reason);
  requestLog(runtime.log, request.requestId).debug({ cancelledId: requestId, outcome }, 'notifications/cancelled');
}

function headerValue(ctx: Exchange, name: string): string | undefined {
  const value = ctx.req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

type NodeHandler = ReturnType<typeof toNodeHandler>;

/** The content codings the body parser decodes (co-body's inflation); `limits.bodyBytes` bounds the decoded body. */
const SUPPORTED_CODINGS = 'gzip, deflate, br, identity';

async function handOff(ctx: Exchange, node: NodeHandler, body?: unknown, auth?: AuthInfo): Promise<void> {
  ctx.respond = false;
  const req = ctx.req as IncomingMessage & { auth?: AuthInfo };
  if (auth) req.auth = auth;
  await node(req, ctx.res, body);
}

/**
 * The parsed JSON body, or undefined once the edge has answered: 413 over `limit`, 415 for a
 * Content-Encoding other than {@link SUPPORTED_CODINGS}, 400/-32700 for a body that is not JSON, empty
 * ones included (JSON-RPC 2.0 §5.1: "Invalid JSON was received"), and for one with a `__proto__` key or
 * `constructor.prototype` (as co-body refuses them: prototype poisoning). Any other JSON value is
 * returned, scalars too: valid JSON that is no request is -32600, the classifier's to say (classify.ts).
 * Read raw from the socket and parsed once; a request body with a Content-Encoding goes through the
 * body parser, which inflates it.
 */
async function readBody(ctx: Exchange, parseJson: Middleware, limit: number): Promise<unknown> {
  const encoding = ctx.get('content-encoding');
  // Only Koa serves a body with a Content-Encoding (app.ts createListener): its body parser inflates it.
  if (encoding && encoding.toLowerCase() !== 'identity') return readEncodedBody(ctx as Context, parseJson, limit);
  const tooLarge = () => void rejectAtEdge(ctx, 'payload_too_large', `Payload Too Large: the body exceeds ${limit} bytes`);
  const notJson = () => void rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is not valid JSON');
  if (Number(ctx.get('content-length')) > limit) {
    ctx.req.resume();
    return tooLarge();
  }
  const raw = await rawBody(ctx.req, limit);
  // The caller went away mid-body: nobody is left to answer.
  if (raw === 'broken') return notJson();
  if (raw === 'too_large') return tooLarge();
  const text = raw.toString('utf8');
  if (!text.trim()) {
    rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is empty; send a JSON-RPC message');
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return notJson();
  }
  if (parsed !== null && typeof parsed === 'object' && SUSPECT_KEYS.test(text) && poisoned(parsed)) {
    rejectAtEdge(ctx, 'parse_error', 'Parse error: the body holds a __proto__ or constructor.prototype key');
    return undefined;
  }
  return parsed;
}

/**
 * The request body's bytes, read with stream events (no async iterator: a promise per chunk), or why
 * not: past `limit` (the rest is drained unread) or the stream broke.
 */
function rawBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'broken'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      resolve('too_large');
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', () => resolve('broken'));
    // Closed before its end (the caller went away): resolves nothing new once it ended or overflowed.
    req.once('close', () => {
      if (!req.readableEnded) resolve('broken');
    });
  });
}

/** Text that may hold a `__proto__` or `constructor` key (plain or \u-escaped): only then is the parsed value walked. */
const SUSPECT_KEYS = /__proto__|constructor|\\u00/;

/**
 * Whether `value` has an own `__proto__` key, or a `constructor` key holding `prototype`, anywhere
 * (@hapi/bourne's rule). Iterative: a body may nest deeper than the call stack (the depth limit is
 * checked after parsing, classify.ts).
 */
function poisoned(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Object.hasOwn(node, '__proto__')) return true;
    const ctor = (node as Record<string, unknown>).constructor;
    if (Object.hasOwn(node, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') pending.push(child);
  }
  return false;
}

/** A request body with a Content-Encoding: the body parser inflates and parses it. */
async function readEncodedBody(ctx: Context, parseJson: Middleware, limit: number): Promise<unknown> {
  try {
    await parseJson(ctx, async () => {});
    const request = ctx.request as { body?: unknown; rawBody?: string };
    if (!request.rawBody?.trim()) {
      rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is empty; send a JSON-RPC message');
      return undefined;
    }
    return request.body;
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 413) rejectAtEdge(ctx, 'payload_too_large', `Payload Too Large: the body exceeds ${limit} bytes`);
    else if (status === 415) {
      // RFC 9110 §15.5.16: an unsupported content coding is 415, naming the codings that are accepted.
      ctx.set('accept-encoding', SUPPORTED_CODINGS);
      rejectAtEdge(
        ctx,
        'unsupported_media_type',
        `Unsupported Media Type: Content-Encoding "${ctx.get('content-encoding')}" is not supported; send ${SUPPORTED_CODINGS}`,
      );
    } else if (String((error as { code?: unknown }).code).startsWith('Z_'))
      // zlib could not inflate it (a plain or truncated body under a Content-Encoding): say so, not "not JSON".
      rejectAtEdge(ctx, 'parse_error', `Parse error: the body is not valid ${ctx.get('content-encoding')} data (Content-Encoding)`);
    else rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is not valid JSON');
    return undefined;
  }
}

function challenge(ctx: Exchange, runtime: GatewayRuntime, surface: Surface, message: string, error?: 'invalid_token'): void {
  ctx.set('www-authenticate', bearerChallenge(runtime.config, ctx, surface.path, error ? { error } : {}));
  rejectAtEdge(ctx, 'unauthorized', message);
}
