import { CLIENT_INFO_META_KEY, type AuthInfo } from '@modelcontextprotocol/server';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ErrorKind } from '../errors.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import type { AskedTool, Requester } from '../obs/outcomes.ts';
import { createCaller } from '../policy/caller.ts';
import { chargedMessages, describeBudget, requestCharge } from '../policy/rate-limits.ts';
import { CALL_TOOL, resolveTool } from '../policy/tool-resolution.ts';
import { accessFor, isVisible, permits, type Access } from '../policy/visibility.ts';
import { paramHeaderMismatch, paramHeaders } from '../checks/mcp-param-headers.ts';
import { requestLog } from '../obs/request-context.ts';
import { withResourceSubscriptions } from '../upstream/resource-subscriptions.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import { isPlainObject } from '../wire/jsonrpc.ts';
import { revisionClaim } from '../wire/requests.ts';
import { MAX_BATCH_MESSAGES, type Era } from '../wire/revisions.ts';
import { methodLabel } from './message-metrics.ts';
import type { CallTarget } from '../ports.ts';
import type { SurfaceName } from '../policy/tool-resolution.ts';
import { withFields } from '../wire/objects.ts';

/**
 * MCP admission: what the gateway decides about an MCP POST once HTTP has taken it (http/mcp-endpoint.ts:
 * content type, credential, body, limits, parse, the revision ladder), before any arm runs, in one step
 * beside the arms. It resolves the call target of a tools/call ONCE (policy/tool-resolution.ts
 * `resolveTool`) into a {@link CallTarget} the arm reuses, and reads it for every rule that needs it:
 * in order, the account's `requests` budget (429, a point per message), a body of JSON-RPC responses (answered here;
 * a batch's responses beside its requests are matched alike, one answering nothing refusing the batch),
 * a call, read or prompt bound for a `closed` upstream while the scope lookup fails (503), 2025-era
 * cancellations, the OAuth step-up (403 insufficient_scope), SEP-2243 `Mcp-Param-*` headers (400
 * -32020), and the `resourceSubscriptions` a 2026-07-28 listen may hold.
 */

/** A refusal of the admission step: the answer (an error kind of errors.ts) and how the audit trail names it. */
export interface AdmissionRefusal {
  readonly error: ErrorKind;
  readonly message: string;
  /** The request's id goes in the answer (a refusal of one request, not of the exchange). */
  readonly echoId?: boolean;
  /** Retry-After, in whole seconds (RFC 9110 §10.2.3). */
  readonly retryAfterSeconds?: number;
  /** The scopes that would reach the tool, in the authorization server's terms, for the RFC 6750 §3.1 `insufficient_scope` challenge. */
  readonly insufficientScope?: readonly string[];
  readonly outcome: AuditOutcome;
  readonly reason: string;
  readonly budget?: string;
}

/** What the admission step decided. */
export type Admission =
  | { readonly kind: 'admitted'; readonly body: unknown; readonly target?: CallTarget; readonly release?: () => void }
  /** A body of JSON-RPC responses, all matched (202, no body). */
  | { readonly kind: 'accepted' }
  /** Refused; `target`, when the refusal is about the call it resolved (the audit trail names its upstream). */
  | { readonly kind: 'refused'; readonly refusal: AdmissionRefusal; readonly target?: CallTarget };

/** The parts of a classified POST (http/classify.ts `PostDescription`) admission reads. */
export interface AdmittedPost {
  readonly body: unknown;
  readonly batch: boolean;
  readonly messages: readonly Record<string, unknown>[];
  readonly cancellations: readonly { readonly requestId: string | number; readonly reason?: string }[];
  readonly toolCall?: { readonly name: string };
  readonly paramHeaderCheck?: { readonly name: string; readonly arguments: unknown };
  readonly resourceSubscriptions: readonly string[];
  readonly responses?: readonly Record<string, unknown>[];
  readonly batchedResponses?: readonly Record<string, unknown>[];
}

/** The standing every upstream refuses: its scope lookup failed and its failure mode is `closed`. */
const unverified = (request: AuthenticatedRequest) => request.standing.kind === 'unverified';

/**
 * Admits one POST for `surface`. `header` reads a request header (the `Mcp-Param-*` check); nothing
 * else of HTTP is read. Never throws: a catalogue that cannot be read leaves the target unresolved,
 * and the arm answers as for any caller.
 */
export async function admit(
  runtime: GatewayRuntime,
  surface: SurfaceName,
  request: AuthenticatedRequest,
  post: AdmittedPost,
  header: (name: string) => string | undefined,
): Promise<Admission> {
  const refused = (refusal: AdmissionRefusal, target?: CallTarget): Admission => ({ kind: 'refused', refusal, target });
  const spent = await spendRequestBudget(runtime, request, chargedMessages(post.messages));
  if (spent) return refused(spent);
  if (post.responses) return answerPostedResponses(runtime, request, post.responses);
  // A batch's responses are matched the same way: one answering nothing refuses the batch, as it would alone
  // (the SDK's stateless leg dropped them unread, a stray one and a real answer alike: try-out).
  if (post.batchedResponses) {
    const answered = answerPostedResponses(runtime, request, post.batchedResponses);
    if (answered.kind === 'refused') return answered;
  }

  const access = accessFor(request.standing, runtime.config.upstreams);
  const target = post.toolCall ? await resolveTarget(runtime, surface, request, access, post) : undefined;
  if (unverified(request) && (await closedTarget(runtime, surface, request, access, post, target))) {
    return refused(
      {
        error: 'scopes_unavailable',
        message: `Service Unavailable: the caller's scopes could not be looked up (${request.standing.kind === 'unverified' ? request.standing.reason : 'unknown'}); nothing was forwarded. Retry later.`,
        retryAfterSeconds: Math.max(1, Math.ceil(runtime.config.scopes.timeoutMs / 1000)),
        outcome: 'error',
        reason: 'scopes_unavailable',
      },
      target,
    );
  }
  for (const { requestId, reason } of post.cancellations) {
    const outcome = runtime.inflightCalls.cancel(request.credential.digest, requestId, reason);
    requestLog(runtime.log, request.requestId).debug({ cancelledId: requestId, outcome }, 'notifications/cancelled');
  }
  if (target && runtime.oauth?.insufficientScope && request.credential.granted) {
    const needed = scopesNeeded(runtime, request, target);
    // In the authorization server's terms (external: the provider's scopes through scopeMap), the names a client can ask for.
    const toRequest = runtime.oauth.scopesToRequest;
    const lists = toRequest ? needed?.map((list) => toRequest(list)) : needed;
    if (lists)
      return refused(
        {
          error: 'insufficient_scope',
          message: `Forbidden: the access token lacks the scope this tool needs (${lists.map((list) => `one of: ${list.join(', ')}`).join('; and ')})`,
          echoId: true,
          insufficientScope: [...new Set(lists.flat())],
          outcome: 'refused_scope',
          reason: 'insufficient_scope',
        },
        target,
      );
  }
  if (post.paramHeaderCheck && target) {
    const mismatch = paramHeaderRejection(target, post.paramHeaderCheck.arguments, header);
    if (mismatch)
      return refused(
        {
          error: 'header_mismatch',
          message: `Bad Request: the request headers and body disagree: ${mismatch}`,
          echoId: true,
          outcome: 'invalid_arguments',
          reason: 'header_mismatch',
        },
        target,
      );
  }
  // A listen stream counts against its account's open streams until its response closes (the edge calls `release`).
  const stream = post.messages.some((m) => m.method === 'subscriptions/listen') ? openListenStream(runtime, request) : undefined;
  if (stream && 'refusal' in stream) return refused(stream.refusal);
  if (post.resourceSubscriptions.length) {
    const uris = await listenSubscriptions(runtime, request, post.resourceSubscriptions);
    const body = uris.length === post.resourceSubscriptions.length ? post.body : withResourceSubscriptions(post.body as Record<string, unknown>, uris);
    // Held at the upstreams while this listen stream is open (upstream/resource-subscriptions.ts): the edge releases them when it closes.
    const held = runtime.resourceSubscriptions.retain(uris);
    return {
      kind: 'admitted',
      body,
      release: () => {
        held();
        stream?.release();
      },
    };
  }
  // One shape whatever is absent (wire/objects.ts: spread-built objects cost a hidden class each).
  return { kind: 'admitted', body: post.body, target, release: stream?.release };
}

/**
 * A place for one more `subscriptions/listen` stream of the caller's account (the identity the rate
 * budgets count), or the refusal past `limits.listenStreamsPerAccount`: HTTP 429, -32000, naming the key.
 */
function openListenStream(runtime: GatewayRuntime, request: AuthenticatedRequest): { release: () => void } | { refusal: AdmissionRefusal } {
  const max = runtime.config.limits.listenStreamsPerAccount;
  const release = runtime.listenStreams.acquire(request.credential.account ?? request.credential.digest, max);
  if (release) {
    const open = runtime.streamsOpen;
    open.count++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        open.count--;
        release();
      },
    };
  }
  return {
    refusal: {
      error: 'rate_limited',
      echoId: true,
      message: `Too Many Requests: this account already holds ${max} subscriptions/listen streams open, as many as limits.listenStreamsPerAccount allows; close one (or listen on one stream for everything) first`,
      outcome: 'rate_limited',
      reason: 'listen_streams',
      budget: 'listen_streams',
    },
  };
}

/** Spends the account's `requests` budget, a point per message (policy/rate-limits.ts); the refusal (429) when it is spent. */
async function spendRequestBudget(runtime: GatewayRuntime, request: AuthenticatedRequest, messages: number): Promise<AdmissionRefusal | undefined> {
  if (messages === 0) return undefined;
  const charge = runtime.rateLimiter && requestCharge(runtime.config.rateLimits, request.credential.account ?? request.credential.digest, messages);
  if (!charge) return undefined;
  const decision = await runtime.rateLimiter!.consume([charge]);
  if (decision.ok) return undefined;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return {
    error: 'rate_limited',
    echoId: true,
    message: `Too Many Requests: this account's ${decision.budget} budget (${describeBudget(decision.limit)}) is spent; retry after ${seconds} s`,
    retryAfterSeconds: seconds,
    outcome: 'rate_limited',
    reason: 'rate_limited',
    budget: decision.budget,
  };
}

/**
 * The target of a single tools/call: the tool it names, or on `/mcp/compact` a call_tool's own target,
 * resolved for the caller (policy/tool-resolution.ts). Undefined when no name is given or the
 * catalogue cannot be read (the arm then answers).
 */
async function resolveTarget(
  runtime: GatewayRuntime,
  surface: SurfaceName,
  request: AuthenticatedRequest,
  access: Access,
  post: AdmittedPost,
): Promise<CallTarget | undefined> {
  const asked = askedTool(surface, post.messages[0]);
  if (!asked?.name) return undefined;
  const catalog = await runtime.upstreamSet.catalog({ credential: request.credential, requestId: request.requestId }).catch(() => undefined);
  if (!catalog) return undefined;
  return Object.freeze({
    via: asked.via,
    name: asked.name,
    catalog,
    access,
    resolution: resolveTool(catalog, access, asked.name, surface, runtime.config.compact.codeMode.enabled),
  });
}

/**
 * Whether the POST acts on an upstream the caller may not reach because its scope lookup failed and
 * that upstream's failure mode is `closed`: the tools/call's target's upstream, or for a read, prompt or
 * completion the upstream it routes to. Lists are not: they leave such an upstream's items out
 * (policy/visibility.ts).
 */
async function closedTarget(
  runtime: GatewayRuntime,
  surface: SurfaceName,
  request: AuthenticatedRequest,
  access: Access,
  post: AdmittedPost,
  target: CallTarget | undefined,
): Promise<boolean> {
  const onBehalfOf = { credential: request.credential, requestId: request.requestId };
  let catalog: Catalog | undefined;
  for (const message of post.messages) {
    if (message.method === 'tools/call') {
      // A single call's target is resolved already; each call of a (2025-03-26) batch is resolved here.
      let tool = target?.resolution.tool;
      if (post.batch) {
        const asked = askedTool(surface, message);
        catalog ??= await runtime.upstreamSet.catalog(onBehalfOf).catch(() => undefined);
        tool = asked?.name && catalog ? resolveTool(catalog, access, asked.name, surface, runtime.config.compact.codeMode.enabled).tool : undefined;
      }
      if (tool && access.of(tool.upstream) === 'none') return true;
      continue;
    }
    if (message.method !== 'resources/read' && message.method !== 'prompts/get' && message.method !== 'completion/complete') continue;
    // Unknown names and unreachable catalogues are answered by dispatch, as for any caller.
    // What an upstream the caller may use serves is no step-up: only a name or URI just unreachable ones own.
    const route = await runtime.upstreamSet.route(message.method, (message.params ?? {}) as Record<string, unknown>, onBehalfOf).catch(() => undefined);
    if (route && access.of(route.upstream.client.name) === 'none') {
      const mayUse = (name: string) => access.of(name) !== 'none';
      const own = await runtime.upstreamSet.route(message.method, (message.params ?? {}) as Record<string, unknown>, onBehalfOf, mayUse).catch(() => undefined);
      // Prompts are routed by exposed name, whoever may use their upstream: the same unusable one.
      if (!own || access.of(own.upstream.client.name) === 'none') return true;
    }
  }
  return false;
}

/**
 * Step-up (MCP 2026-07-28 authorization "Scope Challenge Handling", RFC 6750 §3.1), only with
 * `oauth.external.insufficientScope`: a tools/call of a catalogue tool the OAuth token's scopes do not
 * reach gets 403 naming the scopes that would (any one of each list it misses: a floored tool has two). Off by default, because it tells the
 * caller that a hidden tool exists.
 */
function scopesNeeded(runtime: GatewayRuntime, request: AuthenticatedRequest, target: CallTarget): string[][] | undefined {
  const tool = target.resolution.tool;
  if (target.via !== 'direct' || !tool) return undefined;
  const granted = accessFor({ kind: 'scopes', scopes: request.credential.granted!.scopes }, runtime.config.upstreams);
  if (isVisible(tool, granted)) return undefined;
  // Both lists must be met (catalog.ts floorScopes): name each the token misses, so one step-up is enough (review).
  const access = granted.of(tool.upstream);
  const missing = [tool.requiredScopes, ...(tool.floorScopes ? [tool.floorScopes] : [])].filter((list) => !permits(access, list));
  return missing.map((list) => [...list]);
}

/**
 * SEP-2243 server validation of `Mcp-Param-*` headers (spec 2026-07-28 basic/transports/streamable-http
 * §Server Validation), which the SDK only runs for tools an McpServer registered itself: on a 2026-07-28
 * tools/call of a catalogue tool this surface advertises to the caller whose inputSchema declares
 * `x-mcp-header`, every argument it marks must come with its header, decoding to the same value. A tool
 * the surface does not list (found with search_tools) is not checked: its caller had no definition to
 * mirror from; a tool the caller may not see is not either (its answer would describe it). Checked here
 * because the spec wants 400, and a handler's error travels in-band (200). Returns why, or undefined.
 */
function paramHeaderRejection(target: CallTarget, args: unknown, header: (name: string) => string | undefined): string | undefined {
  const scan = target.via === 'direct' && target.resolution.advertised ? paramHeaders(target.resolution.tool.definition.inputSchema) : undefined;
  return scan?.valid && scan.headers.length ? paramHeaderMismatch(scan.headers, args, header) : undefined;
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
function answerPostedResponses(runtime: GatewayRuntime, request: AuthenticatedRequest, responses: readonly Record<string, unknown>[]): Admission {
  const refused = responses.filter((response) => !runtime.inputBridge.answer(request.credential.digest, response)).length;
  if (refused === 0) return { kind: 'accepted' };
  return {
    kind: 'refused',
    refusal: {
      error: 'invalid_request',
      message: `Invalid Request: ${refused === 1 ? 'the response answers' : `${refused} responses answer`} no request this gateway is waiting on for this credential (unknown id, already answered, or given up)`,
      outcome: 'invalid_request',
      reason: 'unknown_response',
    },
  };
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
 * The tool call a message asks for, as the audit trail names it: the tool a tools/call names, or on
 * `/mcp/compact` a call_tool's own target (`via: call_tool`); undefined for any other message. A run_code
 * request is `direct` here: its inner calls are decided, one by one, in the script's run.
 */
export function askedTool(surface: SurfaceName, message: Record<string, unknown> | undefined): (AskedTool & Pick<CallTarget, 'via'>) | undefined {
  if (message?.method !== 'tools/call') return undefined;
  const params = isPlainObject(message.params) ? message.params : {};
  const name = typeof params.name === 'string' ? params.name : '';
  const inner = surface === 'compact' && name === CALL_TOOL && isPlainObject(params.arguments) ? params.arguments : undefined;
  if (inner) return { via: 'call_tool', name: typeof inner.name === 'string' ? inner.name : '', arguments: inner.arguments ?? {} };
  return { via: 'direct', name, arguments: params.arguments ?? {} };
}

/** A refused request as the edge reports it: what was refused, how, and in which answer. */
export interface EdgeRefusal {
  readonly outcome: AuditOutcome;
  readonly reason: string;
  readonly budget?: string;
  /** The HTTP status of the answer. */
  readonly status: number;
  /** `performance.now()` when the request reached the endpoint. */
  readonly started: number;
}

/**
 * Reports a request the gateway refused before dispatch, once (obs/outcomes.ts): one event per message of
 * its body (a tools/call named by the tool it asks for, `era` the request's), or, when no message was
 * read (a refused credential, an unreadable body) or the batch is longer than any server serves
 * (wire/revisions.ts `MAX_BATCH_MESSAGES`), one for the request. The audit trail, the metrics
 * and the span subscribe.
 */
export function reportRefusal(
  runtime: Pick<GatewayRuntime, 'outcomes'>,
  surface: SurfaceName,
  requester: Requester,
  messages: readonly Record<string, unknown>[],
  era: Era | undefined,
  refusal: EdgeRefusal,
  target?: CallTarget,
): void {
  const base = {
    kind: 'refusal' as const,
    endpoint: surface,
    requester,
    outcome: refusal.outcome,
    reason: refusal.reason,
    ...(refusal.budget ? { budget: refusal.budget } : {}),
    status: refusal.status,
    durationMs: performance.now() - refusal.started,
  };
  // Posted JSON-RPC responses are no requests: the refusal is the exchange's.
  const requests = messages.filter((m) => m.method !== undefined || !('result' in m || 'error' in m));
  // A batch no server would serve (longer than the SDK's cap; limits.arrayLength allows 10,000) is one refused
  // request, not one event per message: one HTTP request must not write thousands of audit lines.
  if (requests.length === 0 || messages.length > MAX_BATCH_MESSAGES) return void runtime.outcomes.emit(base);
  for (const message of requests) {
    const asked = askedTool(surface, message);
    const tool = asked && target && target.name === asked.name && target.via === asked.via ? target.resolution.tool : undefined;
    runtime.outcomes.emit({
      ...base,
      requester: requester.client ? requester : { ...requester, ...clientOf(message) },
      message: {
        era: era ?? messageEra(message),
        method: methodLabel(message.method),
        ...(asked ? { tool: { ...asked, ...(tool ? { catalogTool: { upstream: tool.upstream, readOnly: tool.readOnly } } : {}) } } : {}),
      },
    });
  }
}

/** The caller's 2026-07-28 `clientInfo` a message's envelope carries, as a requester's `client`. */
export function clientOf(message: Record<string, unknown>): Pick<Requester, 'client'> {
  const meta = isPlainObject(message.params) && isPlainObject(message.params._meta) ? message.params._meta : undefined;
  const info = meta?.[CLIENT_INFO_META_KEY];
  if (!isPlainObject(info)) return {};
  return { client: { name: typeof info.name === 'string' ? info.name : undefined, version: typeof info.version === 'string' ? info.version : undefined } };
}

/** A message's era when the request's is not known (it was refused on its revision): as the SDK classifies it, a `_meta` protocol-version claim makes it modern. */
function messageEra(message: Record<string, unknown>): Era {
  return revisionClaim(message) !== undefined ? 'modern' : 'legacy';
}

/** The AuthInfo the SDK path hands the factory, carrying the admitted call target for the arm to reuse. */

export function withCallTarget(authInfo: AuthInfo, target: CallTarget | undefined): AuthInfo {
  return target ? withFields(authInfo, { extra: withFields(authInfo.extra ?? {}, { target }) }) : authInfo;
}

/** The call target an AuthInfo from {@link withCallTarget} carries. */
export function callTargetOf(authInfo: AuthInfo | undefined): CallTarget | undefined {
  return authInfo?.extra?.target as CallTarget | undefined;
}
