/**
 * The fast path's own cancellation (gateway/wire/cancellation.ts): aborted once, listeners run once in
 * order and never after removal or when added late, and the AbortSignal made on demand follows it
 * whether asked for before or after the abort. Pure module (the end-to-end path is
 * tests/e2e/gateway/caller-abort.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { Cancellation, abortSignalOf } from '../../gateway/wire/cancellation.ts';

describe('Cancellation', () => {
  it('aborts once with the first reason, running each listener once in the order added, and none removed', () => {
    const cancellation = new Cancellation();
    const ran: string[] = [];
    const removed = () => ran.push('removed');
    cancellation.addEventListener('abort', () => ran.push('first'));
    cancellation.addEventListener('abort', removed);
    cancellation.addEventListener('abort', () => ran.push('second'));
    cancellation.removeEventListener('abort', removed);
    expect(cancellation.aborted).toBe(false);
    const reason = new Error('the caller closed the connection');
    cancellation.abort(reason);
    cancellation.abort(new Error('later'));
    expect(ran).toEqual(['first', 'second']);
    expect(cancellation.aborted).toBe(true);
    expect(cancellation.reason).toBe(reason);
    cancellation.addEventListener('abort', () => ran.push('late'));
    expect(ran).toEqual(['first', 'second']);
  });

  it('makes an AbortSignal only when asked, aborted with the same reason before or after', () => {
    const early = new Cancellation();
    const signal = early.signal;
    expect(early.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    early.abort('gone');
    expect(seen).toEqual(['gone']);

    const late = new Cancellation();
    late.abort('gone too');
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe('gone too');
  });

  it('hands an API that takes only an AbortSignal a real one: its own, or the signal given', () => {
    const cancellation = new Cancellation();
    expect(abortSignalOf(cancellation)).toBeInstanceOf(AbortSignal);
    expect(abortSignalOf(cancellation)).toBe(cancellation.signal);
    const signal = new AbortController().signal;
    expect(abortSignalOf(signal)).toBe(signal);
    expect(abortSignalOf(undefined)).toBeUndefined();
  });
});
