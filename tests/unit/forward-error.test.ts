/**
 * forwardError (upstream/forwarding.ts) on an upstream's JSON-RPC error for a prompt or tool whose exposed
 * name differs from the upstream's own (several upstreams): the message quotes the exposed name wherever
 * it quoted the own one as a whole name, and only there; the SDK v1 "MCP error N: " prefix is dropped.
 */
import { describe, expect, it } from 'vitest';
import { RelayedUpstreamError } from '../../gateway/errors.ts';
import { forwardError, type ForwardingContext } from '../../gateway/upstream/forwarding.ts';

const d = { request: { envelope: undefined }, caller: { era: 'modern' } } as unknown as ForwardingContext;
const relayed = (message: string) =>
  forwardError(new RelayedUpstreamError('notes', -32602, message), 'notes', {
    d,
    method: 'prompts/get',
    name: { own: 'summarize', exposed: 'notes__summarize' },
  });

describe('forwardError with the forwarded name', () => {
  it.each([
    ['MCP error -32602: Prompt summarize not found', 'Prompt notes__summarize not found'],
    ['Invalid arguments for prompt summarize: style: Required', 'Invalid arguments for prompt notes__summarize: style: Required'],
    // A plain word is prose too: renamed after "prompt" and in quotes only ("the search index": operator try-out).
    ['"summarize" takes a style. See summarize.', '"notes__summarize" takes a style. See summarize.'],
    ['Unknown prompt: summarize (we summarize weekly)', 'Unknown prompt: notes__summarize (we summarize weekly)'],
    ['Try summarize_all, summarize.v2 or re-summarize', 'Try summarize_all, summarize.v2 or re-summarize'],
  ])('%s -> %s', (message, expected) => {
    const error = relayed(message);
    expect(error.message).toBe(expected);
    expect(error).toMatchObject({ code: -32602, data: { kind: 'upstream_rejected', upstream: 'notes' } });
  });

  it('renames a tool named with a plain word after "tool" and in quotes, and a task id wherever it stands', () => {
    const of = (method: string, own: string, exposed: string, message: string) =>
      forwardError(new RelayedUpstreamError('notes', -32602, message), 'notes', { d, method, name: { own, exposed } }).message;
    expect(of('tools/call', 'search', 'local__search', 'Unknown tool: search; the search index is rebuilding')).toBe(
      'Unknown tool: local__search; the search index is rebuilding',
    );
    expect(of('tasks/get', 'abcdefghij', 'gw-task-1', 'task abcdefghij expired')).toBe('task gw-task-1 expired');
  });

  it('leaves the message alone when the names are the same (one upstream)', () => {
    const error = forwardError(new RelayedUpstreamError('notes', -32602, 'Prompt summarize not found'), 'notes', {
      d,
      method: 'prompts/get',
      name: { own: 'summarize', exposed: 'summarize' },
    });
    expect(error.message).toBe('Prompt summarize not found');
  });
});
