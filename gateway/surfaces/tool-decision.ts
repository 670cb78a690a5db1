import { CLIENT_INFO_META_KEY, type CallToolResult } from '@modelcontextprotocol/server';
import type { CatalogTool } from '../catalog/catalog.ts';
import { GatewayError, toolErrorResult } from '../errors.ts';
import type { DispatchContext } from '../ports.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import type { AuthenticatedRequest } from '../auth/authenticated.ts';
import type { AuditOutcome } from '../obs/audit.ts';
import type { OutputCheck } from '../checks/output-check.ts';
import type { Requester, ToolCount } from '../obs/outcomes.ts';
import { describeBudget, toolCallCharges } from '../policy/rate-limits.ts';

/** One tool decision as the surfaces report it: what was asked, of which tool, and what came of it. */
export interface Decision {
  via: 'direct' | 'call_tool' | 'run_code';
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
  /** How `mcp_tool_calls_total` counts it. */
  counted: ToolCount;
  /** The call was sent upstream (its duration is observed). */
  forwarded?: boolean;
  /** The surface's own tool (search_tools): counted and audited, no span attributes. */
  own?: boolean;
}

/**
 * Reports a tool decision, once, where it is made: one outcome event (obs/outcomes.ts), which the audit
 * trail, `mcp_tool_calls_total` and the request's span subscribe to.
 */
export function recordDecision(d: DispatchContext, decision: Decision): void {
  const { tool } = decision;
  d.runtime.outcomes.emit({
    kind: 'tool',
    endpoint: d.surface.name,
    requester: requesterOf(d.caller, (d.request.envelope ?? d.request._meta) as Record<string, unknown> | undefined),
    via: decision.via,
    name: decision.name,
    ...(tool ? { tool: { name: tool.name, upstream: tool.upstream, readOnly: tool.readOnly } } : {}),
    outcome: decision.outcome,
    reason: decision.reason,
    budget: decision.budget,
    arguments: decision.arguments,
    counted: decision.counted,
    durationMs: performance.now() - decision.started,
    ...(decision.forwarded ? { forwarded: true } : {}),
    ...(decision.own ? { own: true } : {}),
    ...(d.runId ? { runId: d.runId } : {}),
  });
}

/**
 * The caller's visible catalogue, read to decide a tools/call of `asked.name`. When it cannot be read (the
 * only upstream down since the start, so no catalogue copy to serve), the call is answered with that
 * failure (-32603 `upstream_unavailable`): recorded first as an `error` decision with the failure's kind as
 * reason, since nothing further down records it, and a review found such calls left no audit line.
 * `label` is the call's `mcp_tool_calls_total` tool label: bounded (`unknown` for a name no catalogue vouches for).
 */
export async function visibleForCall(
  d: DispatchContext,
  asked: Pick<Decision, 'via' | 'name' | 'arguments' | 'started' | 'own'> & { label: string },
): Promise<VisibleCatalog> {
  try {
    return await d.caller.visible();
  } catch (error) {
    recordDecision(d, {
      via: asked.via,
      name: asked.name,
      outcome: 'error',
      // What the caller is answered: a GatewayError's kind, anything else `internal` (mcp/server.ts guarded).
      reason: error instanceof GatewayError ? error.kind : 'internal',
      arguments: asked.arguments,
      started: asked.started,
      counted: { tool: asked.label, outcome: 'is_error' },
      ...(asked.own ? { own: true } : {}),
    });
    throw error;
  }
}

/**
 * The identity of a request a decision belongs to (the Caller built from the edge's AuthenticatedRequest),
 * with the caller's `clientInfo` from its 2026-07-28 envelope.
 */
export function requesterOf(
  request: Pick<AuthenticatedRequest, 'credential' | 'requestId' | 'traceId' | 'address'>,
  envelope: Record<string, unknown> | undefined,
): Requester {
  const info = envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown; version?: unknown } | undefined;
  return {
    requestId: request.requestId,
    traceId: request.traceId,
    credentialDigest: request.credential.digest,
    ...(request.credential.apiKey ? { apiKey: request.credential.apiKey } : {}),
    ...(request.address ? { address: request.address } : {}),
    ...(request.credential.oauth ? { oauth: request.credential.oauth } : {}),
    ...(info && typeof info === 'object'
      ? { client: { name: typeof info.name === 'string' ? info.name : undefined, version: typeof info.version === 'string' ? info.version : undefined } }
      : {}),
  };
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
    result: { ...result, _meta: { ...result._meta, [BUDGET_META_KEY]: decision.budget, [RETRY_AFTER_META_KEY]: decision.retryAfterMs } },
    budget: decision.budget,
  };
}

/** `_meta` keys of a rate-limited call's isError result: the budget spent, and in how many milliseconds it may be tried again. */
export const BUDGET_META_KEY = 'ai.cpz.gateway/budget';
export const RETRY_AFTER_META_KEY = 'ai.cpz.gateway/retryAfterMs';

/** `_meta` key of an isError result whose call may have run upstream all the same (value `unknown`). */
export const OUTCOME_META_KEY = 'ai.cpz.gateway/outcome';

/**
 * The isError answer to a result that broke its tool's outputSchema (checks/output-check.ts), the
 * violation's JSON Pointers in `_meta["ai.cpz.gateway/paths"]`. A state-changing tool's upstream answered,
 * so the call reached it and what it did is not known from a result out of contract: the answer says
 * "may have run" with `_meta["ai.cpz.gateway/outcome"]: "unknown"`, as a write that got no answer does
 * (a bare "does not match" reads as failed, and a retry could place the order twice).
 */
export function outputViolationResult(tool: CatalogTool, check: Extract<OutputCheck, { ok: false }>): CallToolResult {
  const paths = { 'ai.cpz.gateway/paths': check.paths };
  if (tool.readOnly) {
    const result = toolErrorResult('output_schema_violation', check.message);
    return { ...result, _meta: { ...result._meta, ...paths } };
  }
  const result = toolErrorResult(
    'output_schema_violation',
    `Tool "${tool.name}" may have run: upstream ${tool.upstream} answered the call, but its result does not match the tool's outputSchema ` +
      `(${check.problems}), so the result is withheld and the outcome is unknown. Check its effect before calling it again, or it may be done twice.`,
  );
  return { ...result, _meta: { ...result._meta, ...paths, [OUTCOME_META_KEY]: 'unknown' } };
}
