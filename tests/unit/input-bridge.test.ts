/** The in-band bridge of a 2025-era upstream's requests to a 2026-07-28 caller (gateway/upstream/input-bridge.ts). */
import { describe, expect, it } from 'vitest';
import { BridgeClosedError, InputBridge, type UpstreamInputRequest } from '../../gateway/upstream/input-bridge.ts';

type Ask = (request: UpstreamInputRequest) => Promise<Record<string, unknown>>;

describe('InputBridge', () => {
  it('passes a call that asks nothing straight through', async () => {
    const bridge = new InputBridge(1000);
    expect(await bridge.begin('alice', async () => 'done')).toEqual({ kind: 'result', value: 'done' });
    expect(bridge.size).toBe(0);
  });

  it('turns an upstream question into input_required, and the retry answers the same waiting call', async () => {
    const bridge = new InputBridge(1000);
    let calls = 0;
    const first = await bridge.begin('alice', async (ask: Ask) => {
      calls++;
      const answer = await ask({ method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: {} } } });
      const roots = await ask({ method: 'roots/list' });
      return { answer, roots };
    });
    expect(first).toMatchObject({
      kind: 'input_required',
      result: { resultType: 'input_required', inputRequests: { 'elicitation-create-1': { method: 'elicitation/create' } } },
    });
    const state = first.kind === 'input_required' ? first.result.requestState : '';
    expect(bridge.resume('mallory', state, { 'elicitation-create-1': { action: 'accept', content: {} } })).toBeUndefined();
    const second = await bridge.resume('alice', state, { 'elicitation-create-1': { action: 'accept', content: { name: 'A' } } })!;
    expect(second).toMatchObject({ kind: 'input_required', result: { inputRequests: { 'roots-list-2': { method: 'roots/list' } } } });
    const third = await bridge.resume('alice', second.kind === 'input_required' ? second.result.requestState : '', { 'roots-list-2': { roots: [] } })!;
    expect(third).toEqual({ kind: 'result', value: { answer: { action: 'accept', content: { name: 'A' } }, roots: { roots: [] } } });
    expect(calls).toBe(1);
    expect(bridge.size).toBe(0);
  });

  it('gathers questions asked together into one input_required, and asks again for an unanswered one', async () => {
    const bridge = new InputBridge(1000);
    const first = await bridge.begin('alice', async (ask: Ask) =>
      Promise.all([ask({ method: 'roots/list' }), ask({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } })]),
    );
    expect(first.kind === 'input_required' && Object.keys(first.result.inputRequests)).toEqual(['roots-list-1', 'sampling-createMessage-2']);
    const state = first.kind === 'input_required' ? first.result.requestState : '';
    const again = await bridge.resume('alice', state, { 'roots-list-1': { roots: [] } })!;
    expect(again.kind === 'input_required' && Object.keys(again.result.inputRequests)).toEqual(['sampling-createMessage-2']);
  });

  it('gives the upstream an error and aborts its call when no retry comes in time', async () => {
    const bridge = new InputBridge(50);
    let upstreamSaw: unknown;
    let aborted = false;
    const first = await bridge.begin('alice', async (ask: Ask, signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      try {
        return await ask({ method: 'roots/list' });
      } catch (error) {
        upstreamSaw = error;
        throw error;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(upstreamSaw).toBeInstanceOf(BridgeClosedError);
    expect(aborted).toBe(true);
    expect(bridge.resume('alice', first.kind === 'input_required' ? first.result.requestState : '', {})).toBeUndefined();
  });

  it('refuses a requestState it did not issue', () => {
    expect(new InputBridge(1000).resume('alice', 'opaque-upstream-state', {})).toBeUndefined();
  });
});
