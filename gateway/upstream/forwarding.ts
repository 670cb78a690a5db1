import { CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY, MissingRequiredClientCapabilityError, type CallToolResult } from '@modelcontextprotocol/server';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { isPlainObject } from '../wire/jsonrpc.ts';
import { INPUT_METHODS } from './http-hop.ts';
import { GatewayError, RelayedUpstreamError, failureOf, markDelivery, upstreamFailureError } from '../errors.ts';
import type { CallSignal } from '../wire/cancellation.ts';
import type { RequestView } from '../wire/requests.ts';
import type { OnBehalfOf } from './forward-scope.ts';
import type { InflightCalls } from './inflight-calls.ts';
import { paramHeaders, paramHeaderValues } from '../checks/mcp-param-headers.ts';
import { ARGUMENT_ERRORS_META_KEY, isArgumentError } from '../checks/input-check.ts';
import type { UpstreamClient } from './client.ts';
import { TASKS_EXTENSION, type ForwardMethod, type ForwardOptions, type UpstreamInfo } from './types.ts';
import type { InputBridge, StreamWriter, UpstreamInputRequest } from './input-bridge.ts';
import { translateUpstreamError, type InputRequired, type TranslationContext } from '../wire/error-translation.ts';
import { upstreamSpan } from '../obs/tracing.ts';
import { withFields } from '../wire/objects.ts';

/** Cache hints are kept for modern callers only. */
const CACHE_HINT_FIELDS = ['ttlMs', 'cacheScope'];
const HOP_META_PREFIX = 'io.modelcontextprotocol/';
/** The prefix of the gateway's own `_meta` keys (errors.ts ERROR_META_KEY, tool-decision.ts OUTCOME_META_KEY, ...). */
const GATEWAY_META_PREFIX = 'ai.cpz.gateway/';
/**
 * `io.modelcontextprotocol/*` result `_meta` keys that describe the answer rather than the hop, so they
 * are relayed (2025-11-25 basic/utilities/tasks: the related task of a tasks/result, the immediate
 * answer a host may give the model while a task runs).
 */
const RELAYED_META_KEYS: ReadonlySet<string> = new Set(['io.modelcontextprotocol/related-task', 'io.modelcontextprotocol/model-immediate-response']);
/** The methods whose 2026-07-28 result may be `input_required` (spec basic/patterns/mrtr). */
const INPUT_REQUIRED_METHODS: ReadonlySet<ForwardMethod> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * What forwarding needs of a dispatched request, and nothing more (a ForwardingContext is one): the
 * caller's request (its id, signal, `_meta`, envelope, notification channels), its era and on whose
 * behalf it is sent, and the registry of 2025-era calls in flight (cancellation).
 */
export interface ForwardingContext {
  readonly request: RequestView;
  readonly caller: { readonly era: 'modern' | 'legacy'; readonly onBehalfOf: OnBehalfOf & { readonly credential?: { readonly digest: string } } };
  /** `closingConnections`: the gateway's shutdown is closing every connection (runtime-state.ts). */
  readonly runtime: { readonly inflightCalls: InflightCalls; readonly inputBridge: InputBridge; readonly closingConnections?: boolean };
  /**
   * Writes a server-to-client request on the caller's own response stream: a 2025-era caller whose
   * answer is an SSE stream it reads (2025-11-25 basic/transports). Absent otherwise (2026-07-28, or an
   * answer collapsed to JSON): an upstream's question is then refused to it (-32601).
   */
  readonly callerStream?: StreamWriter;
}

/**
 * Forwards one per-request method to `client` as the caller's own request would reach it:
 * - `_meta`: the caller's custom keys and trace context; toward a 2026-07-28 upstream also the envelope
 *   keys that describe the CALLER rather than this hop (its `clientCapabilities`, its `logLevel`), so the
 *   upstream asks only for input the caller can give and logs at the caller's level ({@link forwardedMeta});
 * - a retried multi-round-trip request's `inputResponses` and `requestState`, byte for byte;
 * - progress under the caller's token, log messages through the caller's log channel, cancellation
 *   (the caller closing its stream, or a 2025-era `notifications/cancelled`: inflight-calls.ts);
 * - for a tools/call to a 2026-07-28 upstream, the `Mcp-Param-*` headers the tool's `x-mcp-header`
 *   declarations ask for (SEP-2243: the gateway is that upstream's client, and clients MUST mirror them).
 * - trace context: with tracing on, the request runs in a CLIENT span whose W3C context goes in `_meta`
 *   (`traceparent`, `tracestate`) and, through the transport's fetch, in the HTTP headers (obs/tracing.ts);
 *   with tracing off the caller's own `_meta` trace keys pass unchanged.
 * An `input_required` answer comes back as it is, for the caller to fulfil and retry. A 2025-era
 * upstream's own requests during the call are asked of the caller: in band (2026-07-28, {@link bridged})
 * or on the caller's stream (2025, {@link streamed}); both in input-bridge.ts.
 * @throws whatever the upstream client threw: {@link forwardError} turns it into the caller's error,
 *   the tools/call path turns a failure to reach the upstream into an isError result instead.
 */
export async function forward(
  d: ForwardingContext,
  client: UpstreamClient,
  method: ForwardMethod,
  params: Record<string, unknown>,
  tool?: { inputSchema?: unknown },
  extra: Pick<ForwardOptions, 'ontaskstatus'> = {},
): Promise<Record<string, unknown>> {
  const { request } = d;
  const info = await client.describe(d.caller.onBehalfOf);
  const { _meta: _ignored, inputResponses: responses, requestState: _state, ...fields } = params;
  // tasks/update carries inputResponses as its own param (SEP-2663), not as a retry's.
  const rest = method === 'tasks/update' ? { ...fields, inputResponses: responses ?? request.inputResponses ?? {} } : fields;
  const meta = forwardedMeta(request, d.caller.era, info);
  const mrtr = INPUT_REQUIRED_METHODS.has(method) ? retryFields(request) : {};
  const scan = tool && info.era === 'modern' ? paramHeaders(tool.inputSchema) : undefined;
  const headers = scan?.valid ? paramHeaderValues(scan.headers, params.arguments) : {};
  // Only the 2025 wire cancels with a notification in a POST of its own; 2026-07-28 closes the stream.
  const tracked =
    d.caller.era === 'legacy'
      ? d.runtime.inflightCalls.track(d.caller.onBehalfOf.credential?.digest ?? 'anonymous', request.id, request.cancellation ?? request.signal, request.abort)
      : undefined;
  try {
    // Built field by field: spreads of conditional objects here took V8's slow property definition on every call.
    const options = forwardOptions(request, d.caller.onBehalfOf, tracked?.signal);
    options.allowInputRequired = INPUT_REQUIRED_METHODS.has(method);
    // SEP-2663: only a caller that declared the tasks extension may be handed a task (its capabilities went upstream).
    if (method === 'tools/call' && info.era === 'modern' && callerDeclaresTasks(request)) options.allowTaskResult = true;
    if (Object.keys(headers).length) options.headers = headers;
    if (extra.ontaskstatus !== undefined) options.ontaskstatus = extra.ontaskstatus;
    const target = method === 'tools/call' || method === 'prompts/get' ? (typeof params.name === 'string' ? params.name : undefined) : undefined;
    const call = { upstream: client.name, url: client.config.url, method, target, requestId: request.id };
    const send = (more: Partial<ForwardOptions> | undefined, mrtrFields: Record<string, unknown>) =>
      upstreamSpan(call, (trace) => {
        // With tracing on, the upstream's parent is this hop's span: its context replaces the caller's in `_meta` (SEP-414).
        const sent = Object.keys(trace).length ? { ...meta, ...trace } : meta;
        const sentParams: Record<string, unknown> = withFields(rest, mrtrFields);
        if (sent) sentParams._meta = sent;
        return client.forward(method, sentParams, more ? { ...options, ...more } : options);
      }).catch((error: unknown) => {
        // The SDK reports an aborted request as a timeout; it was the caller (or the gateway's shutdown) that gave up.
        const signal = more?.signal ?? options.signal;
        // The gateway's shutdown past shutdown.graceMs closes the upstream connections too, and that failure can
        // come before the caller's connection is seen closed: the shutdown gave up on it all the same (try-out).
        const shutDown = d.runtime.closingConnections === true;
        if (!signal?.aborted && !shutDown) throw error;
        const why = signal?.aborted
          ? signal.reason instanceof Error
            ? signal.reason.message
            : 'the caller cancelled it'
          : 'the gateway shut down before it was answered';
        // Whether it had been sent is kept: a write sent before the caller left may have run (tool-call.ts outcomeUnknown).
        const delivery = failureOf(error, client.name).delivery;
        const cancelled = new GatewayError('cancelled', `the request was cancelled: ${why}`, { upstream: client.name });
        throw delivery === undefined ? cancelled : markDelivery(cancelled, delivery);
      });
    if (bridged(d, info, method))
      return bridgedForward(d, bridgeSubject(client.name, method, params), (ask, signal) => send({ signal, oninputrequest: ask }, {}));
    const relay = streamed(d, info, method)
      ? d.runtime.inputBridge.relayOnStream(d.caller.onBehalfOf.credential?.digest ?? 'anonymous', d.callerStream!, client.config.timeoutMs)
      : undefined;
    try {
      const result = await send(relay ? { oninputrequest: relay.ask } : undefined, mrtr);
      if (isInputRequired(result)) refuseUndeclaredInput(result, d.caller.era === 'modern' ? callerCapabilities(request) : undefined);
      return relayedResult(result, d.caller.era);
    } finally {
      relay?.close('the call is over');
    }
  } finally {
    tracked?.release();
  }
}

/**
 * Whether a forward goes through the input bridge (upstream/input-bridge.ts): a 2026-07-28 caller, a
 * 2025-era upstream that can have its own requests answered (sessionful HTTP: a stateless one would
 * receive the answer on a fresh instance; over stdio a request cannot be tied to its call), and a method
 * whose result may ask for input.
 */
function bridged(d: ForwardingContext, info: UpstreamInfo, method: ForwardMethod): boolean {
  return d.caller.era === 'modern' && asksCallers(info, method);
}

/**
 * Whether a forward relays the upstream's questions on the caller's own stream (input-bridge.ts
 * relayOnStream): a 2025-era caller reading an SSE answer ({@link ForwardingContext.callerStream}), and
 * the same upstreams and methods as {@link bridged}.
 */
function streamed(d: ForwardingContext, info: UpstreamInfo, method: ForwardMethod): boolean {
  return d.caller.era === 'legacy' && d.callerStream !== undefined && asksCallers(info, method);
}

/** A 2025-era upstream whose own requests during `method` can be answered: sessionful HTTP (see {@link bridged}). */
function asksCallers(info: UpstreamInfo, method: ForwardMethod): boolean {
  return info.era === 'legacy' && info.sessionful && INPUT_REQUIRED_METHODS.has(method);
}

/**
 * A forward whose 2025-era upstream may ask its client for input mid-call: the upstream's requests the
 * caller's capabilities cover become an InputRequiredResult, and a retry carrying the bridge's
 * requestState resumes the same waiting call with the caller's `inputResponses` (input-bridge.ts); the
 * rest are refused to the upstream, never asked of a caller who did not declare them, and if the upstream then
 * fails the call (a JSON-RPC error it answers, or an isError result) the caller is answered -32021 MissingRequiredClientCapabilityError
 * naming what it lacks (2026-07-28 basic/index §Error Codes: a request that needs an undeclared client
 * capability; protocol try-out: it read as the upstream's internal error). A call that succeeds without the
 * answer is relayed as it is.
 */
async function bridgedForward(
  d: ForwardingContext,
  subject: string,
  send: (ask: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>, signal: AbortSignal) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const { request } = d;
  const owner = d.caller.onBehalfOf.credential?.digest ?? 'anonymous';
  const bridge = d.runtime.inputBridge;
  const capabilities = callerCapabilities(request);
  const state = request.requestState();
  let lacking: Record<string, unknown> | undefined;
  const outcome =
    typeof state === 'string'
      ? bridge.resume(owner, subject, state, request.inputResponses as Record<string, unknown> | undefined, request.signal)
      : bridge.begin(
          owner,
          subject,
          (ask, signal) =>
            send((asked) => {
              const missing = missingCapabilities(capabilities, asked);
              if (missing === undefined) return ask(asked);
              lacking = withCapabilities(lacking, missing);
              return Promise.reject(new Error(`the caller did not declare ${asked.method}`));
            }, signal),
          request.signal,
        );
  if (!outcome)
    throw new GatewayError(
      'invalid_arguments',
      'Invalid params: requestState names no call waiting for input (it expired, or was not issued to this caller for this name); send the request again without it',
    );
  // Only the upstream's own failure of the call (a JSON-RPC error it answered) is read as the refusal's: a timeout, a lost
  // connection or a cancellation keeps its answer (a write may have run: review), and so its delivery mark.
  const settled = await outcome.catch((error: unknown) => {
    throw lacking && error instanceof RelayedUpstreamError ? new MissingRequiredClientCapabilityError({ requiredCapabilities: lacking }) : error;
  });
  if (settled.kind === 'input_required') return settled.result as unknown as Record<string, unknown>;
  const value = settled.value as Record<string, unknown>;
  if (lacking && value.isError === true) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: lacking });
  return relayedResult(value, d.caller.era);
}

/**
 * What a bridged call calls, as the input bridge binds it: the upstream, the method and the upstream-side name
 * (a tool's or prompt's `name`, a resource's `uri`), whatever the caller named (`call_tool`'s target resolves
 * to its tool's upstream name here, so a state resumed under another tool, directly or through `call_tool`,
 * names another subject and is refused).
 */
function bridgeSubject(upstream: string, method: ForwardMethod, params: Record<string, unknown>): string {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : '';
  return JSON.stringify([upstream, method, name]);
}

/** The 2026-07-28 caller's `clientCapabilities` from its request's envelope (`{}` when it declares none). */
export function callerCapabilities(request: Pick<RequestView, 'envelope'>): Record<string, unknown> {
  return ((request.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
}

/**
 * A 2026-07-28 upstream's InputRequiredResult checked before the caller sees it: the caller speaks 2026-07-28
 * (`capabilities` given; a 2025-era caller cannot answer in band), and every input request is an object naming
 * a method a client answers (sampling/createMessage, elicitation/create, roots/list) that the caller's
 * clientCapabilities cover. The upstream was told those capabilities (forwardedMeta), so asking beyond them is
 * the upstream's fault, and relaying it put a question (a password form, a sampling prompt) before a caller
 * that never offered to answer one (adversarial-upstream try-out; spec 2026-07-28 basic/patterns/mrtr).
 * The refusal is marked `not_sent`: the upstream stopped to ask, and no retry will ever reach it, so a
 * state-changing tool is told it could not be executed, not that it may have run (review). Well-formed input
 * requests the caller's capabilities do not cover are what the call needs of the caller: -32021 naming them
 * (2026-07-28 basic/index §Error Codes), which a client can act on by declaring them.
 * @throws SdkError INVALID_RESULT naming the input request (an `upstream_error`), or MissingRequiredClientCapabilityError.
 */
export function refuseUndeclaredInput(result: Record<string, unknown>, capabilities: Record<string, unknown> | undefined): void {
  const problem = undeclaredInput(result, capabilities);
  if (typeof problem === 'string') throw markDelivery(new SdkError(SdkErrorCode.InvalidResult, problem), 'not_sent');
  if (problem) throw markDelivery(new MissingRequiredClientCapabilityError({ requiredCapabilities: problem.lacking }), 'not_sent');
}

/**
 * What {@link refuseUndeclaredInput} refuses an InputRequiredResult for: a malformed or 2025-era-caller one (its
 * message), the capabilities its well-formed requests need that the caller did not declare, or undefined.
 */
function undeclaredInput(
  result: Record<string, unknown>,
  capabilities: Record<string, unknown> | undefined,
): string | { lacking: Record<string, unknown> } | undefined {
  if (capabilities === undefined) return 'it asked for input in band (resultType input_required), which a 2025-era caller cannot give';
  const requests = result.inputRequests;
  if (requests === undefined) return undefined;
  if (!isPlainObject(requests)) return 'Invalid result: inputRequests is not an object';
  let lacking: Record<string, unknown> | undefined;
  for (const [key, asked] of Object.entries(requests)) {
    const shown = JSON.stringify(key.slice(0, 64));
    const method = isPlainObject(asked) ? asked.method : undefined;
    if (typeof method !== 'string' || !INPUT_METHODS.has(method)) return `Invalid result: inputRequests[${shown}] names no method a client answers`;
    const missing = missingCapabilities(capabilities, asked as unknown as UpstreamInputRequest);
    if (missing) lacking = withCapabilities(lacking, missing);
  }
  return lacking ? { lacking } : undefined;
}

/**
 * The client capabilities one of the upstream's requests needs that the caller's 2026-07-28 clientCapabilities lack
 * (spec 2026-07-28 client/*), as MissingRequiredClientCapabilityError's `requiredCapabilities` lists them
 * (`{elicitation: {url: {}}}`, `{sampling: {tools: {}}}`), or undefined when they cover it. A sampling request
 * offering `tools` needs `sampling.tools` (2025-11-25 client/sampling §Capabilities: servers MUST NOT send
 * tool-enabled sampling requests to clients that have not declared it), one asking `includeContext` other than
 * "none" needs `sampling.context` (servers SHOULD only use it then): a client without them refuses the request, or
 * answers it without the tools or context the upstream counted on.
 */
function missingCapabilities(capabilities: Record<string, unknown>, request: UpstreamInputRequest): Record<string, unknown> | undefined {
  if (request.method === 'sampling/createMessage') {
    const sampling = capabilities.sampling;
    const { tools, includeContext } = request.params ?? {};
    const needs: Record<string, unknown> = {};
    if (tools !== undefined && !(isPlainObject(sampling) && sampling.tools !== undefined)) needs.tools = {};
    if (includeContext !== undefined && includeContext !== 'none' && !(isPlainObject(sampling) && sampling.context !== undefined)) needs.context = {};
    return isPlainObject(sampling) && Object.keys(needs).length === 0 ? undefined : { sampling: needs };
  }
  if (request.method === 'roots/list') return capabilities.roots !== undefined ? undefined : { roots: {} };
  const elicitation = capabilities.elicitation as Record<string, unknown> | undefined;
  const mode = request.params?.mode === 'url' ? 'url' : 'form';
  // `elicitation: {}` means form mode only (2025-11-25 client/elicitation §Capabilities).
  const covered =
    elicitation !== undefined && (mode === 'url' ? elicitation.url !== undefined : elicitation.form !== undefined || Object.keys(elicitation).length === 0);
  return covered ? undefined : { elicitation: { [mode]: {} } };
}

/** `a` and `b` together, one level deep (`{elicitation: {form: {}}}` and `{elicitation: {url: {}}}` make one entry). */
function withCapabilities(a: Record<string, unknown> | undefined, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) out[key] = { ...(out[key] as Record<string, unknown> | undefined), ...(value as Record<string, unknown>) };
  return out;
}

/**
 * The caller's `_meta` as it should reach the upstream. Trace context and custom keys pass; the
 * envelope of this hop (`io.modelcontextprotocol/*`, which the SDK lifts out of `_meta`) is the
 * upstream client's own, except the keys that describe the caller (2026-07-28 basic/index §_meta),
 * added for a 2026-07-28 upstream: `clientCapabilities` (what input the caller can give) and
 * `logLevel`. A 2025-era caller has no per-request level, and the session level it may have set with
 * logging/setLevel cannot outlive its request on a stateless gateway, so it gets every level, as a 2025
 * server with no level set sends them. `progressToken` is re-issued by the upstream client and mapped
 * back in {@link forwardOptions}.
 */
function forwardedMeta(request: RequestView, era: 'modern' | 'legacy', upstream: UpstreamInfo): Record<string, unknown> | undefined {
  // A key loop, not fromEntries(entries().filter()): an array per key on every forwarded call.
  const meta: Record<string, unknown> = {};
  const asked = request._meta;
  if (asked) {
    for (const key of Object.keys(asked)) if (key !== 'progressToken' && !key.startsWith(HOP_META_PREFIX)) meta[key] = asked[key];
  }
  if (upstream.era === 'modern') {
    const envelope = (request.envelope ?? {}) as Record<string, unknown>;
    // Always the caller's (none for a 2025-era caller), never the upstream client's own, which declares
    // what the input bridge relays from 2025-era upstreams (client.ts newClient).
    meta[CLIENT_CAPABILITIES_META_KEY] = era === 'modern' && envelope[CLIENT_CAPABILITIES_META_KEY] !== undefined ? envelope[CLIENT_CAPABILITIES_META_KEY] : {};
    const level = era === 'modern' ? envelope[LOG_LEVEL_META_KEY] : upstream.capabilities.logging ? 'debug' : undefined;
    if (level !== undefined) meta[LOG_LEVEL_META_KEY] = level;
  }
  return Object.keys(meta).length ? meta : undefined;
}

/** A retried request's multi-round-trip fields (lifted out of params by the SDK), to send on unchanged. */
function retryFields(request: RequestView): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (request.inputResponses !== undefined) fields.inputResponses = request.inputResponses;
  // No requestState.verify hook is configured, so the accessor hands back the raw wire string.
  const state = request.requestState();
  if (typeof state === 'string') fields.requestState = state;
  return fields;
}

/**
 * The options of a forward on behalf of `onBehalfOf` (its credential and request id). Cancellation follows
 * the caller (`signal`, default its request's); upstream progress is re-sent under
 * the caller's own progressToken, and upstream log messages go out through the caller's log channel
 * (which applies the caller's level, and sends nothing unless the gateway declares logging).
 */
function forwardOptions(request: RequestView, onBehalfOf: OnBehalfOf, signal?: CallSignal): ForwardOptions {
  const token = request._meta?.progressToken;
  return {
    credential: onBehalfOf.credential,
    requestId: onBehalfOf.requestId,
    signal: signal ?? request.cancellation ?? request.signal,
    onprogress:
      token === undefined
        ? undefined
        : (progress) => void request.notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(() => {}),
    onlog: (message) => void request.log(message.level, message.data, message.logger).catch(() => {}),
  };
}

/**
 * An upstream result as this gateway answers it: the upstream's hop `_meta` (its serverInfo) removed,
 * `resultType` left to this hop's SDK except an `input_required` or `task` one (relayed as it is), and the
 * upstream's cache hints kept only for a modern caller (a 2025-era answer must not carry 2026 fields;
 * the SDK does not strip what a handler returns). Of its `_meta`, the gateway's own keys (`ai.cpz.gateway/`) are
 * dropped, and `ai.cpz/argument-errors` unless it is a list of `{path, message}` strings.
 */
export function relayedResult<T extends Record<string, unknown>>(result: T, era: 'modern' | 'legacy'): T {
  const meta = isPlainObject(result._meta) ? result._meta : undefined;
  // The gateway's own keys are the gateway's to set: an upstream's `ai.cpz.gateway/error` or `outcome` would pass for
  // the gateway's verdict beside its serverInfo (adversarial-upstream try-out).
  // `ai.cpz/argument-errors` is the upstream's own list of a call's offending arguments (the reference upstream writes
  // it on every direct tools/call it refuses, README): relayed when it has the shape the gateway writes, else dropped.
  const kept = meta
    ? Object.entries(meta).filter(
        ([key, value]) =>
          (!key.startsWith(HOP_META_PREFIX) || RELAYED_META_KEYS.has(key)) &&
          !key.startsWith(GATEWAY_META_PREFIX) &&
          (key !== ARGUMENT_ERRORS_META_KEY || isArgumentErrorList(value)),
      )
    : [];
  // Built without `delete`: deleting a property that is not the last one turns the object into a dictionary,
  // which every later step (the result schema, the encoding, JSON.stringify) then reads on a slow path.
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) {
    if ((key === 'resultType' && value !== 'input_required' && value !== 'task') || (era === 'legacy' && CACHE_HINT_FIELDS.includes(key))) continue;
    // A `_meta` that is no object (null, a string) is dropped: every SDK client refuses the whole result for it.
    if (key === '_meta') {
      if (kept.length) out._meta = Object.fromEntries(kept);
      continue;
    }
    out[key] = value;
  }
  return out as T;
}

/** Whether `value` is a list of `{path, message}` strings, as `ai.cpz/argument-errors` is written (checks/input-check.ts). */
function isArgumentErrorList(value: unknown): boolean {
  return Array.isArray(value) && value.every(isArgumentError);
}

/**
 * Whether a 2026-07-28 caller declared the tasks extension on this request (SEP-2663 §Capability
 * Negotiation: per request, in `clientCapabilities.extensions`).
 */
export function callerDeclaresTasks(request: Pick<RequestView, 'envelope'>): boolean {
  const capabilities = (request.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Whether a relayed result asks the caller for input (2026-07-28 InputRequiredResult). */
export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required';
}

/** A tool's or prompt's name as its upstream knows it (`own`) and as callers see it (`exposed`). */
export interface ForwardedName {
  readonly own: string;
  readonly exposed: string;
}

/**
 * The error for a failed forward: a JSON-RPC error the upstream answered passes through with its code,
 * message and data (a -32021's `requiredCapabilities` describes the caller's own capabilities, since
 * those are what was forwarded; errors.ts RelayedUpstreamError adds the gateway's `kind` and `upstream`
 * to its data and drops an SDK v1 "MCP error N: " prefix), translated for the caller's revision when
 * `caller` is given (wire/error-translation.ts: -32002 -> -32602 for 2026-07-28, ...), and with the
 * upstream's own name of the tool or prompt (`caller.name`) replaced by the one the caller used where the
 * message quotes it as a whole name ({@link callerNamed}); a failure to reach the upstream is ours
 * (-32603, kind in data).
 */
export function forwardError(
  error: unknown,
  upstream: string,
  caller?: { d: ForwardingContext; method: string; name?: ForwardedName },
): GatewayError | RelayedUpstreamError {
  const relayed = relayedError(error, upstream, caller);
  return relayed instanceof RelayedUpstreamError && caller?.name ? callerNamed(relayed, caller.name, CUE_OF[caller.method]) : relayed;
}

function relayedError(error: unknown, upstream: string, caller?: { d: ForwardingContext; method: string }): GatewayError | RelayedUpstreamError {
  // The upstream client already classified its failures (errors.ts upstreamFailureError): read, not classified again.
  const failure = failureOf(error, upstream);
  if (failure.kind === 'upstream_rejected' && caller) {
    const translated = translateUpstreamError(
      { code: failure.code!, message: failure.message, data: failure.data },
      translationContext(caller.d, caller.method),
    );
    if (translated.kind === 'error' && translated.translated)
      return new RelayedUpstreamError(upstream, translated.error.code, translated.error.message, translated.error.data);
  }
  if (error instanceof RelayedUpstreamError) return error;
  if (error instanceof GatewayError) return new GatewayError(error.kind, error.message, { upstream });
  return upstreamFailureError(failure, upstream, error);
}

/**
 * `error` with its message in the caller's names ({@link inCallerNames}): an upstream says "Tool
 * slow_echo not found" of the tool the caller called `notes__slow_echo`. Data is left as the upstream sent it.
 */
function callerNamed(error: RelayedUpstreamError, name: ForwardedName, cue?: NameCue): RelayedUpstreamError {
  const message = inCallerNames(error.message, name, cue);
  if (message === error.message) return error;
  const renamed = new RelayedUpstreamError(error.upstream, error.code, message, error.data);
  if (error.cause !== undefined) Object.defineProperty(renamed, 'cause', { value: error.cause, enumerable: false, configurable: true });
  return renamed;
}

/** The word a text names a tool or a prompt with ("Tool search not found", "Invalid arguments for prompt summarize"), by method. */
type NameCue = 'tool' | 'prompt';
const CUE_OF: Readonly<Record<string, NameCue>> = { 'tools/call': 'tool', 'prompts/get': 'prompt' };

/**
 * `text` with each whole-name occurrence of `name.own` (not inside a longer name of `[A-Za-z0-9_.-]`) replaced by
 * `name.exposed`. A tool's or prompt's name (`cue`) that is a plain word (`search`, `Echo`: letters, no inner
 * capital) is prose too ("the search index is rebuilding" became "the local__search index": try-out), so it is
 * renamed only where the text names the tool or prompt by it: after the cue word ("Tool search not found",
 * "Unknown tool: search", "Invalid arguments for prompt summarize") or in quotes. Other names (a task id) whole.
 */
function inCallerNames(text: string, name: ForwardedName, cue?: NameCue): string {
  // An empty name matches between any two characters (a 100 KB message became 20 MB: review).
  if (name.own === name.exposed || name.own === '') return text;
  const own = name.own.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const end = '(?![A-Za-z0-9_-]|\\.[A-Za-z0-9_-])';
  if (cue !== undefined && /^[A-Za-z]+$/.test(name.own) && !/[a-z][A-Z]/.test(name.own)) {
    const word = `[${cue[0]!.toUpperCase()}${cue[0]}]${cue.slice(1)}`;
    return text
      .replace(new RegExp(`(\\b${word}:?\\s+)${own}${end}`, 'g'), (_, before: string) => `${before}${name.exposed}`)
      .replace(new RegExp(`(["'\`])${own}\\1`, 'g'), (_, quote: string) => `${quote}${name.exposed}${quote}`);
  }
  return text.replace(new RegExp(`(?<![A-Za-z0-9_.-])${own}${end}`, 'g'), () => name.exposed);
}

/**
 * An upstream's isError tools/call result as the caller reads it: each text block in the caller's names
 * (an McpServer's argument validation says "Invalid arguments for tool slow_echo" of `notes__slow_echo`).
 * The rest of the text is the tool's own and stays as written: its "MCP error -32602: " is the only place
 * a result carries the code (unlike a relayed JSON-RPC error, {@link forwardError}, whose code is a field).
 * A result that is not an error is the tool's output and is left alone.
 */
export function relayedErrorResult(result: CallToolResult, name: ForwardedName): CallToolResult {
  if (result.isError !== true || !Array.isArray(result.content)) return result;
  let changed = false;
  const content = result.content.map((block) => {
    if (block.type !== 'text') return block;
    const text = inCallerNames(block.text, name, 'tool');
    if (text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  return changed ? { ...result, content } : result;
}

/**
 * A failed forward as the caller receives it, by the caller's revision (wire/error-translation.ts): the
 * error to throw, or, for an upstream's -32042 to a 2026-07-28 caller on an MRTR method, the in-band
 * URL elicitation to answer instead. `name`: the tool or prompt forwarded ({@link forwardError}).
 */
export function forwardFailure(
  d: ForwardingContext,
  method: string,
  error: unknown,
  upstream: string,
  name?: ForwardedName,
): { error: GatewayError | RelayedUpstreamError } | { result: InputRequired } {
  const failure = failureOf(error, upstream);
  if (failure.kind === 'upstream_rejected') {
    const translated = translateUpstreamError({ code: failure.code!, message: failure.message, data: failure.data }, translationContext(d, method));
    if (translated.kind === 'input_required') return { result: translated.result };
  }
  return { error: forwardError(error, upstream, { d, method, name }) };
}

function translationContext(d: ForwardingContext, method: string): TranslationContext {
  const capabilities = (d.request.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  return {
    era: d.caller.era,
    method,
    clientCapabilities: typeof capabilities === 'object' && capabilities !== null ? (capabilities as Record<string, unknown>) : undefined,
  };
}
