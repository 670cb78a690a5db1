/**
 * Waiting for what happens in the background by polling a condition against a deadline, never by a
 * fixed sleep: a test waits exactly as long as the machine needs, and a slow machine fails with a
 * message naming what never happened. Nothing here asserts how long anything took (speed goes in bench/).
 */

/**
 * How long a test waits for a gateway process it spawned to start, or to act on a signal or a file
 * change. Loading the gateway takes about 1.3 s of CPU; a 2-core machine running two suites (load
 * average 28) stretched a start past 20 s. A ceiling only: the waits end when the condition holds.
 */
export const PROCESS_BUDGET_MS = 90_000;

export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between probes (default 25 ms). */
  intervalMs?: number;
}

/**
 * Resolves with the first value of `probe` that is not `undefined`, `null` or `false`, probing every
 * `intervalMs`; a probe that throws counts as "not yet". After `timeoutMs` rejects with an error naming
 * `what` and the last error thrown. Deadlines here read `performance.now()`, so a test that fakes `Date`
 * (vi.useFakeTimers({ toFake: ['Date'] })) still waits in real time.
 */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, options: WaitOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const { timeoutMs = 10_000, intervalMs = 25 } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Calls `attempt` until `done` accepts its answer, for what the gateway does in the background
 * (reconnecting after an upstream restart), and returns that answer; an `attempt` that throws fails at
 * once. Fails after `deadlineMs` with the last answer in the message.
 */
export async function eventually<T>(attempt: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 20_000): Promise<T> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (done(value)) return value;
    if (performance.now() > deadline) throw new Error(`still not done after ${deadlineMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
