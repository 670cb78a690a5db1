import { randomUUID } from 'node:crypto';

/**
 * A bridge between a 2025-era upstream that asks its client for input by sending it requests
 * (`sampling/createMessage`, `elicitation/create`, `roots/list`, 2025-11-25 client/*) in the middle of a
 * call, and a 2026-07-28 caller, which gives input in band (spec 2026-07-28 basic/patterns/mrtr): the
 * caller gets an InputRequiredResult naming the upstream's requests, answers them in `inputResponses` of
 * a retry carrying the bridge's `requestState`, and the retry resumes the SAME upstream call, which was
 * left waiting for those answers. The upstream call may ask again (another InputRequiredResult) or finish
 * (the retry's result).
 *
 * State lives here, in memory, for at most `ttlMs` between an InputRequiredResult and its retry: a retry
 * after that (or on another gateway instance) finds no call, and is refused like a forged state. A call is
 * bound to the caller (the credential digest) that started it: another caller cannot resume it.
 */

/** A request the upstream sent its client during a call. */
export interface UpstreamInputRequest {
  method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list';
  params?: Record<string, unknown>;
}

/** How a bridged call stands after a turn: finished, or waiting for the caller's answers. */
export type BridgeOutcome<R> =
  | { kind: 'result'; value: R }
  | { kind: 'input_required'; result: { resultType: 'input_required'; inputRequests: Record<string, UpstreamInputRequest>; requestState: string } };

interface Waiting {
  request: UpstreamInputRequest;
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

interface PendingCall<R> {
  owner: string;
  call: Promise<R>;
  waiting: Map<string, Waiting>;
  next: number;
  /** Wakes the turn awaiting this call when the upstream asks something. */
  wake?: () => void;
  expiry?: NodeJS.Timeout;
  /** Aborts the upstream call (the bridge gave up on it). */
  abort: AbortController;
}

/** The prefix of every requestState the bridge issues (a 2025-era upstream never issues one). */
export const BRIDGE_STATE_PREFIX = 'gw-input:';

/** Thrown to the upstream for a question nobody will answer (expired, the caller gave up). */
export class BridgeClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BridgeClosedError';
  }
}

export class InputBridge {
  private readonly calls = new Map<string, PendingCall<unknown>>();

  /** @param ttlMs - how long a call waits for the caller's retry after an InputRequiredResult. */
  constructor(private readonly ttlMs: number) {}

  /** Calls waiting for a caller's answers (tests, metrics). */
  get size(): number {
    return this.calls.size;
  }

  /**
   * Starts an upstream call for `owner`. `start` receives the upstream-bound abort signal (owned by the
   * bridge: the call outlives the caller's first request) and `ask`, which the upstream client's request
   * handlers call with each input request; `callerSignal` cancels the call while a turn waits on it.
   */
  begin<R>(
    owner: string,
    start: (ask: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>, signal: AbortSignal) => Promise<R>,
    callerSignal?: AbortSignal,
  ): Promise<BridgeOutcome<R>> {
    const pending: PendingCall<R> = { owner, call: undefined as unknown as Promise<R>, waiting: new Map(), next: 1, abort: new AbortController() };
    const ask = (request: UpstreamInputRequest) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const key = `${request.method.replace(/\W+/g, '-')}-${pending.next++}`;
        pending.waiting.set(key, { request, resolve, reject });
        pending.wake?.();
      });
    pending.call = start(ask, pending.abort.signal);
    // Observed by every turn; never an unhandled rejection while no turn is waiting.
    pending.call.catch(() => undefined);
    return this.turn(randomUUID(), pending, callerSignal);
  }

  /**
   * Resumes the call a retry's `requestState` names with its `inputResponses` (key -> the result the
   * caller's client produced). Undefined when the state names no call of this owner (expired, forged,
   * another caller's). Requests the retry does not answer are asked again.
   */
  resume(
    owner: string,
    requestState: string,
    responses: Record<string, unknown> | undefined,
    callerSignal?: AbortSignal,
  ): Promise<BridgeOutcome<unknown>> | undefined {
    const id = requestState.startsWith(BRIDGE_STATE_PREFIX) ? requestState.slice(BRIDGE_STATE_PREFIX.length) : undefined;
    const pending = id === undefined ? undefined : this.calls.get(id);
    if (!pending || pending.owner !== owner) return undefined;
    clearTimeout(pending.expiry);
    this.calls.delete(id!);
    for (const [key, response] of Object.entries(responses ?? {})) {
      const waiting = pending.waiting.get(key);
      if (!waiting || typeof response !== 'object' || response === null) continue;
      pending.waiting.delete(key);
      waiting.resolve(response as Record<string, unknown>);
    }
    return this.turn(id!, pending, callerSignal);
  }

  /** Gives up every waiting call (shutdown). */
  close(): void {
    for (const [id, pending] of this.calls) this.drop(id, pending, 'the gateway is shutting down');
  }

  /** Waits until the call finishes or asks for input (the upstream may send several requests at once: one tick gathers them). */
  private async turn<R>(id: string, pending: PendingCall<R>, callerSignal?: AbortSignal): Promise<BridgeOutcome<R>> {
    const onAbort = () => this.drop(id, pending as PendingCall<unknown>, 'the caller cancelled the request');
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    try {
      const asked = new Promise<'asked'>((resolve) => {
        pending.wake = () => setImmediate(() => resolve('asked'));
        if (pending.waiting.size > 0) pending.wake();
      });
      const outcome = await Promise.race([pending.call.then((value) => ({ value })), asked]);
      if (outcome !== 'asked') return { kind: 'result', value: outcome.value };
      pending.wake = undefined;
      this.calls.set(id, pending as PendingCall<unknown>);
      pending.expiry = setTimeout(() => this.drop(id, pending as PendingCall<unknown>, `no retry within ${this.ttlMs} ms`), this.ttlMs);
      pending.expiry.unref?.();
      const inputRequests = Object.fromEntries([...pending.waiting].map(([key, w]) => [key, w.request]));
      return { kind: 'input_required', result: { resultType: 'input_required', inputRequests, requestState: `${BRIDGE_STATE_PREFIX}${id}` } };
    } finally {
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private drop(id: string, pending: PendingCall<unknown>, why: string): void {
    clearTimeout(pending.expiry);
    this.calls.delete(id);
    for (const waiting of pending.waiting.values()) waiting.reject(new BridgeClosedError(`the gateway's caller will not answer: ${why}`));
    pending.waiting.clear();
    pending.abort.abort(new BridgeClosedError(why));
  }
}
