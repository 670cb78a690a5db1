import { CLIENT_INFO_META_KEY, type CallToolResult } from '@modelcontextprotocol/server';
import type { CatalogTool } from '../catalog/catalog.ts';
import { toolErrorResult } from '../errors.ts';
import type { DispatchContext, RpcMessage, Surface } from '../mcp/types.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import type { GatewayRuntime } from '../runtime-state.ts';
import { CALL_TOOL } from '../policy/tool-resolution.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import { annotateRequest } from '../obs/tracing.ts';
import { describeBudget, toolCallCharges } from '../policy/rate-limits.ts';

/** One tool decision as the surfaces report it: what was asked, of which tool, and what came of it. */
export interface Decision {
  via: 'direct' | 'call_tool';
  /** The name the caller used. */
  name: string;
  /** The catalogue tool the name resolved to, if any. */
  tool?: CatalogTool;
  outcome: AuditOutcome;
  reason?: string;
  arguments: unknown;
  /** `performance.now()` when the decision started. */
  started: number;
  budget?: string;
}

/**
 * Records a tool decision where operators look for it: one audit event (obs/audit.ts) and, on the
 * request's span, the tool it resolved to and `error.type` for anything but `ok` (the MCP semantic
 * conventions' `tool_error` for an isError answer, else the outcome).
 */
export function recordDecision(d: DispatchContext, decision: Decision): void {
  // Span attributes carry catalogue names only: a name the caller made up is an argument value.
  if (decision.via === 'call_tool' && decision.tool)
    annotateRequest({ 'ai.cpz.gateway.target_tool': decision.tool.name, 'ai.cpz.gateway.upstream': decision.tool.upstream });
  annotateRequest({
    'ai.cpz.gateway.outcome': decision.outcome,
    ...(decision.outcome === 'ok' ? {} : { 'error.type': decision.outcome === 'error' ? 'tool_error' : decision.outcome }),
  });
  if (!d.runtime.audit.enabled) return;
  audit(d.runtime, d.surface.name, d.caller, (d.request.envelope ?? d.request._meta) as Record<string, unknown> | undefined, decision);
}

/**
 * Audits the tools/call messages of a POST the edge refused before dispatch (over the request budget,
 * headers contradicting the arguments, a refused credential, a batch where batches are gone): one
 * event each, named by what the caller asked for (call_tool: its target, `via: call_tool`). The tool is
 * not looked up: a refused request costs no catalogue read.
 */
export function auditEdgeRefusal(
  runtime: GatewayRuntime,
  surface: Surface,
  request: AuthenticatedRequest,
  messages: readonly RpcMessage[],
  refusal: { outcome: AuditOutcome; reason: string; started: number },
): void {
  if (!runtime.audit.enabled) return;
  for (const message of messages) {
    if (!message || typeof message !== 'object' || message.method !== 'tools/call') continue;
    const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as {
      name?: unknown;
      arguments?: unknown;
      _meta?: Record<string, unknown>;
    };
    const name = typeof params.name === 'string' ? params.name : '';
    const target = name === CALL_TOOL ? (params.arguments as { name?: unknown; arguments?: unknown } | undefined) : undefined;
    const viaCallTool = surface.name === 'compact' && target !== undefined && typeof target === 'object';
    audit(runtime, surface.name, request, params._meta, {
      via: viaCallTool ? 'call_tool' : 'direct',
      name: viaCallTool ? (typeof target.name === 'string' ? target.name : '') : name,
      arguments: (viaCallTool ? target.arguments : params.arguments) ?? {},
      ...refusal,
    });
  }
}

/** The identity of the request a decision belongs to: the edge's AuthenticatedRequest, or the Caller built from it. */
type DecidingRequest = Pick<AuthenticatedRequest, 'credential' | 'requestId' | 'traceId'>;

function audit(
  runtime: Pick<GatewayRuntime, 'audit'>,
  surface: string,
  request: DecidingRequest,
  envelope: Record<string, unknown> | undefined,
  decision: Decision,
): void {
  const info = envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown; version?: unknown } | undefined;
  runtime.audit.record({
    requestId: request.requestId,
    traceId: request.traceId,
    credentialDigest: request.credential.digest,
    client:
      info && typeof info === 'object'
        ? { name: typeof info.name === 'string' ? info.name : undefined, version: typeof info.version === 'string' ? info.version : undefined }
        : undefined,
    surface,
    via: decision.via,
    upstream: decision.tool?.upstream,
    tool: decision.name,
    readOnly: decision.tool?.readOnly,
    outcome: decision.outcome,
    reason: decision.reason,
    budget: decision.budget,
    arguments: decision.arguments,
    durationMs: performance.now() - decision.started,
  });
}

/**
 * Spends the tool-call budgets of `tool` for this caller (policy/rate-limits.ts): undefined when the
 * call may go on, else the isError result the model reads, saying which budget ran out and when to
 * retry (`_meta["ai.cpz.gateway/retryAfterMs"]`). Tool execution errors, not JSON-RPC errors: the
 * spec reserves -32020..-32099, and a model can act on an isError result (server/tools §Error Handling).
 */
export async function spendToolBudgets(d: DispatchContext, tool: CatalogTool): Promise<{ result: CallToolResult; budget: string } | undefined> {
  const limiter = d.runtime.rateLimiter;
  if (!limiter) return undefined;
  const upstream = d.runtime.config.upstreams.find((u) => u.name === tool.upstream);
  const charges = toolCallCharges(
    d.runtime.config.rateLimits,
    upstream,
    { upstream: tool.upstream, upstreamName: tool.upstreamName, readOnly: tool.readOnly },
    d.caller.credential.account ?? d.caller.credential.digest,
  );
  if (charges.length === 0) return undefined;
  const decision = await limiter.consume(charges);
  if (decision.ok) return undefined;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  const what = decision.budget === 'tool' ? `calls of ${tool.name}` : decision.budget === 'writes' ? 'state-changing tool calls' : 'read-only tool calls';
  const result = toolErrorResult(
    'rate_limited',
    `Rate limit reached: ${what} for this account are limited to ${describeBudget(decision.limit)}. Nothing was executed. Retry after ${seconds} s.`,
  );
  return {
    result: { ...result, _meta: { ...result._meta, 'ai.cpz.gateway/budget': decision.budget, 'ai.cpz.gateway/retryAfterMs': decision.retryAfterMs } },
    budget: decision.budget,
  };
}
