/** The bridge of a 2025-era upstream's requests to its caller (gateway/upstream/input-bridge.ts): in band for 2026-07-28, on the call stream for 2025. */
import { describe, expect, it } from 'vitest';
import { BridgeClosedError, InputBridge, type StreamRequest, type UpstreamInputRequest } from '../../gateway/upstream/input-bridge.ts';

type Ask = (request: UpstreamInputRequest) => Promise<Record<string, unknown>>;

describe('InputBridge', () => {
  it('passes a call that asks nothing straight through', async () => {
    const bridge = new InputBridge(1000);
    expect(await bridge.begin('alice', 'tool', async () => 'done')).toEqual({ kind: 'result', value: 'done' });
    expect(bridge.size).toBe(0);
  });

  it('turns an upstream question into input_required, and the retry answers the same waiting call', async () => {
    const bridge = new InputBridge(1000);
    let calls = 0;
    const first = await bridge.begin('alice', 'tool', async (ask: Ask) => {
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
    expect(bridge.resume('mallory', 'tool', state, { 'elicitation-create-1': { action: 'accept', content: {} } })).toBeUndefined();
    // Its own caller retrying under another name (another tool, call_tool's target): refused, and the call keeps waiting.
    expect(bridge.resume('alice', 'other tool', state, { 'elicitation-create-1': { action: 'accept', content: {} } })).toBeUndefined();
    const second = await bridge.resume('alice', 'tool', state, { 'elicitation-create-1': { action: 'accept', content: { name: 'A' } } })!;
    expect(second).toMatchObject({ kind: 'input_required', result: { inputRequests: { 'roots-list-2': { method: 'roots/list' } } } });
    const third = await bridge.resume('alice', 'tool', second.kind === 'input_required' ? second.result.requestState : '', { 'roots-list-2': { roots: [] } })!;
    expect(third).toEqual({ kind: 'result', value: { answer: { action: 'accept', content: { name: 'A' } }, roots: { roots: [] } } });
    expect(calls).toBe(1);
    expect(bridge.size).toBe(0);
  });

  it('gathers questions asked together into one input_required, and asks again for an unanswered one', async () => {
    const bridge = new InputBridge(1000);
    const first = await bridge.begin('alice', 'tool', async (ask: Ask) =>
      Promise.all([ask({ method: 'roots/list' }), ask({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } })]),
    );
    expect(first.kind === 'input_required' && Object.keys(first.result.inputRequests)).toEqual(['roots-list-1', 'sampling-createMessage-2']);
    const state = first.kind === 'input_required' ? first.result.requestState : '';
    const again = await bridge.resume('alice', 'tool', state, { 'roots-list-1': { roots: [] } })!;
    expect(again.kind === 'input_required' && Object.keys(again.result.inputRequests)).toEqual(['sampling-createMessage-2']);
  });

  it('gives the upstream an error and aborts its call when no retry comes in time', async () => {
    const bridge = new InputBridge(50);
    let upstreamSaw: unknown;
    let aborted = false;
    const first = await bridge.begin('alice', 'tool', async (ask: Ask, signal) => {
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
    expect(bridge.resume('alice', 'tool', first.kind === 'input_required' ? first.result.requestState : '', {})).toBeUndefined();
  });

  it('refuses a requestState it did not issue', () => {
    expect(new InputBridge(1000).resume('alice', 'tool', 'opaque-upstream-state', {})).toBeUndefined();
  });
});

describe('InputBridge.relayOnStream (a 2025-era caller asked on its call stream)', () => {
  const written = () => {
    const messages: StreamRequest[] = [];
    return { messages, write: async (message: StreamRequest) => void messages.push(message) };
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('writes each question under a fresh gateway id and resolves it with the answer its owner posts', async () => {
    const bridge = new InputBridge(1000);
    const stream = written();
    const relay = bridge.relayOnStream('alice', stream.write, 1000);
    const roots = relay.ask({ method: 'roots/list' });
    const sampled = relay.ask({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } });
    await tick();
    const [first, second] = stream.messages;
    expect(first).toEqual({ jsonrpc: '2.0', id: expect.stringMatching(/^gw-ask-[0-9a-f-]{36}$/), method: 'roots/list' });
    expect(second).toMatchObject({ jsonrpc: '2.0', method: 'sampling/createMessage', params: { maxTokens: 1 } });
    expect(first!.id).not.toBe(second!.id);
    expect(bridge.waitingOnStreams).toBe(2);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: second!.id, result: { role: 'assistant', content: { type: 'text', text: 'x' } } })).toBe(true);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: first!.id, result: { roots: [] } })).toBe(true);
    expect(await roots).toEqual({ roots: [] });
    expect(await sampled).toMatchObject({ role: 'assistant' });
    expect(bridge.waitingOnStreams).toBe(0);
    // Answered once: again is unknown.
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: first!.id, result: { roots: [] } })).toBe(false);
  });

  it("refuses another owner's answer, an id never issued and a malformed response, and the question keeps waiting", async () => {
    const bridge = new InputBridge(1000);
    const stream = written();
    const asked = bridge.relayOnStream('alice', stream.write, 1000).ask({ method: 'roots/list' });
    await tick();
    const id = stream.messages[0]!.id;
    expect(bridge.answer('mallory', { jsonrpc: '2.0', id, result: { roots: [{ uri: 'file:///evil' }] } })).toBe(false);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: 'gw-ask-00000000-0000-0000-0000-000000000000', result: {} })).toBe(false);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: 1, result: {} })).toBe(false);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id, result: 'not an object' })).toBe(false);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id, error: { code: 'x', message: 'no' } })).toBe(false);
    expect(bridge.waitingOnStreams).toBe(1);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id, result: { roots: [] } })).toBe(true);
    expect(await asked).toEqual({ roots: [] });
  });

  it("hands the caller's JSON-RPC error to the upstream with its code", async () => {
    const bridge = new InputBridge(1000);
    const stream = written();
    const asked = bridge.relayOnStream('alice', stream.write, 1000).ask({ method: 'sampling/createMessage' });
    await tick();
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: stream.messages[0]!.id, error: { code: -32601, message: 'Method not found' } })).toBe(true);
    await expect(asked).rejects.toMatchObject({ code: -32601 });
  });

  it('gives a question up after timeoutMs, when the call ends, when the stream cannot be written, and at shutdown', async () => {
    const bridge = new InputBridge(1000);
    const stream = written();
    const timed = bridge.relayOnStream('alice', stream.write, 30).ask({ method: 'roots/list' });
    await expect(timed).rejects.toThrow(/no answer within 30 ms/);
    expect(bridge.answer('alice', { jsonrpc: '2.0', id: stream.messages[0]!.id, result: { roots: [] } })).toBe(false);

    const relay = bridge.relayOnStream('alice', stream.write, 1000);
    const ended = relay.ask({ method: 'roots/list' });
    relay.close('the call is over');
    await expect(ended).rejects.toBeInstanceOf(BridgeClosedError);
    await expect(relay.ask({ method: 'roots/list' })).rejects.toThrow(/the call is over/);

    const broken = bridge.relayOnStream('alice', async () => Promise.reject(new Error('socket closed')), 1000).ask({ method: 'roots/list' });
    await expect(broken).rejects.toThrow(/could not be written \(socket closed\)/);

    const open = bridge.relayOnStream('alice', stream.write, 1000).ask({ method: 'roots/list' });
    bridge.close();
    await expect(open).rejects.toThrow(/shutting down/);
    expect(bridge.waitingOnStreams).toBe(0);
  });
});
