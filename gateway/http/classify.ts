import type { IncomingHttpHeaders } from 'node:http';
import { echoableId, isEchoableId, isPlainObject } from '../wire/jsonrpc.ts';
import { acceptRejection, plainRequest, revisionClaim, routeOf, standardHeaderRejection, type LadderRejection, type PlainRequest } from '../wire/requests.ts';
import { FIRST_REVISION_WITHOUT_BATCHES, REVISION_WITH_BATCHES, SERVED_REVISIONS, servedEra, type Era } from '../wire/revisions.ts';
import { jsonPointer } from '../checks/json-pointer.ts';
import { loneSurrogateAt, MCP_NAME_SOURCE } from '../wire/param-value.ts';
import { requestedResourceSubscriptions } from '../upstream/resource-subscriptions.ts';
import { breachIsInParams, breachIsInToolArguments, findLimitBreach, JSON_DEPTH_CEILING, type InputLimits, type LimitBreach } from '../checks/input-limits.ts';

/** A 2025-era `notifications/cancelled` in the body: the forwarded call it names (inflight-calls.ts). */
export interface Cancellation {
  readonly requestId: string | number;
  readonly reason?: string;
}

/** What the SEP-2243 `Mcp-Param-*` check needs of a single 2026-07-28 tools/call (checks/mcp-param-headers.ts). */
export interface ParamHeaderCheck {
  /** The tool name as called (an exposed name). */
  readonly name: string;
  readonly arguments: unknown;
}

/**
 * One POST body as every edge rule and the fast path read it, computed once ({@link classifyPost}).
 * `messages` are the JSON-RPC messages that are objects (a batch's other entries are the SDK's to
 * refuse); methods and ids are those messages' own.
 */
export interface PostDescription {
  /** The parsed body, handed on to the SDK unchanged. */
  readonly body: unknown;
  /**
   * Why the body cannot be a JSON-RPC request at all (a scalar, null, an empty array, a single message
   * with a malformed member, named by its JSON Pointer): JSON-RPC 2.0 §5.1 Invalid Request (-32600),
   * never a parse error, since it is valid JSON.
   */
  readonly notARequest?: string;
  /**
   * The first input limit the body breaks (checks/input-limits.ts), and whether inside a single request's
   * params (-32602) or not (-32600). Inside a tools/call's `arguments` a breach is the call's to answer
   * (an isError invalid-arguments result), so it is not reported here; the rest of the request still is.
   */
  readonly limitBreach?: { readonly breach: LimitBreach; readonly inParams: boolean };
  /**
   * The first name, URI or task id the 2026-07-28 wire mirrors in `Mcp-Name` (wire/param-value.ts
   * `MCP_NAME_SOURCE`) that holds a lone UTF-16 surrogate, any era: where (from the message, or its
   * index in a batch) and at which index of the string. It has no UTF-8 form, so no header can carry it.
   */
  readonly illFormedName?: { readonly path: readonly (string | number)[]; readonly at: number };
  readonly batch: boolean;
  readonly messages: readonly Record<string, unknown>[];
  readonly methods: readonly unknown[];
  /** The id of a single request (the one an edge refusal echoes), else null. */
  readonly id: string | number | null;
  /** The `MCP-Protocol-Version` header ('' when absent or empty; an empty one is refused as `unsupportedRevision`). */
  readonly revision: string;
  /**
   * The era the request is served in: the fast path's reading of a plain request (which the SDK routes
   * alike: tests/in-process/wire-oracle.test.ts), else the SDK's classifier's; undefined when refused.
   */
  readonly era?: Era;
  /**
   * The SDK entry's refusal of the request before any dispatch (wire/requests.ts `routeOf`: the JSON-RPC
   * shape, a header/body disagreement, an invalid or missing envelope), answered by the edge as the SDK
   * would answer it.
   */
  readonly ladderRejection?: LadderRejection;
  /**
   * A 2026-07-28 request whose SEP-2243 standard headers disagree with its body (-32020: wire/requests.ts
   * `standardHeaderRejection`), or a request of either era whose Accept admits no representation it can
   * be answered in (406: `acceptRejection`).
   */
  readonly headerRejection?: LadderRejection;
  /**
   * The revision the request asks for when the gateway serves no such revision: a single message's
   * `_meta` protocolVersion claim, else the header (2026-07-28 basic/versioning: UnsupportedProtocolVersionError,
   * -32022, listing the supported ones; a 2025-era server MUST answer 400 too, 2025-11-25 basic/transports).
   */
  readonly unsupportedRevision?: string;
  /** A batch under a revision without batching (JSON-RPC batches were removed in 2025-06-18). */
  readonly batchRefused: boolean;
  /**
   * The index of the first `initialize` request in a batch the gateway would otherwise serve (2025-03-26,
   * or no `MCP-Protocol-Version`): 2025-03-26 basic/lifecycle §Initialization, "The initialize request
   * MUST NOT be part of a JSON-RPC batch".
   */
  readonly batchedInitialize?: number;
  readonly cancellations: readonly Cancellation[];
  /** The tool a single tools/call names (any revision): the OAuth step-up rule reads it (mcp-endpoint.ts). */
  readonly toolCall?: { readonly name: string };
  /** A single tools/call claiming a served 2026-07-28 revision in `_meta`: its headers are checked. */
  readonly paramHeaderCheck?: ParamHeaderCheck;
  /** The URIs a single 2026-07-28 `subscriptions/listen` asks updates for (`resourceSubscriptions`), held while its stream is open. */
  readonly resourceSubscriptions: readonly string[];
  /** The request when the fast path may answer it exactly as the SDK would (fast-path.ts). */
  readonly plain?: PlainRequest;
  /**
   * Set when every message of the body is a JSON-RPC response (`jsonrpc`, `id`, `result` or `error`, no
   * `method`): a 2025-era client answering requests the gateway wrote on its calls' streams
   * (upstream/input-bridge.ts); the edge answers such a POST itself.
   */
  readonly responses?: readonly Record<string, unknown>[];
  /**
   * The JSON-RPC responses of a 2025-03-26 batch that also holds requests or notifications: answers to
   * requests the gateway wrote, matched as a body of responses alone is (admission), then the rest served.
   */
  readonly batchedResponses?: readonly Record<string, unknown>[];
}

/**
 * Classifies a parsed POST body once, with its headers: whether it can be a request at all, the input
 * limit it breaks (`limits`), its era and the SDK's refusals (the revision ladder: the SDK's own
 * classifier for anything the fast path does not take), batching, cancellations, the `Mcp-Param-*`
 * check inputs, the resource subscriptions a listen asks for, fast-path eligibility.
 */
export function classifyPost(body: unknown, headers: IncomingHttpHeaders, limits: InputLimits & { nameLength: number }): PostDescription {
  const batch = Array.isArray(body);
  const notARequest =
    body === null || typeof body !== 'object' ? `a JSON ${body === null ? 'null' : typeof body}` : batch && body.length === 0 ? 'an empty array' : undefined;
  const list: unknown[] = batch ? body : [body];
  const messages = list.filter(isPlainObject);
  const breach = notARequest ? undefined : (edgeLimitBreach(body as object, limits) ?? nameBreach(list, batch, limits.nameLength));
  const versionHeader = headers['mcp-protocol-version'];
  // Present but empty (`MCP-Protocol-Version:`) names no revision the gateway serves: refused as any unsupported value, not read as absent.
  const sentVersion = typeof versionHeader === 'string' ? versionHeader : undefined;
  const revision = sentVersion ?? '';
  const single = !batch ? messages[0] : undefined;
  const rawId = single?.id;
  // No header: a 2025-03-26 client (the header came in 2025-06-18), which may batch. A served revision
  // before 2025-03-26 had no batches either; an unknown one is the version check's to refuse.
  const batchRefused =
    batch && revision !== '' && (revision >= FIRST_REVISION_WITHOUT_BATCHES || (servedEra(revision) !== undefined && revision < REVISION_WITH_BATCHES));
  const invalid =
    notARequest ?? (single ? malformedMessage(single) : batch ? (batchRefused ? undefined : (malformedElement(list) ?? sharedRequestId(list))) : undefined);
  const requested = requestedRevision(single, sentVersion);
  const batchedInitialize = batch && !batchRefused ? list.findIndex((m) => isPlainObject(m) && m.method === 'initialize' && 'id' in m) : -1;
  const illFormed = notARequest ? undefined : illFormedName(list, batch);
  const plain = !batch ? plainRequest(body, headers) : undefined;
  // A plain request is routed as the fast path reads it; anything else as the SDK's entry does.
  const route = plain ? { era: plain.era } : invalid === undefined ? routeOf(body, headers) : undefined;
  const served = route && 'era' in route ? route : undefined;
  const headerRejection = served
    ? ((served.era === 'modern' && 'request' in served && served.request ? standardHeaderRejection(headers, served.request) : undefined) ??
      acceptRejection(headers, messages, served.era))
    : undefined;
  return {
    body,
    ...(invalid ? { notARequest: invalid } : {}),
    ...(breach ? { limitBreach: { breach, inParams: !batch && breachIsInParams(breach) } } : {}),
    ...(illFormed ? { illFormedName: illFormed } : {}),
    batch,
    messages,
    methods: messages.map((m) => m.method),
    id: echoableId(rawId, limits.stringLength),
    revision,
    ...(served ? { era: served.era } : {}),
    ...(route && 'refused' in route ? { ladderRejection: route.refused } : {}),
    ...(headerRejection ? { headerRejection } : {}),
    ...(requested !== undefined && !SERVED_REVISIONS.includes(requested) ? { unsupportedRevision: requested } : {}),
    batchRefused,
    ...(batchedInitialize >= 0 ? { batchedInitialize } : {}),
    // 2025-era only: on 2026-07-28 a notifications/cancelled is accepted and has no effect (its calls end with their
    // stream), and it must not reach a 2025-era call of the same id (protocol try-out: it cancelled one).
    cancellations: served?.era === 'modern' ? [] : messages.flatMap(cancellationOf),
    toolCall:
      single?.method === 'tools/call' && typeof (single.params as { name?: unknown } | undefined)?.name === 'string'
        ? { name: (single.params as { name: string }).name }
        : undefined,
    paramHeaderCheck: single ? paramHeaderCheckOf(single) : undefined,
    resourceSubscriptions: single && isModernClaim(single) ? requestedResourceSubscriptions(single) : [],
    plain,
    ...(messages.length > 0 && messages.length === list.length && messages.every(isResponse)
      ? { responses: messages }
      : batch && messages.some(isResponse)
        ? { batchedResponses: messages.filter(isResponse) }
        : {}),
  };
}

/** The members a JSON-RPC 2.0 request or notification has (§4); the SDK refuses a message with any other. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The first member of a single request or notification that makes it no JSON-RPC message (JSON-RPC 2.0
 * §4: `jsonrpc` "2.0", `method` a string, `params` a structured value, no other member; MCP basic
 * §Requests: the id a string or an integer, never null, and `params` an object, its `_meta` too), as
 * `a message whose <pointer> …`; undefined for a response, or when these members are well formed (the
 * SDK checks the rest).
 */
function malformedMessage(message: Record<string, unknown>): string | undefined {
  const why = malformedMember(message, []);
  return why && `a message whose ${why}`;
}

/** The first element of a batch that is no JSON-RPC message, as `a batch whose /<index>… …` ({@link malformedMessage}). */
function malformedElement(list: readonly unknown[]): string | undefined {
  for (const [index, element] of list.entries()) {
    const why = isPlainObject(element) ? malformedMember(element, [index]) : `${jsonPointer([index])} is not an object`;
    if (why) return `a batch whose ${why}`;
  }
  return undefined;
}

const NOT_AN_ID = `is not a string or an integer of at most ${Number.MAX_SAFE_INTEGER} in magnitude (a larger one cannot be echoed exactly: send it as a string)`;

function malformedMember(message: Record<string, unknown>, at: readonly number[]): string | undefined {
  if (isResponse(message)) return undefined;
  const why = (member: string[], rule: string) => `${jsonPointer([...at, ...member])} ${rule}`;
  if (message.jsonrpc !== '2.0') return why(['jsonrpc'], 'is not "2.0"');
  if (!('method' in message)) {
    // A response without the id it answers was told "no result or error" though it had one (wire try-out).
    if ('result' in message || 'error' in message) return why(['id'], 'is missing (a response carries the id of the request it answers)');
    return why(['method'], 'is missing (and it is no response: no result or error)');
  }
  if (typeof message.method !== 'string') return why(['method'], 'is not a string');
  if ('id' in message && !isEchoableId(message.id)) return why(['id'], NOT_AN_ID);
  if ('params' in message) {
    if (!isPlainObject(message.params)) return why(['params'], 'is not an object');
    const meta = message.params._meta;
    if (meta !== undefined && !isPlainObject(meta)) return why(['params', '_meta'], 'is not an object');
    // ProgressToken is a string or an integer (the SDK's schema; JSON-RPC ids alike): anything else could not be echoed on progress.
    if (meta !== undefined && 'progressToken' in meta && !isEchoableId(meta.progressToken)) return why(['params', '_meta', 'progressToken'], NOT_AN_ID);
  }
  const extra = Object.keys(message).find((key) => !REQUEST_MEMBERS.has(key));
  if (extra !== undefined) return why([extra], 'is no member of a JSON-RPC request (jsonrpc, id, method, params)');
  return undefined;
}

/**
 * Two requests of one batch under one id, named by their JSON Pointers: the answers could not be told
 * apart (JSON-RPC 2.0 §6 matches responses by id), and MCP forbids reusing an id (basic §Requests), so
 * the batch is refused rather than one of them going unanswered.
 */
function sharedRequestId(list: readonly unknown[]): string | undefined {
  const seen = new Map<string, number>();
  for (const [index, message] of list.entries()) {
    if (!isPlainObject(message)) continue;
    const { id, method } = message;
    if (typeof method !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) continue;
    const key = `${typeof id}:${id}`;
    const first = seen.get(key);
    if (first !== undefined) return `a batch whose requests /${first}/id and /${index}/id are both ${JSON.stringify(id)}`;
    seen.set(key, index);
  }
  return undefined;
}

/**
 * The revision a request asks for: a single message's `_meta` protocolVersion claim when it is a string
 * (undefined when the header disagrees: -32020, the SDK's to answer), else the header, an empty one
 * included (an invalid value: 2025-11-25 basic/transports §Protocol Version Header, 400); undefined when
 * neither names one (no header at all: the SDK then assumes 2025-03-26, same section).
 */
function requestedRevision(single: Record<string, unknown> | undefined, header: string | undefined): string | undefined {
  const claim = revisionClaim(single);
  // A header disagreeing with the claim is a HeaderMismatch (-32020) first (streamable-http §Protocol Version Header).
  if (claim !== undefined) return header === undefined || header === claim ? claim : undefined;
  return header;
}

/** A JSON-RPC response object (JSON-RPC 2.0 §5): its shape is checked where it is matched (InputBridge.answer). */
function isResponse(message: Record<string, unknown>): boolean {
  return message.jsonrpc === '2.0' && message.method === undefined && 'id' in message && ('result' in message || 'error' in message);
}

/**
 * The body's first breach the edge refuses. Tool arguments over a limit are the call's to refuse (an
 * isError result the model can act on), unless they nest deeper than {@link JSON_DEPTH_CEILING}, which
 * no later step could handle: then the edge refuses them, naming the configured limit they break.
 */
function edgeLimitBreach(body: object, limits: InputLimits): LimitBreach | undefined {
  const breach = findLimitBreach(body, limits);
  if (!breach || !breachIsInToolArguments(body, breach)) return breach;
  const call = body as { params: Record<string, unknown> };
  if (findLimitBreach(call.params.arguments, { jsonDepth: JSON_DEPTH_CEILING - 2, stringLength: Infinity, arrayLength: Infinity, objectMembers: Infinity }))
    return breach;
  return findLimitBreach({ ...call, params: { ...call.params, arguments: {} } }, limits);
}

/**
 * Where each method names a prompt or resource the gateway forwards without finding it in a list of its own,
 * and a tool, which `policy.hiddenToolCalls: forward` sends upstream unfound (try-out: a 100 KB name was
 * forwarded, in the hop's Mcp-Name header too, and echoed back whole by the upstream's refusal).
 */
const NAMED_PARAMS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'tools/call': [['name']],
  'prompts/get': [['name']],
  'resources/read': [['uri']],
  'resources/subscribe': [['uri']],
  'resources/unsubscribe': [['uri']],
  'completion/complete': [
    ['ref', 'name'],
    ['ref', 'uri'],
  ],
};

/**
 * The first tool or prompt name or resource URI of the body longer than `limits.nameLength`: the gateway refuses
 * it rather than forward it (a 500 KB name reached the upstream, in the hop's Mcp-Name header too, and
 * came back as its HTTP 431). The path starts at the message (`params.uri`), or at its index in a batch.
 */
function nameBreach(list: readonly unknown[], batch: boolean, max: number): LimitBreach | undefined {
  for (const [i, message] of list.entries()) {
    if (!isPlainObject(message) || typeof message.method !== 'string') continue;
    // Own keys only: a method named `toString` or `constructor` would read Object.prototype's.
    for (const path of Object.hasOwn(NAMED_PARAMS, message.method) ? NAMED_PARAMS[message.method]! : []) {
      let value: unknown = message.params;
      for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
      if (typeof value === 'string' && value.length > max) {
        return { limit: 'nameLength', max, path: [...(batch ? [i] : []), 'params', ...path] };
      }
    }
  }
  return undefined;
}

/**
 * The first request of the body whose `Mcp-Name` source (a tools/call's or prompts/get's name, a
 * resources/read's uri, a task method's taskId) holds a lone surrogate ({@link PostDescription.illFormedName}).
 */
function illFormedName(list: readonly unknown[], batch: boolean): PostDescription['illFormedName'] {
  for (const [i, message] of list.entries()) {
    if (!isPlainObject(message) || typeof message.method !== 'string' || !isPlainObject(message.params)) continue;
    const field = Object.hasOwn(MCP_NAME_SOURCE, message.method) ? MCP_NAME_SOURCE[message.method]! : undefined;
    const value = field === undefined ? undefined : message.params[field];
    const at = typeof value === 'string' ? loneSurrogateAt(value) : -1;
    if (at >= 0) return { path: [...(batch ? [i] : []), 'params', field!], at };
  }
  return undefined;
}

function isModernClaim(message: Record<string, unknown>): boolean {
  const claim = revisionClaim(message);
  return claim !== undefined && servedEra(claim) === 'modern';
}

function cancellationOf(message: Record<string, unknown>): Cancellation[] {
  if (message.method !== 'notifications/cancelled' || 'id' in message || isModernClaim(message)) return [];
  const { requestId, reason } = (message.params ?? {}) as { requestId?: unknown; reason?: unknown };
  if (typeof requestId !== 'string' && typeof requestId !== 'number') return [];
  return [{ requestId, ...(typeof reason === 'string' ? { reason } : {}) }];
}

function paramHeaderCheckOf(message: Record<string, unknown>): ParamHeaderCheck | undefined {
  if (message.method !== 'tools/call' || typeof message.params !== 'object' || message.params === null) return undefined;
  const params = message.params as { name?: unknown; arguments?: unknown };
  // Only a served revision: the other claims are refused (-32022), and 2025 has no such headers.
  if (!isModernClaim(message) || typeof params.name !== 'string') return undefined;
  return { name: params.name, arguments: params.arguments };
}
