import type { AuthDecision } from '../obs/audit.ts';
import type { Outcomes } from '../obs/outcomes.ts';

/**
 * Records one decision of the built-in authorization server or a sign-in (the console's admin token
 * too), where it is made. Every refusal kind of issue 28 goes through here exactly once.
 */
export type AuthDecisions = (decision: AuthDecision) => void;

/**
 * Each decision as one outcome event (obs/outcomes.ts `AuthOutcome`): the `auth_decision` audit line
 * and the OAuth counters (`mcp_oauth_sign_ins_total`, `mcp_oauth_refusals_total{endpoint,reason}`,
 * `mcp_oauth_refresh_reuse_total`) subscribe, as they do to the MCP endpoints' decisions.
 */
export function authDecisions(outcomes: Outcomes): AuthDecisions {
  return (decision) => outcomes.emit({ kind: 'auth', ...decision });
}
