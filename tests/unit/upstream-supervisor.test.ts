/**
 * When the gateway (re)connects an upstream: first use, then after a loss at once (after a stable run)
 * or with doubling backoff, callers failing fast between attempts. Driven with fake timers: the test
 * checks the schedule's logic, not how fast anything runs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { GatewayError } from '../../gateway/errors.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { UpstreamSupervisor } from '../../gateway/upstream/supervisor.ts';

// On-demand attempts out of the way here (their own tests below set a short interval).
const POLICY = { minDelayMs: 200, maxDelayMs: 1000, stableAfterMs: 10_000, onDemandMinIntervalMs: 60_000 };
const down = () => new GatewayError('upstream_unavailable', 'upstream x is unreachable (connecting)');

let outcomes: ('fail' | 'ok')[];
let attempts: number;
let supervisor: UpstreamSupervisor<string>;
let reconnected: number;
beforeEach(() => {
  vi.useFakeTimers();
  outcomes = [];
  attempts = 0;
  reconnected = 0;
  const connect = async () => {
    attempts++;
    if ((outcomes.shift() ?? 'ok') === 'fail') throw down();
    return `connection ${attempts}`;
  };
  supervisor = new UpstreamSupervisor('x', POLICY, connect, createMetrics(), pino({ level: 'silent' }));
  supervisor.onReconnect(() => reconnected++);
});
afterEach(async () => {
  await supervisor.close();
  vi.useRealTimers();
});

describe('UpstreamSupervisor', () => {
  it('retries a failing first connect after 200, 400, 800 then 1000 ms, failing callers fast in between', async () => {
    outcomes = ['fail', 'fail', 'fail', 'fail', 'fail'];
    await expect(supervisor.connection()).rejects.toThrow('unreachable');
    for (const delay of [200, 400, 800, 1000]) {
      const before = attempts;
      await vi.advanceTimersByTimeAsync(delay - 1);
      await expect(supervisor.connection()).rejects.toThrow('unreachable');
      expect(attempts).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(attempts).toBe(before + 1);
    }
    expect(supervisor.health()).toMatchObject({ state: 'down', reason: expect.stringContaining('unreachable') });
    await vi.advanceTimersByTimeAsync(1000);
    expect(attempts).toBe(6);
    expect(supervisor.health().state).toBe('up');
    expect(await supervisor.connection()).toBe('connection 7');
  });

  it('reconnects at once after a loss that follows a stable run, and announces it', async () => {
    expect(await supervisor.connection()).toBe('connection 1');
    await vi.advanceTimersByTimeAsync(POLICY.stableAfterMs);
    supervisor.lost(down());
    expect(supervisor.health().state).toBe('down');
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts).toBe(2);
    expect(supervisor.health()).toMatchObject({ state: 'up', reconnects: 1 });
    expect(reconnected).toBe(1);
  });

  it('backs off a process that keeps dying right after it starts', async () => {
    await supervisor.connection();
    outcomes = ['fail'];
    supervisor.lost(down());
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts).toBe(2); // at once, and failed
    await vi.advanceTimersByTimeAsync(399);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(3);
    expect(supervisor.health().state).toBe('up');
    supervisor.lost(down()); // up for less than stableAfterMs: no fresh start
    await vi.advanceTimersByTimeAsync(399);
    expect(attempts).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(4);
  });

  it('treats a refused credential as no loss: no background retries, the next caller tries again', async () => {
    let refusals = 0;
    const connect = async () => {
      refusals++;
      throw new GatewayError('unauthorized', 'upstream x refused the credential (HTTP 401)');
    };
    const guarded = new UpstreamSupervisor('x', POLICY, connect, createMetrics(), pino({ level: 'silent' }));
    await expect(guarded.connection()).rejects.toThrow('401');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(refusals).toBe(1);
    expect(guarded.health().state).toBe('idle');
    await expect(guarded.connection()).rejects.toThrow('401');
    expect(refusals).toBe(2);
    await guarded.close();
  });
});

describe('UpstreamSupervisor: on-demand reconnects', () => {
  const ON_DEMAND = { minDelayMs: 5_000, maxDelayMs: 30_000, stableAfterMs: 10_000, onDemandMinIntervalMs: 250 };

  it('a caller between scheduled attempts starts one at once when the last is 250 ms old; concurrent callers share it', async () => {
    const fast = new UpstreamSupervisor(
      'x',
      ON_DEMAND,
      async () => {
        attempts++;
        if ((outcomes.shift() ?? 'ok') === 'fail') throw down();
        return `connection ${attempts}`;
      },
      createMetrics(),
      pino({ level: 'silent' }),
    );
    outcomes = ['fail', 'fail'];
    await expect(fast.connection()).rejects.toThrow('unreachable');
    expect(attempts).toBe(1);
    // The backoff would wait 5 s; inside the minimum interval a caller fails fast without an attempt.
    await vi.advanceTimersByTimeAsync(249);
    await expect(fast.connection()).rejects.toThrow('unreachable');
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(fast.connection()).rejects.toThrow('unreachable');
    expect(attempts).toBe(2);
    // The upstream is back: the first caller after the interval connects, and the others wait for that attempt.
    await vi.advanceTimersByTimeAsync(250);
    const callers = await Promise.all([fast.connection(), fast.connection(), fast.connection()]);
    expect(callers).toEqual(['connection 3', 'connection 3', 'connection 3']);
    expect(attempts).toBe(3);
    expect(fast.health().state).toBe('up');
    await fast.close();
  });

  it('spaces on-demand attempts from the end of the last one: a request that waited out a silent handshake does not start another', async () => {
    // An upstream that accepts connections and never answers: each attempt lasts the whole handshake bound.
    const HANDSHAKE_MS = 8_000;
    const silent = new UpstreamSupervisor(
      'x',
      ON_DEMAND,
      () =>
        new Promise<string>((_, reject) => {
          attempts++;
          setTimeout(() => reject(down()), HANDSHAKE_MS);
        }),
      createMetrics(),
      pino({ level: 'silent' }),
    );
    const first = expect(silent.connection()).rejects.toThrow('unreachable');
    await vi.advanceTimersByTimeAsync(HANDSHAKE_MS);
    await first;
    // The request's next step (the catalogue, then the call) right after: the last reason, no second 8 s attempt.
    const next = silent.connection();
    next.catch(() => undefined);
    expect(attempts).toBe(1);
    await expect(next).rejects.toThrow('unreachable');
    // A later request tries again.
    await vi.advanceTimersByTimeAsync(ON_DEMAND.onDemandMinIntervalMs);
    void silent.connection().catch(() => undefined);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(HANDSHAKE_MS);
    await silent.close();
  });
});

describe('UpstreamSupervisor: without on-demand attempts (a stdio upstream)', () => {
  it('fails callers (the health probe among them) with the last reason between scheduled attempts: only the backoff respawns', async () => {
    const spawning = new UpstreamSupervisor(
      'x',
      { minDelayMs: 200, maxDelayMs: 800, stableAfterMs: 10_000, onDemandMinIntervalMs: 0 },
      async () => {
        attempts++;
        if ((outcomes.shift() ?? 'ok') === 'fail') throw down();
        return `connection ${attempts}`;
      },
      createMetrics(),
      pino({ level: 'silent' }),
      'x',
      false,
    );
    outcomes = ['fail', 'fail', 'fail', 'fail'];
    await expect(spawning.connection()).rejects.toThrow('unreachable');
    for (const delay of [200, 400, 800]) {
      const before = attempts;
      // A caller every 50 ms: before, each one past onDemandMinIntervalMs started an attempt.
      for (let waited = 50; waited < delay; waited += 50) {
        await vi.advanceTimersByTimeAsync(50);
        await expect(spawning.connection()).rejects.toThrow('unreachable');
      }
      expect(attempts).toBe(before);
      await vi.advanceTimersByTimeAsync(delay % 50 || 50);
      expect(attempts).toBe(before + 1);
    }
    await vi.advanceTimersByTimeAsync(800);
    expect(attempts).toBe(5);
    expect(spawning.health().state).toBe('up');
    await spawning.close();
  });
});
