/**
 * A steady stream of calls for what must not interrupt serving (a live reload): one call started every
 * `intervalMs` on a fixed schedule (open loop: a slow answer does not delay the next start), each
 * recorded with its start, latency and outcome. Tests assert outcomes only; bench/reload-names.ts
 * reports the latencies.
 */

export interface PacedCall {
  /** Sequence number, from 0. */
  index: number;
  /** What was called (the test's label: a name and an endpoint). */
  label: string;
  /** ms since the stream started. */
  startedAt: number;
  latencyMs: number;
  /** undefined when the call succeeded; else what the caller was told. */
  error?: string;
}

export interface PacedStream {
  /** Resolves with every call once the last one started has answered. */
  stop(): Promise<PacedCall[]>;
  /** ms since the stream started (to mark events such as a reload on the same clock). */
  now(): number;
}

/**
 * Starts calling: call `i` is `calls[i % calls.length]`, started at `i * intervalMs`. A `call` resolves
 * with an error text for a failed call (a JSON-RPC error, an isError result) or undefined; a throw is
 * recorded as its message.
 */
export function pacedCalls(intervalMs: number, calls: readonly { label: string; call: () => Promise<string | undefined> }[]): PacedStream {
  const origin = performance.now();
  const done: Promise<PacedCall>[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const start = (index: number) => {
    if (stopped) return;
    const { label, call } = calls[index % calls.length]!;
    const startedAt = performance.now() - origin;
    done.push(
      call().then(
        (error) => ({ index, label, startedAt, latencyMs: performance.now() - origin - startedAt, ...(error ? { error } : {}) }),
        (thrown: unknown) => ({ index, label, startedAt, latencyMs: performance.now() - origin - startedAt, error: (thrown as Error).message }),
      ),
    );
    // The next start on the schedule, whatever this one's latency.
    timer = setTimeout(() => start(index + 1), Math.max(0, (index + 1) * intervalMs - (performance.now() - origin)));
  };
  start(0);
  return {
    now: () => performance.now() - origin,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      return Promise.all(done);
    },
  };
}
