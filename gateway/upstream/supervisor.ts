import type { UpstreamConfig } from '../../config/types.ts';
import { GatewayError } from '../errors.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { runInBackground, type OnBehalfOf } from './forward-scope.ts';

/** The connection to one upstream as last seen, without contacting it. */
export interface UpstreamHealth {
  /** `idle`: never connected yet; `connecting`: first connect; `down`: lost or failing, until a reconnect succeeds. */
  state: 'idle' | 'connecting' | 'up' | 'down';
  /** A (re)connect attempt is running now: callers wait for it rather than fail. */
  attempting: boolean;
  /** Why the last attempt failed or the connection was lost. */
  reason?: string;
  /** When the state last changed (ms since the epoch). */
  since?: number;
  /** Reconnections after a loss (new sessions or new processes). */
  reconnects: number;
}

/**
 * When to (re)connect one upstream. The first connect happens on first use; after a loss (connection
 * refused or reset, the stdio process exited) a reconnect starts at once, then after `restart.minDelayMs`
 * doubled per consecutive failure up to `restart.maxDelayMs`; a failed attempt and a connection that
 * lasted less than `restart.stableAfterMs` both count as failures (a process that dies on start is not
 * respawned in a tight loop), and a longer run starts the count afresh. Attempts run in the
 * background, outside any request (no caller's credential); callers arriving while one runs wait for
 * it, callers arriving between attempts start one at once when the last ended at least
 * `restart.onDemandMinIntervalMs` ago, else fail at once with the last reason; without `onDemand` (a stdio
 * upstream: each attempt spawns a process) they fail at once until the backoff's own attempt, so a process
 * that exits at start is respawned on the backoff's schedule whoever asks (the health probe respawned one
 * every `health.intervalMs`, 2 s, forever: try-out). Every reconnection after a
 * loss is logged and counted (`mcp_upstream_reconnects_total`); it and a first connection after failed
 * attempts are announced to `onReconnect` listeners (the catalogue cache refetches, so /readyz turns ready).
 * A refused credential (401) is not a loss: the next caller tries again with its own.
 */
export class UpstreamSupervisor<T> {
  private pending?: Promise<T>;
  private timer?: NodeJS.Timeout;
  private state: UpstreamHealth['state'] = 'idle';
  private since?: number;
  private upSince = 0;
  private lastError?: GatewayError;
  private blockedUntil = 0;
  /** When the last attempt settled (epoch ms): on-demand attempts are spaced from its end, not its start. */
  private lastSettledAt = 0;
  private failures = 0;
  private everUp = false;
  private reconnects = 0;
  private closed = false;
  private readonly listeners = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();

  constructor(
    private readonly name: string,
    private readonly policy: UpstreamConfig['restart'],
    private readonly connect: (onBehalfOf?: OnBehalfOf) => Promise<T>,
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
    /** Where connections go, as logs may show it (a URL without credentials or query, or a stdio command). */
    private readonly target = name,
    /** Whether a caller between scheduled attempts may start one ahead of the backoff (see the class). */
    private readonly onDemand = true,
    /** Whether its failures go unsaid (a reload's trial connection: client.ts `trial`). */
    private readonly quiet: () => boolean = () => false,
  ) {}

  /**
   * The connection being made, or a new attempt. Between scheduled attempts after a loss, a caller starts
   * one at once when the last attempt ended at least `restart.onDemandMinIntervalMs` ago (one attempt at
   * a time: concurrent callers share it), so service resumes as soon as the upstream is back rather than
   * at the end of the backoff; inside that interval it fails at once with the last reason. Counted from
   * the end: an upstream that accepts connections and never answers holds each attempt for the whole
   * handshake bound, and counted from the start, the next step of the request that waited for one
   * attempt (describe, then the catalogue, then the call) started another, four in a row for one
   * tools/call (robustness try-out). A refused credential blocks for its own interval (see `failed`).
   * Without `onDemand`, no attempt ahead of the scheduled one: the caller fails at once with the last reason.
   */
  connection(onBehalfOf?: OnBehalfOf): Promise<T> {
    if (this.pending) return this.pending;
    if (this.lastError && Date.now() < this.blockedUntil) return Promise.reject(this.lastError);
    if (this.lastError && this.timer !== undefined && (!this.onDemand || Date.now() - this.lastSettledAt < this.policy.onDemandMinIntervalMs))
      return Promise.reject(this.lastError);
    return this.attempt(onBehalfOf);
  }

  /** The connection was lost: schedule a reconnect (at once after a stable run). */
  lost(reason: GatewayError): void {
    if (this.closed || this.state === 'down') return;
    const wasUp = this.state === 'up';
    const stable = wasUp && Date.now() - this.upSince >= this.policy.stableAfterMs;
    if (stable) this.failures = 0;
    this.enter('down', reason);
    if (!this.quiet())
      this.log.warn({ upstream: this.name, target: this.target, reason: reason.message }, `upstream connection lost (${this.target}); reconnecting`);
    this.schedule();
    // A run shorter than stableAfterMs counts as a failure: a process that dies on start backs off.
    if (!stable) this.failures++;
    if (wasUp) for (const listener of this.lostListeners) listener();
  }

  /** Registers a listener for reconnections; returns its removal. */
  onReconnect(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Registers a listener for losses (up, then down); returns its removal. */
  onLost(listener: () => void): () => void {
    this.lostListeners.add(listener);
    return () => void this.lostListeners.delete(listener);
  }

  health(): UpstreamHealth {
    const attempting = this.pending !== undefined;
    return {
      state: attempting && this.state !== 'down' ? 'connecting' : this.state,
      attempting,
      reason: this.lastError?.message,
      since: this.since,
      reconnects: this.reconnects,
    };
  }

  /** Stops reconnecting; resolves once an attempt under way has settled. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.pending?.catch(() => undefined);
  }

  private attempt(onBehalfOf?: OnBehalfOf): Promise<T> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.connect(onBehalfOf).then(
      (value) => {
        this.pending = undefined;
        this.lastSettledAt = Date.now();
        this.connected();
        return value;
      },
      (error: unknown) => {
        this.pending = undefined;
        this.lastSettledAt = Date.now();
        this.failed(error);
        throw error;
      },
    );
    // Nobody may be awaiting a background attempt: its failure is handled above.
    pending.catch(() => undefined);
    this.pending = pending;
    return pending;
  }

  private connected(): void {
    // Up after being down: lists may have changed (a reconnect), or were never fetched (a first
    // connection after failed attempts, e.g. a gateway started before its upstream): listeners refetch.
    const recovered = this.state === 'down';
    if (this.everUp && this.state !== 'up') {
      this.reconnects++;
      this.metrics.upstreamReconnects.inc({ upstream: this.name });
      this.log.info({ upstream: this.name, downMs: this.since ? Date.now() - this.since : undefined }, 'upstream reconnected');
    }
    this.everUp = true;
    this.upSince = Date.now();
    this.enter('up');
    if (recovered) for (const listener of this.listeners) listener();
  }

  private failed(error: unknown): void {
    if (this.closed) return;
    const reason =
      error instanceof GatewayError ? error : new GatewayError('upstream_unavailable', `upstream ${this.name} is unavailable`, { upstream: this.name });
    if (reason.kind === 'unauthorized') {
      // Reachable, but this credential (or none, in the background) was refused.
      this.lastError = reason;
      this.blockedUntil = Date.now() + Math.max(this.policy.minDelayMs, 1000);
      if (this.state !== 'up') this.enter('idle', reason);
      return;
    }
    this.failures++;
    if (this.state !== 'down' && !this.quiet()) this.sayDown(reason);
    this.enter('down', reason);
    this.schedule();
  }

  /** Sets its gauge and says it is down, once its failures may be said (a reload's trial connection that now serves: client.ts `trial`). */
  sayIfDown(): void {
    this.metrics.upstreamUp.set({ upstream: this.name }, this.state === 'up' ? 1 : 0);
    if (this.state === 'down' && this.lastError) this.sayDown(this.lastError);
  }

  private sayDown(reason: GatewayError): void {
    this.log.warn(
      { upstream: this.name, target: this.target, reason: reason.message },
      `cannot connect to upstream ${this.name} at ${this.target} (${reason.message}); retrying with backoff`,
    );
  }

  private schedule(): void {
    if (this.closed || this.timer !== undefined || this.pending) return;
    const delay = this.failures === 0 ? 0 : Math.min(this.policy.minDelayMs * 2 ** (this.failures - 1), this.policy.maxDelayMs);
    // Even "at once" waits for the current tick: the request that saw the loss answers first.
    this.timer = setTimeout(() => void runInBackground(() => this.attempt()).catch(() => undefined), delay);
    this.timer.unref();
  }

  private enter(state: UpstreamHealth['state'], reason?: GatewayError): void {
    if (state !== this.state) this.since = Date.now();
    this.state = state;
    this.lastError = reason;
    // A reload's trial connection writes no gauge: it shares its upstream's name with the one serving (review: it read 0
    // while a refused reload waited); said when the configuration serves (sayIfDown).
    if (!this.quiet()) this.metrics.upstreamUp.set({ upstream: this.name }, state === 'up' ? 1 : 0);
  }
}
