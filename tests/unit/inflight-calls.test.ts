/**
 * The registry a 2025-era `notifications/cancelled` (its own POST) finds its call in: keyed by credential
 * digest and the caller's request id, never cancelling an ambiguous match, bounded, released per call.
 * Pure module, no socket (the end-to-end path is tests/e2e/compat/protocol-edge-cases.test.ts).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { InflightCalls } from '../../gateway/upstream/inflight-calls.ts';
import { LogCapture } from '../helpers/log-capture.ts';

const registry = (max?: number) => {
  const logs = new LogCapture();
  return { calls: new InflightCalls(pino({ level: 'debug' }, logs), max), logs };
};
const live = () => new AbortController().signal;

describe('InflightCalls', () => {
  it('aborts the one call under (digest, id), with the reason, and nothing under another digest or id type', () => {
    const { calls } = registry();
    const mine = calls.track('digest-a', 1, live());
    const otherCredential = calls.track('digest-b', 1, live());
    const stringId = calls.track('digest-a', '1', live());
    expect(calls.cancel('digest-a', 1, 'user pressed stop')).toBe('cancelled');
    expect(mine.signal.aborted).toBe(true);
    expect((mine.signal.reason as Error).message).toContain('user pressed stop');
    expect(otherCredential.signal.aborted).toBe(false);
    expect(stringId.signal.aborted).toBe(false);
    expect(calls.cancel('digest-a', 2)).toBe('unknown');
  });

  it('cancels nothing when several calls in flight share the digest and id (clients sharing a credential)', () => {
    const { calls, logs } = registry();
    const first = calls.track('digest-a', 7, live());
    const second = calls.track('digest-a', 7, live());
    expect(calls.cancel('digest-a', 7)).toBe('ambiguous');
    expect([first.signal.aborted, second.signal.aborted]).toEqual([false, false]);
    expect(logs.records('several calls in flight')).toHaveLength(1);
    second.release();
    expect(calls.cancel('digest-a', 7)).toBe('cancelled');
    expect(first.signal.aborted).toBe(true);
  });

  it('follows the caller own signal, and forgets a call once released', () => {
    const { calls } = registry();
    const parent = new AbortController();
    const call = calls.track('digest-a', 3, parent.signal);
    parent.abort(new Error('stream closed'));
    expect(call.signal.aborted).toBe(true);
    call.release();
    call.release();
    expect(calls.count).toBe(0);
    expect(calls.cancel('digest-a', 3)).toBe('unknown');
  });

  it("aborts the caller's own controller when the tracker owns it: no second signal, and nothing once released", () => {
    const { calls } = registry();
    const owned = new AbortController();
    const call = calls.track('digest-a', 5, owned.signal, (reason) => owned.abort(reason));
    expect(call.signal).toBe(owned.signal);
    expect(calls.cancel('digest-a', 5, 'stop')).toBe('cancelled');
    expect((owned.signal.reason as Error).message).toContain('stop');
    call.release();
    const later = new AbortController();
    calls.track('digest-a', 6, later.signal, (reason) => later.abort(reason)).release();
    expect(calls.cancel('digest-a', 6)).toBe('unknown');
    expect(later.signal.aborted).toBe(false);
    expect(calls.count).toBe(0);
  });

  it('stays bounded: past maxEntries a call still gets its own signal but cannot be cancelled by notification', () => {
    const { calls, logs } = registry(2);
    const tracked = [calls.track('d', 1, live()), calls.track('d', 2, live())];
    const parent = live();
    const overflow = calls.track('d', 3, parent);
    expect(overflow.signal).toBe(parent);
    expect(calls.count).toBe(2);
    expect(calls.cancel('d', 3)).toBe('unknown');
    expect(logs.records('too many calls in flight')).toHaveLength(1);
    tracked[0]!.release();
    expect(calls.track('d', 4, live()).signal).not.toBe(parent);
  });
});
