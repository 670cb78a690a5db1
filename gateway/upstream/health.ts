import { SdkError, SdkErrorCode, SdkHttpError, type Client, type FetchLike } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../../config/types.ts';
import { GatewayError } from '../errors.ts';
import { pingRequest } from '../wire/client-codec.ts';
import { runInBackground } from './forward-scope.ts';
import type { UpstreamHealth } from './supervisor.ts';

/** A server, or a proxy in front of it, that cannot serve now (RFC 9110 §15.6.3-15.6.5): an answer, but no live upstream. */
const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Any HTTP answer within this proves the upstream alive (a broken stream was that stream's problem). */
const LIVENESS_TIMEOUT_MS = 2000;

/** What the probe reads of the upstream it watches, and how it reports a loss. */
export interface ProbedUpstream {
  readonly config: UpstreamConfig;
  /** How HTTP requests reach the upstream (the SDK client's fetch: network or in process). */
  readonly fetchUpstream: FetchLike;
  /** The supervisor's view of the connection, and a reconnect attempt (upstream/supervisor.ts). */
  health(): UpstreamHealth;
  reconnect(): Promise<unknown>;
  /** The one client of a stdio upstream, while connected (pinged over its pipe). */
  stdioClient(): Client | undefined;
  /** Whether requests to it are in flight now and it was heard from (any output, or the requests' start) within its timeoutMs. */
  busy(): boolean;
  /** The connection is gone: drop it and let the supervisor reconnect. */
  lost(reason: GatewayError): void;
}

/**
 * Whether an upstream is alive, asked outside any request. Every `health.intervalMs` a probe: up, HTTP
 * upstreams get a `ping` POST of their own (any HTTP answer proves the server alive, whatever the
 * session or era, except a success in a media type no MCP server answers in: a 2xx that is neither JSON
 * nor an event stream is a web page or a proxy's at the upstream's URL, not the server, and every call
 * fails on it: lost on the second such answer in a row, as silence is; operator try-out; and a 502, 503 or
 * 504, RFC 9110's statuses of a server or a proxy in front of it that cannot serve now: every call was
 * answered "failed with HTTP 503" while /readyz said ready and mcp_upstream_up 1, SRE try-out), stdio ones a `ping` request; a refused or reset connection marks the upstream lost
 * at once, two probes in a row without an answer within `health.timeoutMs` too (a stdio server's silent probes count only
 * while no request of the gateway is in flight, or it has been silent longer than its `timeoutMs`: a busy
 * one answers its ping after the call). Down: a reconnect attempt, subject to
 * `restart.onDemandMinIntervalMs` (the supervisor's backoff alone can wait up to `restart.maxDelayMs`); a
 * stdio upstream's is left to the backoff (a respawn per probe ignored it: supervisor.ts `onDemand`).
 * Never contacts an upstream that was never used (`idle`): the first connection
 * is on first use. Between probes, {@link checkAlive} answers a broken response stream at once.
 */
export class HealthProbe {
  private readonly timer?: NodeJS.Timeout;
  private probing = false;
  /** Probes in a row that got no answer within `health.timeoutMs`. */
  private silentProbes = 0;
  private checking?: Promise<void>;
  private stopped = false;

  constructor(private readonly upstream: ProbedUpstream) {
    const { intervalMs } = upstream.config.health;
    if (intervalMs > 0) {
      this.timer = setInterval(() => void runInBackground(() => this.probe()), intervalMs);
      this.timer.unref();
    }
  }

  /** Stops probing (the client is closing). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /**
   * After a broken HTTP response stream (the SDK reports it on `onerror`, or the hop's
   * UpstreamStreamBroken; the request itself would only fail at `timeoutMs`): when the upstream no longer
   * accepts connections, the connection counts as lost, which fails the calls in flight at once and
   * starts the reconnect. One check at a time.
   */
  checkAlive(): Promise<void> {
    this.checking ??= (async () => {
      try {
        await this.pingHttp(LIVENESS_TIMEOUT_MS, 'gateway-liveness');
      } catch (error) {
        if (isConnectionLoss(error)) this.lose('a response stream broke and it refuses connections');
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  private async probe(): Promise<void> {
    if (this.stopped || this.probing) return;
    const health = this.upstream.health();
    if (health.attempting || health.state === 'idle' || health.state === 'connecting') return;
    this.probing = true;
    try {
      if (health.state === 'down') {
        await this.upstream.reconnect().catch(() => undefined);
        return;
      }
      const { outcome, why } = await this.ping();
      // A stdio server answers one message after another on its one pipe: busy with a call (a long
      // computation, a large result being written), its ping waits behind it. Its process is there (a dead
      // one closes the pipe: lost); killing it would fail the call. Busy, but silent (no output, nor a new
      // busy spell) for longer than timeoutMs, it is hung whatever traffic keeps arriving: counted.
      if (outcome === 'silent' && this.upstream.config.command !== undefined && this.upstream.busy()) return;
      if (outcome === 'alive') this.silentProbes = 0;
      // A web page in place of the server (`why` set) is taken on the second in a row, like silence (one odd answer is no outage: review).
      else if ((outcome === 'lost' && why === undefined) || ++this.silentProbes >= 2) {
        this.silentProbes = 0;
        this.lose(
          outcome === 'lost' ? (why ?? 'it refuses connections') : `it did not answer two health probes within ${this.upstream.config.health.timeoutMs} ms`,
        );
      }
    } finally {
      this.probing = false;
    }
  }

  private async ping(): Promise<{ outcome: 'alive' | 'lost' | 'silent'; why?: string }> {
    const timeoutMs = this.upstream.config.health.timeoutMs;
    try {
      if (this.upstream.config.command !== undefined) {
        // A JSON-RPC error answer (a server without ping) is an answer too.
        await this.upstream
          .stdioClient()
          ?.ping({ timeout: timeoutMs })
          .catch((error: unknown) => {
            if (error instanceof SdkError && (error.code === SdkErrorCode.RequestTimeout || isConnectionLoss(error))) throw error;
          });
        return { outcome: 'alive' };
      }
      const notMcp = await this.pingHttp(timeoutMs, 'gateway-health');
      return notMcp ? { outcome: 'lost', why: notMcp } : { outcome: 'alive' };
    } catch (error) {
      return { outcome: isConnectionLoss(error) ? 'lost' : 'silent' };
    }
  }

  /**
   * A `ping` POST of the probe's own: resolves on any HTTP answer, rejects when none comes within `timeoutMs`.
   * Resolves with why the answer is no serving MCP server's (a 2xx neither JSON nor an event stream; a 502, 503
   * or 504, RFC 9110 §15.6.3-15.6.5), else undefined.
   */
  private async pingHttp(timeoutMs: number, id: string): Promise<string | undefined> {
    const { config, fetchUpstream } = this.upstream;
    const response = await fetchUpstream(config.url!, {
      method: 'POST',
      headers: { ...config.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: pingRequest(id),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    if (UNAVAILABLE_STATUSES.has(response.status)) return `it answers HTTP ${response.status} to its health probe`;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    // No type (an empty answer) is not told apart from a terse server's; any JSON one (`+json` too) is an answer.
    if (!response.ok || type === '' || type === 'text/event-stream' || type === 'application/json' || type.endsWith('+json')) return undefined;
    return `it answers HTTP ${response.status} with ${type}, not MCP: is upstreams[].url the MCP endpoint?`;
  }

  /** Reports the loss, `why` in parentheses after "went away". */
  private lose(why: string): void {
    this.upstream.lost(
      new GatewayError('upstream_unavailable', `upstream ${this.upstream.config.name} went away (${why})`, { upstream: this.upstream.config.name }),
    );
  }
}

const LOST_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * Whether a failed request means the connection is gone (not that this one request failed): a refused
 * or reset connection, a closed transport (the stdio process exited). Timeouts, HTTP statuses and
 * JSON-RPC errors are about the request and leave the connection alone.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof SdkHttpError) return false;
  if (error instanceof SdkError)
    return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed;
  if (!(error instanceof Error)) return false;
  if (error.message === 'Not connected') return true;
  const cause = (error as Error & { cause?: { code?: unknown } }).cause;
  return error.name === 'TypeError' && typeof cause?.code === 'string' && LOST_CONNECTION_CODES.has(cause.code);
}
