import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Exchange } from './exchange.ts';
import { bodyParser } from '@koa/bodyparser';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY, isJsonContentType, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { authenticatedRequest, authInfoFor, withRevision, type AuthenticatedRequest } from '../auth/authenticated.ts';
import type { Standing } from '../auth/authenticate.ts';
import { credentialForm, credentialHeaderRepeats, sendsBearerToken, type Credential } from '../auth/credentials.ts';
import { answerAtEdge, noteTraceId, rejectAtEdge } from './edge.ts';
import { answerPlainRequest } from './fast-path.ts';
import { admit, reportRefusal, withCallTarget, type AdmissionRefusal, type EdgeRefusal } from '../mcp/admission.ts';
import { answeredWithoutDispatch, reportMessage } from '../mcp/message-metrics.ts';
import { MAX_BATCH_MESSAGES, MODERN_REVISIONS, REVISION_WITHOUT_HEADER, SERVED_REVISIONS, servedEra } from '../wire/revisions.ts';
import { chooseRepresentation } from '../wire/negotiation.ts';
import { LEGACY_SSE_HEADERS, sseMessageEvent } from '../wire/sse.ts';
import { decodeParamValue } from '../wire/param-value.ts';
import { revisionClaim } from '../wire/requests.ts';
import { ERROR_CODE, echoableId, errorResponse, type RequestId } from '../wire/jsonrpc.ts';
import { MODERN_TASK_METHODS, type TaskMethod } from '../upstream/types.ts';
import { createCaller } from '../policy/caller.ts';
import { modernTasksServed } from '../mcp/server.ts';
import { invalidParams } from '../mcp/invalid-params.ts';
import { classifyPost, type PostDescription } from './classify.ts';
import { withNegotiatedAnswers } from './negotiated-answer.ts';
import type { CallTarget, Surface } from '../ports.ts';
import { bearerChallenge, tokenAudience, type Misdirected } from './protected-resource.ts';
import { bearerCredential } from '../auth/oauth/credential.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import type { Requester } from '../obs/outcomes.ts';
import { recordSpan, traceIdOf, type RequestTrace } from '../obs/tracing.ts';
import { describeBreach, formatPath } from '../checks/input-limits.ts';
import { jsonPointer } from '../checks/json-pointer.ts';
import { describeInexactNumber, inexactNumber, type InexactNumber } from '../checks/exact-numbers.ts';
import { errorMapping, type ErrorKind } from '../errors.ts';

/**
 * What a caller that sends, under 2026-07-28, a method of the 2025 revisions that 2026-07-28 removed is told
 * to send instead (2026-07-28 changelog, major changes 2, 4 and 5: no handshake, `subscriptions/listen`
 * in place of resources/subscribe and resources/unsubscribe, no ping, the log level per request in `_meta`).
 */
const REMOVED_METHOD_HINTS: Readonly<Record<string, string>> = {
  initialize:
    'initialize is no method of revision 2026-07-28, which has no handshake: send each request with its _meta envelope (server/discover describes the server), or send MCP-Protocol-Version: 2025-11-25 to initialize',
  ping: 'ping is no method of revision 2026-07-28: any request shows the server is there (server/discover is the cheapest), or send MCP-Protocol-Version: 2025-11-25 to ping',
  'logging/setLevel': `logging/setLevel is no method of revision 2026-07-28: send the level with each request as _meta["${LOG_LEVEL_META_KEY}"] (log messages are sent only for a request that carries it)`,
  'resources/subscribe':
    'resources/subscribe is no method of revision 2026-07-28: open a subscriptions/listen stream whose params.notifications.resourceSubscriptions lists the URIs (server/discover says whether resources.subscribe is offered)',
  'resources/unsubscribe':
    'resources/unsubscribe is no method of revision 2026-07-28: close the subscriptions/listen stream that names the URI, or open one whose resourceSubscriptions leaves it out',
};

/** The SDK ladder's cells refusing a request for its 2026-07-28 `_meta` envelope alone (absent, or incomplete). */
const ENVELOPE_CELLS: ReadonlySet<string> = new Set(['modern-header-without-claim', 'envelope-invalid']);

/**
 * The MCP endpoint of one surface, over HTTP: what is HTTP about an MCP POST is decided here, then the
 * MCP admission step (mcp/admission.ts) decides what is MCP about it, and the fast path (fast-path.ts,
 * unless `dispatch.fastPath` is off) or the SDK handler (`createMcpHandler` + `toNodeHandler`, with the
 * parsed body and the caller's AuthInfo, `ctx.respond = false`) answers it. In order:
 * 415 for a non-JSON Content-Type or one naming a charset other than UTF-8; authentication before any body is read (auth/authenticate.ts: 401
 * with the RFC 9728 challenge without a credential, or for one no source knows or the scope endpoint
 * refuses, on every method; 421 for an OAuth token presented where its audience cannot be told, the Host
 * naming another port than the connection reached without publicUrl (protected-resource.ts `tokenAudience`;
 * `warnMisdirected` tells the operator); 503 with Retry-After when the scope lookup failed and every upstream's
 * failure mode is `closed`); 413 over `limits.bodyBytes`, 415 for an unsupported Content-Encoding, and
 * 400/-32700 for a body that is not UTF-8, malformed JSON or an empty body; the body classified once (classify.ts) and refused on
 * what HTTP and the revision ladder decide: 400/-32600 for JSON that is no request (a scalar, `[]`, a
 * message or batch element with a malformed member), 400/-32600 (-32602 inside params) over an input
 * limit (`limits.jsonDepth`/`stringLength`/`arrayLength`/`objectMembers`; tool arguments are the call's to refuse unless nested past checks/input-limits.ts JSON_DEPTH_CEILING:
 * tool-call.ts), 400/-32022 for a revision the gateway does not serve (the `_meta` claim, else the
 * `MCP-Protocol-Version` header; `data.supported` as server/discover, the message naming both eras),
 * 400/-32600 for a batch under a revision without batching or of more than 100 messages (the SDK's cap:
 * wire/revisions.ts `MAX_BATCH_MESSAGES`, `data.maxBatchMessages`) or holding an initialize request (2025-03-26
 * basic/lifecycle: it MUST NOT be batched; `data.path`), 404/-32601 for a tasks-extension
 * method a 2026-07-28 caller is not offered whose `Mcp-Name` would be refused (as any unknown method there),
 * 400/-32602 for a name, URI or task id `Mcp-Name`
 * mirrors that holds a lone UTF-16 surrogate (classify.ts `illFormedName`), the SDK's own ladder refusals (its
 * classifier, the SEP-2243 standard headers) answered as the SDK would, and 406 for an Accept admitting neither
 * JSON nor SSE (wire/negotiation.ts; an acceptable one gets its preferred representation: negotiated-answer.ts).
 * A 2026-07-28 `subscriptions/listen` whose params break the spec schema: -32602 naming the path (mcp/invalid-params.ts).
 * Then admission (budget 429, posted responses, closed upstreams 503, step-up 403, `Mcp-Param` 400).
 * GET and DELETE go to the SDK as they are (405: no sessions). Past authentication the request runs
 * inside its trace span (obs/tracing.ts). Every refusal is reported once as an outcome event
 * (mcp/admission.ts `reportRefusal`: the audit trail and the metrics subscribe), and so is every message
 * the SDK answers without dispatching it to a server instance (message-metrics.ts).
 */
export function mcpRoute(
  runtime: GatewayRuntime,
  surface: Surface,
  handler: McpHttpHandler,
  warnMisdirected: (misdirected: Misdirected) => void,
): (ctx: Exchange) => Promise<void> {
  const { config, log } = runtime;
  const node = toNodeHandler(withNegotiatedAnswers(handler), {
    maxRequestBodySize: config.limits.bodyBytes,
    onerror: (error) => log.error({ err: error.message, surface: surface.name }, 'MCP handler failed'),
  });
  // Not strict: a scalar body is valid JSON, which JSON-RPC 2.0 §5.1 answers -32600 (Invalid Request), not -32700.
  const parseJson = bodyParser({ enableTypes: ['json'], jsonLimit: config.limits.bodyBytes, encoding: 'utf-8', jsonStrict: false });
  const everyUpstreamClosed = config.upstreams.every((u) => u.scopes.failureMode === 'closed');
  const repeatsCredentialHeader = credentialHeaderRepeats(config.credentials);
  return async (ctx: Exchange) => {
    if (ctx.method !== 'POST') return handOff(ctx, node);
    const started = performance.now();
    const requestId = ctx.state.requestId as string;
    const address = ctx.state.address as string | undefined;
    // Before a credential is known: who asked is the request id, the client address, the form of what it
    // presented and, for a tools/call, the tool its Mcp-Name header names (no body may have been read).
    // Written out, as `requester` below: one shape, not a spread per request.
    const named = namedTool(ctx);
    const repeated = repeatsCredentialHeader(ctx.req);
    const anonymous: Requester = {
      requestId,
      address,
      credentialForm: repeated ? 'incomplete' : credentialForm(ctx.req.headers, config.credentials),
      namedTool: named,
    };
    const refused = (
      requester: Requester,
      kind: ErrorKind,
      message: string,
      outcome: EdgeRefusal['outcome'],
      reason: string,
      post?: PostDescription,
      data?: Record<string, unknown>,
      budget?: string,
    ) => {
      rejectAtEdge(ctx, kind, message, post?.id ?? null, data);
      // Refused before its span: the caller's own trace id (its traceparent header) still joins the lines to its trace (SRE try-out).
      const traceId = requester.traceId ?? traceIdOf(ctx.get('traceparent') || undefined);
      noteTraceId(ctx.res, traceId);
      const who = traceId === requester.traceId ? requester : { ...requester, traceId };
      reportRefusal(runtime, surface.name, who, post?.messages ?? [], post?.era, { outcome, reason, budget, status: ctx.status, started });
    };
    const refuseGuessing = (who: Requester, retryAfterMs: number) => {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      const { points, durationMs } = config.rateLimits.refusedCredentials.perKey!;
      ctx.set('retry-after', String(seconds));
      return refused(
        who,
        'rate_limited',
        `Too Many Requests: too many refused secrets for this ${config.credentials.keyHeader} from this address (rateLimits.refusedCredentials.perKey, ${points} per ${durationMs / 1000} s); its requests from this address are refused unchecked for ${seconds} s`,
        'rate_limited',
        'refused_credentials',
        undefined,
        undefined,
        'refused_credentials_per_key',
      );
    };
    if (!isJsonContentType(ctx.get('content-type')))
      return refused(
        anonymous,
        'unsupported_media_type',
        'Unsupported Media Type: Content-Type must be application/json',
        'invalid_request',
        'unsupported_media_type',
      );
    const charset = foreignCharset(ctx.get('content-type'));
    if (charset !== undefined)
      return refused(
        anonymous,
        'unsupported_media_type',
        `Unsupported Media Type: Content-Type charset ${JSON.stringify(charset.slice(0, 40))} is not supported; JSON is UTF-8 (RFC 8259 §8.1): send application/json or application/json; charset=utf-8`,
        'invalid_request',
        'unsupported_media_type',
      );
    const oauth = runtime.oauth;
    const exchange = oauth
      ? (c: Credential) =>
          bearerCredential(oauth, c, tokenAudience(config, ctx, surface.path), config.credentials.bearer, runtime.digestKey, runtime.previousDigestKey)
      : undefined;
    const authStarted = performance.timeOrigin + performance.now();
    // A credential header sent twice is ambiguous (credentials.ts credentialHeaderRepeats): refused whatever else
    // came with it, as RFC 6750 §3.1 answers a repeated parameter (400 invalid_request).
    if (repeated) {
      ctx.set('www-authenticate', bearerChallenge(config, ctx, surface.path, { error: 'invalid_request' }));
      return refused(
        anonymous,
        'invalid_request',
        `Bad Request: a credential header was sent more than once; send Authorization, ${config.credentials.keyHeader} and ${config.credentials.secretHeader} once each`,
        'invalid_request',
        'ambiguous_credential',
      );
    }
    const authentication = await runtime.authenticator.authenticate(ctx.req.headers, {
      requestId,
      exchange,
      guesses: runtime.refusedCredentials,
      address: address ?? ctx.req.socket.remoteAddress ?? '',
    });
    const authEnded = performance.timeOrigin + performance.now();
    if (authentication.kind === 'throttled') {
      // The limiter counted the check over the budget; a block already known is counted here.
      if (authentication.blocked) runtime.metrics.rateLimited.inc({ budget: 'refused_credentials_per_key' });
      return refuseGuessing({ ...anonymous, account: authentication.keyId }, authentication.retryAfterMs);
    }
    if (authentication.kind === 'invalid') {
      const how = `${config.credentials.keyHeader} and ${config.credentials.secretHeader}${config.credentials.bearer || oauth ? ', or Authorization: Bearer <token>' : ''}`;
      const message =
        authentication.reason === 'refused' ? `Unauthorized: ${authentication.description ?? 'the credential was refused'}` : `Unauthorized: send ${how}`;
      // invalid_token names a bearer token that was sent (RFC 6750 §3.1): a refused key pair alone gets the bare challenge
      // (client try-out: an OAuth client told its token was invalid may drop its tokens or sign in again).
      const tokenSent = sendsBearerToken(ctx.req.headers);
      ctx.set(
        'www-authenticate',
        bearerChallenge(config, ctx, surface.path, authentication.reason === 'refused' && tokenSent ? { error: 'invalid_token' } : {}),
      );
      const who = authentication.keyId === undefined ? anonymous : { ...anonymous, account: authentication.keyId };
      return refused(who, 'unauthorized', message, 'unauthorized', authentication.cause);
    }
    if (authentication.kind === 'misdirected') {
      const audience = tokenAudience(config, ctx, surface.path);
      if (typeof audience !== 'string') warnMisdirected(audience);
      return refused(anonymous, 'misdirected_request', `Misdirected Request: ${authentication.description}`, 'error', 'misdirected_request');
    }
    if (authentication.kind === 'unavailable') {
      ctx.set('retry-after', String(Math.max(1, Math.ceil(authentication.retryAfterSeconds ?? config.cache.operationTimeoutMs / 1000))));
      return refused(
        anonymous,
        'auth_unavailable',
        `Service Unavailable: ${authentication.description}; nothing was forwarded. Retry later.`,
        'error',
        'auth_unavailable',
      );
    }
    const { credential, standing } = authentication;
    // Written out, not spread: a literal of one shape is a plain allocation (spreads took V8's slow define path per call).
    const requester: Requester = {
      requestId,
      address,
      credentialForm: anonymous.credentialForm,
      credentialDigest: credential.digest,
      apiKey: credential.apiKey,
      oauth: credential.oauth,
      namedTool: named,
    };
    // A failed lookup serves a credential only what its last good answer held, on `open` upstreams: one never seen valid gets 503.
    if (standing.kind === 'unverified' && (everyUpstreamClosed || !standing.lastKnown)) {
      ctx.set('retry-after', String(Math.max(1, Math.ceil(config.scopes.timeoutMs / 1000))));
      return refused(requester, 'scopes_unavailable', scopesUnavailableMessage(standing), 'error', 'scopes_unavailable');
    }
    const body = await readBody(ctx, parseJson, config.limits.bodyBytes, config.limits.stringLength);
    if (body === undefined)
      return reportRefusal(runtime, surface.name, requester, [], undefined, {
        outcome: 'invalid_request',
        reason: (ctx.state.bodyRefusal as string | undefined) ?? (ctx.status === 413 ? 'payload_too_large' : 'unreadable_body'),
        status: ctx.status,
        started,
      });
    const post = classifyPost(body, ctx.req.headers, config.limits);
    const trace = startRequestTrace(runtime, surface, ctx, post);
    const authenticated = authenticatedRequest(credential, requestId, standing, trace.traceId, address);
    return trace.run(() => {
      // The caller's scopes were resolved (cached or looked up) before the span existed: record that step in it.
      recordSpan('scope lookup', { 'ai.cpz.gateway.scopes.result': standing.kind }, authStarted, authEnded);
      return serve(ctx, post, authenticated, trace.traceId ? { ...requester, traceId: trace.traceId } : requester, started);
    });
  };

  async function serve(ctx: Exchange, post: PostDescription, authenticated: AuthenticatedRequest, requester: Requester, started: number): Promise<void> {
    const refuse = (
      kind: ErrorKind,
      message: string,
      outcome: EdgeRefusal['outcome'],
      reason: string,
      id: RequestId | null,
      data?: Record<string, unknown>,
    ) => {
      rejectAtEdge(ctx, kind, message, id, data);
      reportRefusal(runtime, surface.name, requester, post.messages, post.era, { outcome, reason, status: ctx.status, started });
    };
    if (post.notARequest)
      return refuse(
        'invalid_request',
        `Invalid Request: the body is ${post.notARequest}, not a JSON-RPC request object`,
        'invalid_request',
        'invalid_request',
        post.id,
      );
    if (post.limitBreach) {
      const { breach, inParams } = post.limitBreach;
      return refuse(
        inParams ? 'params_over_limit' : 'invalid_request',
        `${inParams ? 'Invalid params' : 'Invalid Request'}: ${describeBreach(breach)}`,
        inParams ? 'invalid_arguments' : 'invalid_request',
        `limits.${breach.limit}`,
        post.id,
        // The offending path as the message shows it (a JSON Pointer, long ones cut with "…"), for a client that reads data.
        { path: formatPath(breach.path), limit: `limits.${breach.limit}`, max: breach.max },
      );
    }
    if (post.unsupportedRevision !== undefined) {
      const requested = post.unsupportedRevision;
      const shown = requested.length > 64 ? `${JSON.stringify(requested.slice(0, 64))}…` : JSON.stringify(requested);
      // data.supported as server/discover's supportedVersions (the conformance suite holds the two equal); the message names both eras.
      return refuse(
        'unsupported_protocol_version',
        `Unsupported protocol version: ${shown}; this gateway serves ${SERVED_REVISIONS.join(', ')}`,
        'invalid_request',
        'unsupported_protocol_version',
        post.id,
        { supported: [...MODERN_REVISIONS], requested },
      );
    }
    if (post.batchRefused)
      return refuse(
        'batch_not_supported',
        `Invalid Request: JSON-RPC batches are not supported by protocol revision ${post.revision}`,
        'invalid_request',
        'batch_not_supported',
        null,
      );
    if (post.batch && post.messages.length > MAX_BATCH_MESSAGES)
      return refuse(
        'invalid_request',
        `Invalid Request: a JSON-RPC batch of ${post.messages.length} messages; at most ${MAX_BATCH_MESSAGES} are served in one batch`,
        'invalid_request',
        'batch_too_large',
        null,
        { maxBatchMessages: MAX_BATCH_MESSAGES },
      );
    // Refused whole, before the SDK's 2025 leg read it as a second initialization ("Only one initialization request is allowed").
    if (post.batchedInitialize !== undefined) {
      const path = jsonPointer([post.batchedInitialize]);
      return refuse(
        'invalid_request',
        `Invalid Request: the batch holds an initialize request at ${path}; the initialize request MUST NOT be part of a JSON-RPC batch (2025-03-26 basic/lifecycle): send it alone, then batch what follows it`,
        'invalid_request',
        'batched_initialize',
        null,
        { path },
      );
    }
    // A 2025-era method 2026-07-28 removed (initialize, ping, logging/setLevel, resources/subscribe and /unsubscribe):
    // unknown there (404/-32601, as the SDK answers), saying what to send instead (try-outs). Named before an
    // envelope the request lacks too (adding one would only lead to the 404), as the SDK names an initialize
    // without one (-32020, "an initialize request (legacy handshake) was sent with a modern MCP-Protocol-Version header").
    // A request only: a notification of one is acknowledged 202 as any notification is (review).
    const removed = removedMethodOf(post);
    /** An unknown method on 2026-07-28 as the SDK answers one (HTTP 404, -32601, SEP-2575), counted as its path counts it. */
    const unknownMethod = (method: unknown, hint?: string): void => {
      answerAtEdge(ctx, 404, errorResponse('in-band', post.id, ERROR_CODE.methodNotFound, hint ? `Method not found: ${hint}` : 'Method not found'));
      reportMessage(runtime.outcomes, { endpoint: surface.name, era: 'modern' }, method, 'error');
    };
    if (removed !== undefined) return unknownMethod(removed, REMOVED_METHOD_HINTS[removed]);
    // server/discover asked in a 2025 revision (header or _meta claim): a 2026-07-28 method, unknown there and answered
    // in band as the 2025 leg answers one (-32601, HTTP 200), saying what such a client sends. Before (try-out), a _meta
    // claiming 2025-11-25 got the SDK's "Invalid _meta envelope for protocol revision 2026-07-28", a revision never asked for.
    const discoverIn = legacyDiscoverRevision(post, headerValue(ctx, 'mcp-protocol-version') !== undefined);
    const representation = discoverIn && chooseRepresentation(ctx.req.headers.accept, 'sse');
    if (discoverIn && representation) {
      const answer = errorResponse('in-band', post.id, ERROR_CODE.methodNotFound, `Method not found: ${legacyDiscoverHint(discoverIn)}`);
      if (representation === 'json') answerAtEdge(ctx, 200, answer);
      else {
        // One SSE event, framed as the 2025 leg frames its answers (the exchange writes JSON bodies only).
        ctx.respond = false;
        ctx.res.writeHead(200, LEGACY_SSE_HEADERS);
        ctx.res.end(sseMessageEvent([answer]).join(''));
      }
      return reportMessage(runtime.outcomes, { endpoint: surface.name, era: 'legacy' }, 'server/discover', 'error');
    }
    // A task method not served to a 2026-07-28 caller is an unknown method there, whatever its Mcp-Name: 404/-32601.
    if (await unservedTaskMethod(post, authenticated)) return unknownMethod(post.messages[0]!.method);
    // Before the ladder: on 2026-07-28 no Mcp-Name can match such a body, and the caller's mistake is the body's.
    if (post.illFormedName) {
      const { path, at } = post.illFormedName;
      const pointer = jsonPointer(path);
      return refuse(
        'ill_formed_string',
        `Invalid params: ${pointer} is not a well-formed string: it holds a lone UTF-16 surrogate at index ${at}, which has no UTF-8 form, so no Mcp-Name header can carry it`,
        'invalid_arguments',
        'ill_formed_string',
        post.id,
        { path: pointer },
      );
    }
    // The SDK's revision ladder (its classifier, the SEP-2243 standard headers) answered as its entry would answer it, and the Accept rule.
    const ladder = post.ladderRejection ?? post.headerRejection;
    if (ladder) {
      answerAtEdge(ctx, ladder.httpStatus, errorResponse('entry', ladder.echoId === false ? null : post.id, ladder.code, ladder.message, ladder.data));
      return reportRefusal(runtime, surface.name, requester, post.messages, post.era, {
        outcome: 'invalid_request',
        reason: ladder.cell,
        status: ladder.httpStatus,
        started,
      });
    }

    // A 2026-07-28 listen's filter, checked as every method's params are: the SDK's listen router, which answers
    // it before any handler, said only "'notifications' is required and must be a valid SubscriptionFilter".
    const listen = post.era === 'modern' && !post.batch && post.messages[0]?.method === 'subscriptions/listen' ? post.messages[0] : undefined;
    const invalid = listen && invalidParams('subscriptions/listen', listen as { method: string; params?: unknown });
    if (invalid) return refuse('invalid_arguments', invalid.message, 'invalid_arguments', 'invalid_params', post.id, invalid.data as Record<string, unknown>);
    const admission = await admit(runtime, surface.name, authenticated, post, (name) => headerValue(ctx, name));
    if (admission.kind === 'refused') return refuseAdmission(ctx, post, admission.refusal, requester, started, admission.target);
    if (admission.kind === 'accepted') {
      ctx.respond = false;
      ctx.res.statusCode = 202;
      ctx.res.end();
      return;
    }
    // A caller that left while admission awaited (a listen stream's upstream subscriptions) fired 'close' already: released now, or its place was held for good (review).
    if (admission.release) {
      if (ctx.res.closed || ctx.res.destroyed) admission.release();
      else ctx.res.once('close', admission.release);
    }
    if (config.dispatch.fastPath && post.plain && (await answerPlainRequest(ctx, runtime, surface, authenticated, post.plain, admission.target))) return;
    await handOff(ctx, node, admission.body, withCallTarget(withRevision(authInfoFor(authenticated), post.revision), admission.target));
    // What the SDK answers without dispatching it to a server instance, no instance reports (message-metrics.ts).
    for (const message of post.messages) {
      if (post.era && answeredWithoutDispatch(post.era, message, ctx.res.statusCode))
        reportMessage(
          runtime.outcomes,
          { endpoint: surface.name, era: post.era },
          message.method,
          ctx.res.statusCode < 400 && message.method === 'subscriptions/listen' ? 'ok' : 'error',
        );
    }
  }

  /**
   * Whether `post` is a single 2026-07-28 request of a tasks-extension method (tasks/get, tasks/update,
   * tasks/cancel) that the edge would refuse for its `Mcp-Name` (absent, mismatched, or a task id with a
   * lone surrogate), for a caller the extension is not served to (mcp/server.ts `modernTasksServed`).
   * Such a method is then unknown there, and answered as the SDK answers any unknown method: HTTP 404,
   * -32601 (SEP-2575), not -32020 or -32602 for a member only the extension defines. With its headers in
   * order the SDK answers it so itself (no handler is registered). The caller's view is looked up only then.
   */
  async function unservedTaskMethod(post: PostDescription, authenticated: AuthenticatedRequest): Promise<boolean> {
    const message = post.batch ? undefined : post.messages[0];
    if (post.era !== 'modern' || !message || !MODERN_TASK_METHODS.includes(message.method as TaskMethod)) return false;
    if (!post.illFormedName && !(post.ladderRejection ?? post.headerRejection)?.cell.startsWith('name-header')) return false;
    const info = await createCaller(runtime, authenticated, 'modern')
      .describe()
      .catch(() => undefined);
    return !modernTasksServed(info);
  }

  /** Answers a refusal of the admission step with its HTTP status and headers (Retry-After, the step-up challenge), and reports it. */
  function refuseAdmission(ctx: Exchange, post: PostDescription, refusal: AdmissionRefusal, requester: Requester, started: number, target?: CallTarget): void {
    if (refusal.retryAfterSeconds !== undefined) ctx.set('retry-after', String(refusal.retryAfterSeconds));
    if (refusal.insufficientScope)
      ctx.set('www-authenticate', bearerChallenge(config, ctx, surface.path, { error: 'insufficient_scope', scope: refusal.insufficientScope.join(' ') }));
    rejectAtEdge(ctx, refusal.error, refusal.message, refusal.echoId ? post.id : null);
    reportRefusal(
      runtime,
      surface.name,
      requester,
      post.messages,
      post.era,
      { outcome: refusal.outcome, reason: refusal.reason, budget: refusal.budget, status: errorMapping(refusal.error).httpStatus, started },
      target,
    );
  }
}

/**
 * The method of a single 2026-07-28 request that is one of {@link REMOVED_METHOD_HINTS}: served in that era,
 * or refused by the SDK's ladder only for its `_meta` envelope under a 2026-07-28 header (or claim); else undefined.
 */
function removedMethodOf(post: PostDescription): string | undefined {
  const message = post.batch ? undefined : post.messages[0];
  if (!message || !('id' in message) || typeof message.method !== 'string' || !Object.hasOwn(REMOVED_METHOD_HINTS, message.method)) return undefined;
  if (post.era === 'modern' && !(post.ladderRejection ?? post.headerRejection)) return message.method;
  const claim = revisionClaim(message);
  const modern = MODERN_REVISIONS.includes(post.revision) || (claim !== undefined && MODERN_REVISIONS.includes(claim));
  return modern && post.ladderRejection && ENVELOPE_CELLS.has(post.ladderRejection.cell) ? message.method : undefined;
}

/**
 * The 2025 revision a single server/discover request asks for (2026-07-28 server/discover: a method of that
 * revision only; a 2025-era client learns the server's capabilities from initialize, 2025-11-25 basic/lifecycle):
 * its `_meta` claim, else its `MCP-Protocol-Version` header, else none (2025-03-26, the revision of a client that
 * sends no header), when that is a 2025 revision the gateway serves; undefined otherwise, and when the claim and a
 * header (`headerSent`, an empty one too) disagree (-32020, the SDK's to answer).
 */
function legacyDiscoverRevision(post: PostDescription, headerSent: boolean): string | undefined {
  const message = post.batch ? undefined : post.messages[0];
  if (!message || message.method !== 'server/discover' || !('id' in message)) return undefined;
  const claim = revisionClaim(message);
  if (claim !== undefined && headerSent && claim !== post.revision) return undefined;
  const asked = claim ?? (headerSent ? post.revision : REVISION_WITHOUT_HEADER);
  return servedEra(asked) === 'legacy' ? asked : undefined;
}

/** What a server/discover sent under the 2025 revision `revision` is told: what such a client sends instead. */
function legacyDiscoverHint(revision: string): string {
  return `server/discover is a method of revision ${MODERN_REVISIONS.join(', ')}, not of ${revision}: a ${revision} client sends initialize to learn the server's capabilities, or sends MCP-Protocol-Version: ${MODERN_REVISIONS[0]} with the _meta envelope to discover`;
}

/**
 * The `charset` a JSON Content-Type names when it is not UTF-8 (RFC 8259 §8.1: JSON exchanged between
 * systems MUST be UTF-8; application/json defines no charset, so only UTF-8's labels, in any case, are taken).
 */
/** The WHATWG Encoding Standard's labels of UTF-8. */
const UTF8_LABELS: ReadonlySet<string> = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);

function foreignCharset(contentType: string): string | undefined {
  const charset = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const value = charset?.[1] ?? charset?.[2];
  return value === undefined || UTF8_LABELS.has(value.toLowerCase()) ? undefined : value;
}

/** The 503 of a scope lookup that failed while every upstream's failure mode is `closed`: nothing is forwarded. */
function scopesUnavailableMessage(standing: Extract<Standing, { kind: 'unverified' }>): string {
  return `Service Unavailable: the caller's scopes could not be looked up (${standing.reason}); nothing was forwarded. Retry later.`;
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
  noteTraceId(ctx.res, trace.traceId);
  return trace;
}

/**
 * The tool a tools/call's `Mcp-Name` header names (2026-07-28 standard headers, SEP-2243), decoded; for
 * the audit line of a request refused before its body was read (401, 406, 413, 415), which has no other.
 * Undefined for another method, no header, or a value that does not decode.
 */
function namedTool(ctx: Exchange): string | undefined {
  if (ctx.req.headers['mcp-method'] !== 'tools/call') return undefined;
  const raw = headerValue(ctx, 'mcp-name');
  return raw === undefined ? undefined : decodeParamValue(raw);
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
 * Content-Encoding other than {@link SUPPORTED_CODINGS}, 400/-32700 for a body that is not UTF-8 or not JSON, empty
 * ones included (JSON-RPC 2.0 §5.1: "Invalid JSON was received"); 400/-32600 for one with a `__proto__` key or
 * `constructor.prototype` (valid JSON, refused as co-body refuses it: prototype poisoning). Any other JSON value is
 * returned, scalars too: valid JSON that is no request is -32600, the classifier's to say (classify.ts).
 * Read raw from the socket and parsed once; a request body with a Content-Encoding goes through the
 * body parser, which inflates it.
 */
async function readBody(ctx: Exchange, parseJson: Middleware, limit: number, maxIdLength: number): Promise<unknown> {
  const encoding = ctx.get('content-encoding');
  // Only Koa serves a body with a Content-Encoding (app.ts createListener): its body parser inflates it.
  if (encoding && encoding.toLowerCase() !== 'identity') return readEncodedBody(ctx as Context, parseJson, limit, maxIdLength);
  const tooLarge = () => void rejectAtEdge(ctx, 'payload_too_large', `Payload Too Large: the body exceeds ${limit} bytes`);
  const notJson = (where = '') => void rejectAtEdge(ctx, 'parse_error', `Parse error: the body is not valid JSON${where}`);
  if (Number(ctx.get('content-length')) > limit) {
    ctx.req.resume();
    return tooLarge();
  }
  const raw = await rawBody(ctx.req, limit);
  // The caller went away mid-body: nobody is left to answer.
  if (raw === 'broken') return notJson();
  if (raw === 'too_large') return tooLarge();
  // RFC 8259 §8.1: JSON is UTF-8; decoding invalid bytes would hand the upstream U+FFFD in their place.
  if (!isUtf8(raw)) {
    rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is not valid UTF-8 (RFC 8259 §8.1: JSON is UTF-8)');
    return undefined;
  }
  const text = raw.toString('utf8');
  if (!text.trim()) {
    rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is empty; send a JSON-RPC message');
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return notJson(parseErrorPlace(text, error));
  }
  const poison = parsed !== null && typeof parsed === 'object' && SUSPECT_KEYS.test(text) ? poisonedKey(parsed) : undefined;
  if (poison !== undefined) return refusePoisoned(ctx, parsed, poison, maxIdLength);
  const inexact = inexactNumber(text);
  if (inexact) return refuseInexact(ctx, parsed, inexact, maxIdLength);
  return parsed;
}

/**
 * Where JSON.parse gave up on `text`, as a caller finds it in what it sent: ` at line L, column C` (V8
 * names the UTF-16 offset), or that the text ended too soon; '' when V8 does not say. Never any of the
 * text itself (V8's message quotes it, and a body can hold credentials).
 */
function parseErrorPlace(text: string, error: unknown): string {
  const message = (error as Error)?.message ?? '';
  if (text.startsWith('\ufeff')) return ': it starts with a byte order mark (U+FEFF), which JSON text must not (RFC 8259 §8.1)';
  if (/Unexpected end of JSON input/.test(message)) return ': it ends before the JSON value does';
  const at = /at position (\d+)/.exec(message);
  if (!at) return '';
  const offset = Math.min(Number(at[1]), text.length);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return ` at line ${line}, column ${column}`;
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

/**
 * The refusal of a body with a `__proto__` key or `constructor.prototype`: valid JSON (so not -32700),
 * refused as a request (-32600), as @hapi/bourne refuses it for the body parser. `at`: the key's JSON
 * Pointer, when the parsed body could be walked (the body parser's own refusal names none).
 */
function prototypePoisoning(at?: string): string {
  return `Invalid Request: the body holds ${at ? `the key ${at}` : 'a __proto__ key or constructor.prototype'} (refused: prototype poisoning); rename the key`;
}

const PROTOTYPE_POISONING = prototypePoisoning();

/**
 * Refuses a body with a number JSON.parse does not read as written (checks/exact-numbers.ts): -32602 in a
 * single request's params, else -32600, the request's id echoed when it has one to echo.
 */
function refuseInexact(ctx: Exchange, body: unknown, found: InexactNumber, maxIdLength: number): undefined {
  // The refusal's audit reason (the caller reports every unread body, as `unreadable_body` by default).
  ctx.state.bodyRefusal = 'inexact_number';
  const id = echoedId(body, maxIdLength);
  const inParams = !Array.isArray(body) && found.path[0] === 'params';
  rejectAtEdge(
    ctx,
    inParams ? 'inexact_number' : 'invalid_request',
    `${inParams ? 'Invalid params' : 'Invalid Request'}: ${describeInexactNumber(found)}`,
    // The id itself the number (1.0000000000000001 read as 1): the caller never sent the id JSON.parse read.
    found.path[0] !== 'id' ? id : null,
    // The offending number's place, as the input limits' refusals name theirs (client try-out: in the message only).
    { path: jsonPointer(found.path) },
  );
  return undefined;
}

/** Refuses a parsed body holding `poison` (its JSON Pointer), with the request's id when it has one to echo. */
function refusePoisoned(ctx: Exchange, body: unknown, poison: string, maxIdLength: number): undefined {
  rejectAtEdge(ctx, 'invalid_request', prototypePoisoning(poison), echoedId(body, maxIdLength));
  return undefined;
}

/** The id a refusal of a parsed body echoes (JSON-RPC 2.0 §5): a single request's, when it can be echoed exactly; else null. */
/** The id of a single request to echo in its refusal (wire/jsonrpc.ts echoableId: none past `maxIdLength`). */
function echoedId(body: unknown, maxIdLength: number): string | number | null {
  return echoableId(Array.isArray(body) ? undefined : (body as { id?: unknown } | null)?.id, maxIdLength);
}

/** @hapi/bourne's error for a poisoned body (co-body's JSON parser, on the Content-Encoding path). */
const BOURNE_POISONING = 'Object contains forbidden prototype property';

/** Text that may hold a `__proto__` or `constructor` key (plain or \u-escaped): only then is the parsed value walked. */
const SUSPECT_KEYS = /__proto__|constructor|\\u00/;

/**
 * The JSON Pointer of the first own `__proto__` key, or of `constructor/prototype` (a `constructor` key
 * holding `prototype`), anywhere in `value` (@hapi/bourne's rule); undefined when there is none.
 * Iterative: a body may nest deeper than the call stack (the depth limit is checked after parsing, classify.ts).
 */
function poisonedKey(value: object): string | undefined {
  // Each node with its parent's place and its own key: the path is built only for the node found.
  const nodes: object[] = [value];
  const parents: number[] = [-1];
  const keys: (string | number)[] = [''];
  const pathTo = (at: number, ...rest: string[]) => {
    const path: (string | number)[] = rest;
    for (let i = at; i > 0; i = parents[i]!) path.unshift(keys[i]!);
    return jsonPointer(path);
  };
  for (let at = 0; at < nodes.length; at++) {
    const node = nodes[at]!;
    if (Object.hasOwn(node, '__proto__')) return pathTo(at, '__proto__');
    const ctor = (node as Record<string, unknown>).constructor;
    if (Object.hasOwn(node, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype'))
      return pathTo(at, 'constructor', 'prototype');
    const push = (child: unknown, key: string | number) => {
      if (child === null || typeof child !== 'object') return;
      nodes.push(child);
      parents.push(at);
      keys.push(key);
    };
    if (Array.isArray(node)) for (let i = 0; i < node.length; i++) push(node[i], i);
    else for (const key in node) push((node as Record<string, unknown>)[key], key);
  }
  return undefined;
}

/** A request body with a Content-Encoding: the body parser inflates and parses it. */
async function readEncodedBody(ctx: Context, parseJson: Middleware, limit: number, maxIdLength: number): Promise<unknown> {
  try {
    await parseJson(ctx, async () => {});
    const request = ctx.request as { body?: unknown; rawBody?: string };
    if (!request.rawBody?.trim()) {
      rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is empty; send a JSON-RPC message');
      return undefined;
    }
    // The parser refuses a __proto__ key only; constructor.prototype is refused here, as on the raw path.
    const poison = request.body !== null && typeof request.body === 'object' && SUSPECT_KEYS.test(request.rawBody) ? poisonedKey(request.body) : undefined;
    if (poison !== undefined) return refusePoisoned(ctx, request.body, poison, maxIdLength);
    const inexact = inexactNumber(request.rawBody);
    if (inexact) return refuseInexact(ctx, request.body, inexact, maxIdLength);
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
    } else if ((error as Error).message === BOURNE_POISONING) rejectAtEdge(ctx, 'invalid_request', PROTOTYPE_POISONING);
    else if (String((error as { code?: unknown }).code).startsWith('Z_'))
      // zlib could not inflate it (a plain or truncated body under a Content-Encoding): say so, not "not JSON".
      rejectAtEdge(ctx, 'parse_error', `Parse error: the body is not valid ${ctx.get('content-encoding')} data (Content-Encoding)`);
    else rejectAtEdge(ctx, 'parse_error', 'Parse error: the body is not valid JSON');
    return undefined;
  }
}
