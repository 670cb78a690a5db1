import type { AuditLog, AuthDecision } from '../obs/audit.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';

/**
 * Records one decision of the built-in authorization server or a sign-in (the console's admin token
 * too), where it is made: one `auth_decision` audit line, and the OAuth counters:
 * `mcp_oauth_sign_ins_total` (a sign-in page accepted a credential), `mcp_oauth_refusals_total{endpoint,reason}`,
 * `mcp_oauth_refresh_reuse_total`. Every refusal kind of issue 28 goes through here exactly once.
 */
export type AuthDecisions = (decision: AuthDecision) => void;

/**
 * The reasons counted by name: RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2, RFC 7009 §2.2.1
 * and RFC 6750 §3.1 error codes, and the gateway's own; anything else is counted as `other`, so the
 * label stays bounded whatever an error says.
 */
const REASONS = new Set([
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
  'key_revoked',
  'scopes_unavailable',
]);

export function authDecisions(deps: { audit: AuditLog; metrics: GatewayMetrics }): AuthDecisions {
  const { audit, metrics } = deps;
  return (decision) => {
    audit.recordAuth(decision);
    if (decision.outcome === 'ok') {
      if (decision.endpoint === 'sign_in') metrics.oauthSignIns.inc();
      return;
    }
    const reason = decision.reason && REASONS.has(decision.reason) ? decision.reason : 'other';
    metrics.oauthRefusals.inc({ endpoint: decision.endpoint, reason });
    if (reason === 'refresh_token_reuse') metrics.oauthRefreshReuse.inc();
  };
}
