/**
 * A shared store's outage in the log (obs/log.ts outageLog, used by the cache, rate limit and pin stores): one
 * warning in 10 s with what it stood for, one line when the store answers again, and the next outage told at once.
 * A Redis down for 30 s made 60 warnings and no line when it came back (SRE try-out).
 */
import pino from 'pino';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { FAILURE_LOG_INTERVAL_MS, outageLog } from '../../gateway/obs/log.ts';
import { LogCapture } from '../helpers/log-capture.ts';

beforeEach(() => void vi.useFakeTimers({ toFake: ['Date', 'performance'] }));
afterEach(() => void vi.useRealTimers());

it('warns once per interval with notLogged, says when the store answers again, and tells the next outage at once', () => {
  const lines = new LogCapture();
  const outage = outageLog(pino({ level: 'info' }, lines), { failed: 'store failed', recovered: 'store answering again' });
  outage.recovered();
  expect(lines.records()).toHaveLength(0);
  for (let second = 0; second < 30; second++) {
    outage.failed({ op: 'get' });
    outage.failed({ op: 'set' });
    vi.advanceTimersByTime(1000);
  }
  const warnings = lines.records('store failed');
  expect(warnings).toHaveLength(Math.ceil(30_000 / FAILURE_LOG_INTERVAL_MS));
  expect(warnings[0]).not.toHaveProperty('notLogged');
  expect(warnings[1]).toMatchObject({ op: 'get', notLogged: 19 });
  outage.recovered({ cache: 'scopes' });
  outage.recovered({ cache: 'scopes' });
  expect(lines.records('store answering again')).toEqual([expect.objectContaining({ cache: 'scopes', downMs: 30_000, failures: 60, level: 30 })]);
  outage.failed({ op: 'get' });
  expect(lines.records('store failed')).toHaveLength(warnings.length + 1);
});
