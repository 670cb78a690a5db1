/**
 * Lines an upstream can repeat at will (obs/log.ts): `coalesced` tells the first event at once and the rest of a
 * burst in one line at the end of each interval, with their count; `untold` names each item of a repeated warning
 * once. An upstream's 20,000 list_changed made 20,000 lines, and a duplicated tool name a line per refresh (try-out).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { coalesced, untold } from '../../gateway/obs/log.ts';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

it('coalesced: the first at once, a burst as one count per interval, and the next after a quiet interval at once', () => {
  const told: number[] = [];
  const event = coalesced(1000, (count) => told.push(count));
  for (let i = 0; i < 20_000; i++) event();
  expect(told).toEqual([1]);
  vi.advanceTimersByTime(1000);
  expect(told).toEqual([1, 19_999]);
  event();
  event();
  vi.advanceTimersByTime(999);
  expect(told).toEqual([1, 19_999]);
  vi.advanceTimersByTime(1);
  expect(told).toEqual([1, 19_999, 2]);
  // A quiet interval ends the burst: nothing to tell, and the next event is told at once.
  vi.advanceTimersByTime(1000);
  expect(told).toEqual([1, 19_999, 2]);
  event();
  expect(told).toEqual([1, 19_999, 2, 1]);
});

it('untold: each item once, the oldest forgotten past the bound', () => {
  const fresh = untold(2);
  expect(fresh(['a', 'b'])).toEqual(['a', 'b']);
  expect(fresh(['a', 'b'])).toEqual([]);
  expect(fresh(['b', 'c'])).toEqual(['c']);
  // `a` was the oldest of three: forgotten, so told again.
  expect(fresh(['a'])).toEqual(['a']);
});
