import type { AccessDecision, AuditLog, AuditOutcome, AuthDecision, CredentialForm, OAuthHolder, ToolDecision } from './audit.ts';
import type { GatewayMetrics } from './metrics.ts';
import { annotateCurrent, annotateRequest, nameRequestByMethod } from './tracing.ts';

/**
 * The gateway's decisions as events: each is emitted once, where it is decided, and the metrics, the
 * audit trail and the request's span subscribe ({@link createOutcomes}); no decision site writes to
 * any of them itself. Six kinds:
 * - a JSON-RPC message answered ({@link MessageOutcome}): `mcp_requests_total`;
 * - a tools/call decided by the arms ({@link ToolOutcome}): an audit line, `mcp_tool_calls_total` (and the
 *   call's duration, output-schema violations), the span's tool and `error.type` (a run_code inner
 *   call's on its own span under the run's, never on the request's);
 * - a run_code run ended ({@link CodeRunOutcome}): `mcp_code_runs_total`, its duration, the request span's
 *   outcome, and the run's own audit line (its inner calls have theirs, with the same `runId`);
 * - a request, or one message of it, refused before dispatch ({@link Refusal}): an audit line (a tool
 *   decision for a tools/call, else a refused request), and `mcp_requests_total` for its message;
 * - a sign-in or authorization server decision ({@link AuthOutcome}): the `auth_decision` audit line and
 *   the OAuth counters;
 * - a prompt, resource or completion request, or a resource subscription, decided ({@link AccessOutcome}):
 *   the `access_decision` audit line (its message is counted as every message is).
 */

/** Who a decision was about: the request's identity (never a secret; the credential by its digest). */
export interface Requester {
  requestId?: string;
  traceId?: string;
  /** The credential's keyed digest (auth/credentials.ts), when one was presented in full. */
  credentialDigest?: string;
  credentialForm?: CredentialForm;
  /** The caller's 2026-07-28 `clientInfo`, when its request said it. */
  client?: { name?: string; version?: string };
  /** An OAuth access token's holder (auth/oauth/credential.ts), when the credential was one. */
  oauth?: OAuthHolder;
  /** A refused credential's account id: a known key id presented with a wrong secret (audit `account`, keyed). */
  account?: string;
  /** The configured key's name (`credentials.apiKeys[].name`), when the credential is one. */
  apiKey?: string;
  /** The client address (http/client-address.ts), as the access log and the per-address budgets have it. */
  address?: string;
  /** The tool a tools/call's Mcp-Name header names: a refused request's only tool name when its body was not read. */
  namedTool?: string;
}

/** One JSON-RPC message answered, ok or with an error (the bounded method label: mcp/message-metrics.ts). */
export interface MessageOutcome {
  kind: 'message';
  endpoint: string;
  era: 'modern' | 'legacy';
  method: string;
  outcome: 'ok' | 'error';
}

/** The `mcp_tool_calls_total` series a tool decision counts in. */
export interface ToolCount {
  /** The tool label (a catalogue name, the surface's own tool, or `unknown`: bounded). */
  tool: string;
  outcome: string;
}

/** A tool call as the caller asked for it. */
export interface AskedTool {
  /** `direct` (the tool named in tools/call), `call_tool` (dispatched by the compact surface) or `run_code` (a script's tools.* call). */
  via: 'direct' | 'call_tool' | 'run_code';
  /** The name the caller used. */
  name: string;
  /** Only the JSON shape is digested (audit), never logged. */
  arguments: unknown;
}

/** One tools/call decided by the arms. */
export interface ToolOutcome extends AskedTool {
  kind: 'tool';
  endpoint: string;
  requester: Requester;
  /** The catalogue tool the name resolved to, if any. */
  tool?: { name: string; upstream: string; readOnly: boolean };
  /** The decision as the audit trail names it. */
  outcome: AuditOutcome;
  reason?: string;
  budget?: string;
  /** How `mcp_tool_calls_total` counts it. */
  counted: ToolCount;
  /** Milliseconds from the start of the decision. */
  durationMs: number;
  /** The call was sent upstream: its duration goes in `mcp_tool_call_duration_seconds`. */
  forwarded?: boolean;
  /** The surface's own tool (search_tools): counted and audited, but it annotates no span (it is no catalogue tool). */
  own?: boolean;
  /** The run_code run an inner call belongs to (surfaces/run-code.ts), in its audit line. */
  runId?: string;
}

/** A request, or one message of it, refused before dispatch. */
export interface Refusal {
  kind: 'refusal';
  endpoint: string;
  requester: Requester;
  /** The refused message, when the body was read: its era and method label, and the tool call it asked for. */
  message?: { era: 'modern' | 'legacy'; method: string; tool?: AskedTool & { catalogTool?: { upstream: string; readOnly: boolean } } };
  outcome: AuditOutcome;
  reason: string;
  budget?: string;
  /** The HTTP status it was answered with. */
  status: number;
  durationMs: number;
}

/** One run_code run ended (surfaces/run-code.ts), or refused before it started. */
export interface CodeRunOutcome {
  kind: 'code_run';
  endpoint: string;
  /** Absent for a run refused before it started (bad arguments, a full concurrency limit). */
  runId?: string;
  outcome: 'ok' | 'script_error' | 'limit' | 'cancelled' | 'refused' | 'error';
  /** The `compact.codeMode.limits` key a `limit` (or a `refused` for concurrency) outcome names. */
  limit?: string;
  /** tools.* calls the script made. */
  calls: number;
  /** Milliseconds the run took; absent for a run that never started. */
  durationMs?: number;
  /** Who ran it, and its arguments (digested in the audit line, never logged). */
  requester: Requester;
  arguments: unknown;
  /** Milliseconds from the call to the outcome, for the audit line (a run refused before it started too). */
  elapsedMs: number;
}

/**
 * One decision of a sign-in (the console's admin token too) or of the built-in authorization server
 * (auth/decisions.ts), with the fields of its `auth_decision` audit line (obs/audit.ts {@link AuthDecision}).
 */
export interface AuthOutcome extends AuthDecision {
  kind: 'auth';
}

/** A prompt, resource or completion request, or a resource subscription, decided (mcp/access-decision.ts). */
export interface AccessOutcome extends Omit<AccessDecision, 'requestId' | 'traceId' | 'credentialDigest' | 'client' | 'oauth' | 'address' | 'surface'> {
  kind: 'access';
  endpoint: string;
  requester: Requester;
}

export type OutcomeEvent = MessageOutcome | ToolOutcome | Refusal | CodeRunOutcome | AuthOutcome | AccessOutcome;

/** Where decisions are reported: one call per decision. */
export interface Outcomes {
  emit(event: OutcomeEvent): void;
}

/** A subscriber: sees every event, after the decision was made; it never alters an answer. */
export type OutcomeSubscriber = (event: OutcomeEvent) => void;

/** The outcomes of one runtime, delivered to `subscribers` in order. */
export function createOutcomes(subscribers: readonly OutcomeSubscriber[]): Outcomes {
  return {
    emit(event) {
      for (const subscriber of subscribers) subscriber(event);
    },
  };
}

/** The gateway's own subscribers: the Prometheus metrics, the audit trail, the request's span. */
export function gatewaySubscribers(metrics: GatewayMetrics, audit: AuditLog): OutcomeSubscriber[] {
  return [countIn(metrics), ...(audit.enabled ? [auditIn(audit)] : []), annotateSpan];
}

/** `mcp_requests_total`, `mcp_tool_calls_total`, the call duration and output-schema violations. */
export function countIn(metrics: GatewayMetrics): OutcomeSubscriber {
  return (event) => {
    if (event.kind === 'message') {
      metrics.mcpRequests.inc({ endpoint: event.endpoint, era: event.era, method: event.method, outcome: event.outcome });
    } else if (event.kind === 'tool') {
      metrics.toolCalls.inc({ endpoint: event.endpoint, tool: event.counted.tool, via: event.via, outcome: event.counted.outcome });
      if (event.forwarded && event.tool) metrics.toolCallDuration.observe({ tool: event.tool.name }, event.durationMs / 1000);
      if (event.outcome === 'output_schema_violation' && event.tool) metrics.outputSchemaViolations.inc({ tool: event.tool.name });
    } else if (event.kind === 'code_run') {
      metrics.codeRuns.inc({ outcome: event.outcome, limit: event.limit ?? 'none' });
      if (event.durationMs !== undefined) metrics.codeRunDuration.observe(event.durationMs / 1000);
    } else if (event.kind === 'auth') {
      countAuthDecision(metrics, event);
    } else if (event.kind === 'refusal' && event.message) {
      metrics.mcpRequests.inc({ endpoint: event.endpoint, era: event.message.era, method: event.message.method, outcome: 'error' });
    }
  };
}

/**
 * The `reason` values of `mcp_oauth_refusals_total` counted by name: RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2, RFC 7009 §2.2.1
 * and RFC 6750 §3.1 error codes, and the gateway's own; anything else is counted as `other`, so the
 * label stays bounded whatever an error says.
 */
const OAUTH_REFUSAL_REASONS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'unsupported_response_type',
  'server_error',
  'temporarily_unavailable',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_software_statement',
  'unapproved_software_statement',
  'invalid_target',
  'unsupported_token_type',
  'invalid_token',
  'insufficient_scope',
  'invalid_credentials',
  'rate_limited',
  'refresh_token_reuse',
  'authorization_code_reuse',
  'token_of_another_client',
  'unknown_token',
  'key_revoked',
  'scopes_unavailable',
]);

/**
 * The OAuth counters of one sign-in or authorization server decision: `mcp_oauth_sign_ins_total` (a
 * sign-in page accepted a credential), `mcp_oauth_refusals_total{endpoint,reason}` (a reason not named
 * above counted as `other`), `mcp_oauth_refresh_reuse_total`.
 */
function countAuthDecision(metrics: GatewayMetrics, decision: AuthDecision): void {
  if (decision.outcome === 'ok') {
    if (decision.endpoint === 'sign_in') metrics.oauthSignIns.inc();
    return;
  }
  const reason = decision.reason && OAUTH_REFUSAL_REASONS.has(decision.reason) ? decision.reason : 'other';
  metrics.oauthRefusals.inc({ endpoint: decision.endpoint, reason });
  if (reason === 'refresh_token_reuse' || reason === 'authorization_code_reuse') metrics.oauthRefreshReuse.inc();
}

/**
 * One audit line per tool decision (search_tools included), per run_code run (a `tool_decision` of
 * run_code with its `runId`, {@link codeRunDecision}), per refusal, per sign-in or authorization
 * server decision (`auth_decision`) and per prompt, resource or completion decision (`access_decision`).
 */
export function auditIn(audit: AuditLog): OutcomeSubscriber {
  return (event) => {
    if (event.kind === 'access') {
      const { kind: _, endpoint, requester, ...decision } = event;
      audit.recordAccess({ ...whoAsked(requester), surface: endpoint, ...decision });
    } else if (event.kind === 'code_run') {
      audit.record(codeRunDecision(event));
    } else if (event.kind === 'tool') {
      audit.record({
        ...whoAsked(event.requester),
        surface: event.endpoint,
        via: event.via,
        runId: event.runId,
        upstream: event.tool?.upstream,
        tool: event.name,
        readOnly: event.tool?.readOnly,
        outcome: event.outcome,
        reason: event.reason,
        budget: event.budget,
        arguments: event.arguments,
        durationMs: event.durationMs,
      });
    } else if (event.kind === 'auth') {
      const { kind: _, ...decision } = event;
      audit.recordAuth(decision);
    } else if (event.kind === 'refusal') {
      const { requester, message } = event;
      if (message?.tool && requester.credentialDigest !== undefined) {
        audit.record({
          ...whoAsked(requester),
          credentialForm: requester.credentialForm,
          surface: event.endpoint,
          via: message.tool.via,
          upstream: message.tool.catalogTool?.upstream,
          tool: message.tool.name,
          readOnly: message.tool.catalogTool?.readOnly,
          outcome: event.outcome,
          reason: event.reason,
          budget: event.budget,
          status: event.status,
          arguments: message.tool.arguments,
          durationMs: event.durationMs,
        });
        return;
      }
      audit.refused({
        ...whoAsked(requester),
        credentialDigest: requester.credentialDigest,
        credentialForm: requester.credentialForm ?? 'none',
        account: requester.account,
        surface: event.endpoint,
        method: message?.method,
        tool: message?.tool?.name ?? (message ? undefined : requester.namedTool),
        outcome: event.outcome,
        reason: event.reason,
        budget: event.budget,
        status: event.status,
        durationMs: event.durationMs,
      });
    }
  };
}

/** The fields of an audit line that say who asked (a refused request's credential digest may be absent: it overrides). */
function whoAsked(requester: Requester): Pick<ToolDecision, 'requestId' | 'traceId' | 'credentialDigest' | 'apiKey' | 'oauth' | 'address' | 'client'> {
  return {
    requestId: requester.requestId,
    traceId: requester.traceId,
    credentialDigest: requester.credentialDigest ?? '',
    apiKey: requester.apiKey,
    oauth: requester.oauth,
    address: requester.address,
    client: requester.client,
  };
}

/**
 * A run_code run as its audit line says it: called directly on the compact surface, `ok`; refused before
 * it started, `invalid_arguments` (its code) or `rate_limited` (a concurrency limit: `budget` names the
 * `compact.codeMode.limits` key); else `error` with the run's outcome as `reason` (`script_error`,
 * `limit`: `limit` names the key, `cancelled`, `error`: the sandbox failed), and how many tools.* calls it made.
 */
function codeRunDecision(event: CodeRunOutcome): ToolDecision {
  const refused = event.outcome === 'refused';
  const outcome: AuditOutcome = event.outcome === 'ok' ? 'ok' : refused ? (event.limit ? 'rate_limited' : 'invalid_arguments') : 'error';
  return {
    ...whoAsked(event.requester),
    surface: event.endpoint,
    via: 'direct',
    runId: event.runId,
    tool: 'run_code',
    readOnly: true,
    outcome,
    ...(outcome === 'error' ? { reason: event.outcome } : {}),
    ...(refused && event.limit ? { budget: event.limit } : {}),
    ...(!refused && event.limit ? { limit: event.limit } : {}),
    calls: event.calls,
    arguments: event.arguments,
    durationMs: event.elapsedMs,
  };
}

/**
 * The span attributes of a decision: the tool a call_tool or a script's call resolved to (catalogue
 * names only: a name the caller made up is an argument value), the outcome, and `error.type` for
 * anything but `ok` (the MCP semantic conventions' `tool_error` for an isError answer, else the
 * outcome). A tools/call's go on the request span; a run_code inner call's on its own span (the
 * current one, a child of the run's: surfaces/run-code.ts), so each call keeps its own outcome and the
 * request span says the run's, once. A tools/call of a name in no catalogue renames the request span
 * by its method alone (bounded span names: {@link nameRequestByMethod}).
 */
export function annotateSpan(event: OutcomeEvent): void {
  if (event.kind === 'code_run') {
    annotateRequest({
      'ai.cpz.gateway.outcome': event.outcome,
      ...(event.runId ? { 'ai.cpz.gateway.run_id': event.runId } : {}),
      ...(event.limit ? { 'ai.cpz.gateway.limit': event.limit } : {}),
      ...(event.outcome === 'ok' ? {} : { 'error.type': event.outcome === 'error' ? 'tool_error' : event.outcome }),
    });
    return;
  }
  if (event.kind === 'refusal') {
    if (event.message?.method === 'tools/call' && event.message.tool && !event.message.tool.catalogTool) nameRequestByMethod('tools/call');
    return;
  }
  if (event.kind !== 'tool' || event.own) return;
  if (event.via === 'direct' && !event.tool) nameRequestByMethod('tools/call');
  const annotate = event.via === 'run_code' ? annotateCurrent : annotateRequest;
  if (event.via !== 'direct' && event.tool) annotate({ 'ai.cpz.gateway.target_tool': event.tool.name, 'ai.cpz.gateway.upstream': event.tool.upstream });
  annotate({
    'ai.cpz.gateway.outcome': event.outcome,
    ...(event.outcome === 'ok' ? {} : { 'error.type': event.outcome === 'error' ? 'tool_error' : event.outcome }),
  });
}
