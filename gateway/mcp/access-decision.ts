import { ProtocolError } from '@modelcontextprotocol/server';
import { GatewayError, RelayedUpstreamError } from '../errors.ts';
import type { AccessDecision } from '../obs/audit.ts';
import type { DispatchContext } from '../ports.ts';
import { requesterOf } from '../surfaces/tool-decision.ts';

/** Where a routed request went, filled in by the arm once it is routed (absent: refused as unknown). */
export interface Routed {
  upstream?: string;
}

/**
 * Runs the arm of a prompt, resource or completion request (or a resource subscription) and reports its
 * decision once, as it settles: one outcome event (obs/outcomes.ts), whose `access_decision` audit line
 * says who asked for what, where it went and what came of it (an audit line per decision, as for tools).
 * `ok` when the arm answers (`input_required` when that answer asks the caller for input first); thrown before `routed.upstream` is set, the caller was told the name is
 * unknown (`not_found`: nothing upstream has it, or nothing the caller may reach); thrown after, `error`
 * with the gateway's error kind, or `upstream_rejected <code>` (the code the caller was answered), as
 * `reason`. Rethrows what the arm threw.
 */
export async function decidedAccess<R>(
  d: DispatchContext,
  method: AccessDecision['method'],
  params: Record<string, unknown>,
  arm: (routed: Routed) => Promise<R>,
): Promise<R> {
  const started = performance.now();
  const routed: Routed = {};
  const report = (outcome: AccessDecision['outcome'], reason?: string) =>
    d.runtime.outcomes.emit({
      kind: 'access',
      endpoint: d.surface.name,
      requester: requesterOf(d.caller, (d.request.envelope ?? d.request._meta) as Record<string, unknown> | undefined),
      method,
      ...targetOf(method, params),
      ...(routed.upstream ? { upstream: routed.upstream } : {}),
      outcome,
      ...(reason ? { reason } : {}),
      durationMs: performance.now() - started,
    });
  try {
    const result = await arm(routed);
    // Paused for the caller's input (spec 2026-07-28 basic/patterns/mrtr): nothing read yet, as a tool's line says it.
    report((result as { resultType?: unknown } | null)?.resultType === 'input_required' ? 'input_required' : 'ok');
    return result;
  } catch (error) {
    report(routed.upstream ? 'error' : 'not_found', reasonOf(error));
    throw error;
  }
}

/** The name a request asked for: a prompt's `name`, a resource's `uri`, a completion's reference (`ref.name` or `ref.uri`). */
function targetOf(method: AccessDecision['method'], params: Record<string, unknown>): { target?: string } {
  const from = method === 'completion/complete' ? ((params.ref ?? {}) as Record<string, unknown>) : params;
  const target = typeof from.name === 'string' ? from.name : typeof from.uri === 'string' ? from.uri : undefined;
  return target === undefined ? {} : { target };
}

/** The gateway's error kind, else a JSON-RPC code (an upstream's relayed error: `upstream_rejected <code>`), else `internal`. */
function reasonOf(error: unknown): string {
  if (error instanceof RelayedUpstreamError) return `${error.kind} ${error.code}`;
  if (error instanceof GatewayError) return error.kind;
  if (error instanceof ProtocolError) return String(error.code);
  return 'internal';
}
