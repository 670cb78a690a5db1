/**
 * How a forwarded request learns that its caller gave up: an AbortSignal (the SDK path's own, a 2025-era
 * tracker's), or a {@link Cancellation} when the gateway owns the request (the fast path). The upstream
 * hop, the forwarding step and the 2025-era cancellation tracker read either through this one shape.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A request's cancellation, owned by the code that answers it: `abort(reason)` once, listeners called
 * once each. Why not an AbortController per request: measured on Node 20, building one and its signal
 * (an EventTarget with private fields, its prototype set after construction) plus one `abort` listener
 * was 1.6-2.5% of the gateway's CPU per tools/call, on a path where nothing is ever aborted. A real
 * AbortSignal that follows this one is made on first use ({@link signal}), for the code that needs one
 * (the SDK client, the input bridge, run_code's sandbox).
 */
export class Cancellation implements CallSignal {
  #aborted = false;
  #reason: unknown;
  #listeners: (() => void)[] | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** An AbortSignal aborted with this (already aborted when this is), made the first time it is asked for. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts, once: the signal (if made), then each listener in the order added. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }

  /** As AbortSignal's: `listener` runs once, on abort (never when added after it). */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#aborted) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.#listeners!.splice(at, 1);
  }
}

/** The AbortSignal of a {@link CallSignal}, for an API that takes only a real one (the SDK client's request options). */
export function abortSignalOf(signal: CallSignal | undefined): AbortSignal | undefined {
  return signal instanceof Cancellation ? signal.signal : (signal as AbortSignal | undefined);
}
