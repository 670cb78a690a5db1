/**
 * A sign-in or authorization server decision is one outcome event (auth/decisions.ts -> obs/outcomes.ts):
 * the `auth_decision` audit line and the OAuth counters are its subscribers, written once per decision.
 */
import { describe, expect, it } from 'vitest';
import { authDecisions } from '../../gateway/auth/decisions.ts';
import { createAuditLog } from '../../gateway/obs/audit.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { createOutcomes, gatewaySubscribers, type OutcomeEvent } from '../../gateway/obs/outcomes.ts';
import { LogCapture } from '../helpers/log-capture.ts';

describe('auth decisions as outcome events', () => {
  it('emits one event per decision, which writes one auth_decision line and counts once', async () => {
    const out = new LogCapture();
    const audit = createAuditLog({ destination: 'off', digestKey: 'k'.repeat(32) }, { destination: out });
    const metrics = createMetrics();
    const seen: OutcomeEvent[] = [];
    const decide = authDecisions(createOutcomes([(event) => seen.push(event), ...gatewaySubscribers(metrics, audit)]));

    decide({ requestId: 'r1', endpoint: 'token', outcome: 'refused', reason: 'refresh_token_reuse', client: 'c1', grantType: 'refresh_token' });
    decide({ requestId: 'r2', endpoint: 'sign_in', outcome: 'ok', client: 'c1' });
    decide({ requestId: 'r3', endpoint: 'register', outcome: 'refused', reason: 'made up by an attacker' });
    await audit.close();

    expect(seen.map((e) => e.kind)).toEqual(['auth', 'auth', 'auth']);
    const lines = out.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      requestId: 'r1',
      endpoint: 'token',
      outcome: 'refused',
      reason: 'refresh_token_reuse',
      client: 'c1',
      grantType: 'refresh_token',
    });
    expect(lines[0]).not.toHaveProperty('kind');
    const text = await metrics.registry.metrics();
    expect(text).toContain('mcp_oauth_refusals_total{endpoint="token",reason="refresh_token_reuse"} 1');
    expect(text).toContain('mcp_oauth_refusals_total{endpoint="register",reason="other"} 1');
    expect(text).toMatch(/^mcp_oauth_refresh_reuse_total 1$/m);
    expect(text).toMatch(/^mcp_oauth_sign_ins_total 1$/m);
  });
});
