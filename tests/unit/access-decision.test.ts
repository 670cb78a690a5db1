/**
 * How a prompt, resource or completion request's decision is reported (gateway/mcp/access-decision.ts):
 * one outcome event as the arm settles, `ok`, `input_required` for an answer that asks the caller first
 * (review: it was `ok`, though nothing was read), `not_found` for a refusal before routing, `error` after.
 */
import { describe, expect, it } from 'vitest';
import { decidedAccess } from '../../gateway/mcp/access-decision.ts';
import { GatewayError, RelayedUpstreamError } from '../../gateway/errors.ts';
import type { OutcomeEvent } from '../../gateway/obs/outcomes.ts';
import type { DispatchContext } from '../../gateway/ports.ts';

function context(events: OutcomeEvent[]): DispatchContext {
  return {
    runtime: { outcomes: { emit: (event: OutcomeEvent) => events.push(event) } },
    surface: { name: 'full' },
    caller: { credential: { digest: 'd' }, requestId: 'r1' },
    request: { _meta: undefined, envelope: undefined },
  } as unknown as DispatchContext;
}

describe('decidedAccess', () => {
  it.each([
    ['an answer', { contents: [] }, 'ok'],
    ['an answer asking for input', { resultType: 'input_required', inputRequests: {}, requestState: 's' }, 'input_required'],
  ] as [string, Record<string, unknown>, string][])('reports %s as %s, once, with the upstream it went to', async (_, answer, outcome) => {
    const events: OutcomeEvent[] = [];
    await decidedAccess(context(events), 'prompts/get', { name: 'greet' }, async (routed) => {
      routed.upstream = 'notes';
      return answer;
    });
    expect(events).toEqual([expect.objectContaining({ kind: 'access', method: 'prompts/get', target: 'greet', upstream: 'notes', outcome })]);
  });

  it('reports a refusal before routing as not_found, and an upstream error after it with its code, and rethrows both', async () => {
    const events: OutcomeEvent[] = [];
    const unknown = new GatewayError('invalid_arguments', 'Unknown prompt: greet');
    await expect(
      decidedAccess(context(events), 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' } }, () => Promise.reject(unknown)),
    ).rejects.toBe(unknown);
    const refused = new RelayedUpstreamError('notes', -32002, 'Resource not found');
    await expect(
      decidedAccess(context(events), 'resources/read', { uri: 'file:///a' }, async (routed) => {
        routed.upstream = 'notes';
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(events).toEqual([
      expect.objectContaining({ method: 'completion/complete', target: 'greet', outcome: 'not_found', reason: 'invalid_arguments' }),
      expect.objectContaining({ method: 'resources/read', target: 'file:///a', upstream: 'notes', outcome: 'error', reason: 'upstream_rejected -32002' }),
    ]);
  });
});
