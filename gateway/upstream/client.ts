import { forwardedHeaders, type Credential } from '../auth/credentials.ts';
import { callToolResultProblems } from '../wire/client-codec.ts';
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type FetchLike,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import { abortSignalOf } from '../wire/cancellation.ts';
import type { GatewayConfig, UpstreamConfig } from '../../config/types.ts';
import { GatewayError, classifyUpstreamFailure, deliveryOf, markDelivery, upstreamFailureError, type UpstreamFailure } from '../errors.ts';
import { coalesced, loggableUrl, type Logger } from '../obs/log.ts';
import { configuredSecrets, credentialSecrets, withoutSecrets, withoutSecretsDeep } from '../obs/redact.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { forwardScope, runInBackground, type ForwardScope, type OnBehalfOf } from './forward-scope.ts';
import { injectTraceHeaders } from '../obs/tracing.ts';
import { UpstreamStreamBroken } from './http-hop.ts';
import { HopRouting } from './hop-routing.ts';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { exitOf, lastHeardFrom, STDIO_LINE_FACTOR, stdioTransport } from './stdio.ts';
import { UpstreamSupervisor, type UpstreamHealth } from './supervisor.ts';
import { HealthProbe, isConnectionLoss } from './health.ts';
import { ResourceWatch } from './resource-watch.ts';
import { SessionPool } from './session-pool.ts';
import { sameConnection } from '../reload/plan.ts';
import {
  GATEWAY_CLIENT,
  LIST_ITEMS,
  TASKS_EXTENSION,
  type ForwardMethod,
  type ForwardOptions,
  type ListMethod,
  type ListResult,
  type TaskForms,
  type UpstreamInfo,
} from './types.ts';

/** The shortest configured secret masked in a successful result ({@link UpstreamClient.send}): 16, a credential's length, not a word's. */
const RESULT_SECRET_MIN_CHARS = 16;
/** How long closing an HTTP upstream waits for a connection attempt under way (ms); a stdio one's is waited for whole. */
const HTTP_CONNECT_CLOSE_WAIT_MS = 1000;

/** Any JSON object: the result schema of the task methods, which the SDK client has no runtime for. */
const ANY_RESULT = z.looseObject({});
/** What an upstream without configured secrets masks: one function for every send, none made per call. */
const NO_SECRET_LIST: readonly string[] = Object.freeze([]);
/**
 * A 2025-era upstream's result that carries `resultType: input_required` or `task`: those are 2026-07-28
 * fields (basic/patterns/mrtr, SEP-2663), no result of a 2025 revision has them, and relayed as they are they
 * asked callers for input (sampling, an elicitation form) their capabilities never covered and sent the answers
 * to the upstream (adversarial-upstream try-out). Refused as an invalid result; `complete` is dropped later.
 * @throws SdkError INVALID_RESULT (an `upstream_error`).
 */
function refuseForeignResultType(result: unknown): void {
  const resultType = (result as { resultType?: unknown } | undefined)?.resultType;
  if (resultType === 'input_required' || resultType === 'task')
    throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result: resultType ${resultType} is no field of the 2025 revisions this upstream speaks`);
}

/**
 * Records the error code of each JSON-RPC error response as it arrives, in the forward's own scope:
 * the SDK client rebuilds a `-32002 { uri }` (2025-11-25 resource not found) as its ResourceNotFoundError,
 * whose code is -32602, and the gateway must relay the upstream's code for the caller's revision
 * (wire/error-translation.ts), not the client's normalisation.
 */
function keepWireErrorCodes(transport: Transport): void {
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const error = (message as { error?: { code?: unknown } }).error;
    if (error && typeof error.code === 'number') {
      const scope = forwardScope.getStore();
      if (scope) scope.wireErrorCode = error.code;
    }
    onmessage?.(message, extra);
  };
}
type ListChanged = (method: ListMethod) => void;

const CONNECT_TIMEOUT_MS = 10_000;
/** The least time between two "upstream list changed" lines of one list; the later one counts the notifications it stands for. */
const LIST_CHANGED_LOG_INTERVAL_MS = 10_000;

/**
 * The gateway's connection to one upstream MCP server, over Streamable HTTP (either era) or stdio. It
 * moves bytes and knows no policy.
 *
 * How clients are kept: a modern (2026-07-28) or stateless legacy HTTP upstream, and a stdio upstream
 * (one process), get ONE long-lived Client shared by every caller, which multiplexes their requests; over
 * HTTP the caller's credential and request id go on the hop as explicit arguments, and on the SDK
 * client's own sends through the transport's `fetch`, which reads them from the forward scope. A
 * sessionful legacy upstream (it issued an Mcp-Session-Id) gets one Client per credential digest
 * (session-pool.ts), re-initialised once when the upstream answers 404 or 400 for the session (it restarted).
 *
 * Forwarded requests to an HTTP upstream (tools/call and the other {@link ForwardMethod}s) and list
 * pages travel on the undici hop inside the session the SDK client opened (hop-routing.ts); the SDK
 * client does what happens once (handshake, server/discover, listen streams) and everything over stdio,
 * or over an in-process transport (`fetchUpstream` given). Errors come out of either as the SDK
 * client's, so callers cannot tell which carried the request.
 *
 * When the upstream goes away (connection refused or reset; the stdio process exited) the
 * {@link UpstreamSupervisor} reconnects with backoff: a new session, or a new process. Calls in flight
 * fail (isError upstream), calls made while an attempt runs wait for it, and `onReconnect` listeners
 * (the catalogue cache) refetch. The {@link HealthProbe} (health.ts) notices the loss between requests;
 * subscriptions to resource updates are held by the {@link ResourceWatch} (resource-watch.ts).
 */
export class UpstreamClient {
  private shared?: Client;
  private info?: UpstreamInfo;
  /** {@link info} as it last was: set with it, never cleared when the connection goes. */
  private lastInfo?: UpstreamInfo;
  private readonly sessions: SessionPool;
  /** Which requests travel on the undici hop (HTTP upstreams reached over the network). */
  private readonly hop: HopRouting;
  /** How the SDK client's HTTP requests reach the upstream. */
  private readonly fetchUpstream: FetchLike;
  private readonly listeners = new Set<ListChanged>();
  /** Per list, the "upstream list changed" line: the first at once, then one per {@link LIST_CHANGED_LOG_INTERVAL_MS} with a count. */
  private readonly listChangeLines = new Map<ListMethod, () => void>();
  private readonly resources: ResourceWatch;
  private readonly supervisor: UpstreamSupervisor<UpstreamInfo>;
  /**
   * A connection a reload tries before it serves (gateway.ts): its failures are the reload's to refuse, not the
   * upstream's, so they are neither counted in `mcp_upstream_errors_total` nor logged as a retry (SRE try-out: a
   * refused reload to a mistyped URL counted six errors against the healthy upstream of that name and logged
   * "retrying with backoff", which nothing did). Ended by {@link endTrial} when the configuration serves.
   */
  trial = false;

  /** The configuration it belongs to serves: its failures count from now on, and one that left it down is said now. */
  endTrial(): void {
    this.trial = false;
    this.supervisor.sayIfDown();
  }
  /** Requests sent and not yet settled (the health probe does not take a busy stdio server for a hung one). */
  private sending = 0;
  /** The secret values of `settings` (worked out again when a reload hands this client new settings). */
  private secrets?: { of: UpstreamConfig; values: string[] };
  /** When the first request since the stdio process last wrote anything was sent (epoch ms): retries of a silent server do not restart it. */
  private waitingSince = 0;
  /** The stdio transport of the last connection attempt (its process's last output: stdio.ts lastHeardFrom). */
  private stdio?: StdioClientTransport;
  /**
   * A stdio server found to speak the 2025 revisions at its last connection: the next one (a restart after it
   * exits) runs the initialize handshake at once, without the SDK's server/discover probe, which runs on a
   * sibling process of its own, so each start spawned the server twice (try-out). Forgotten when such a
   * connection fails, so a server upgraded to 2026-07-28 only is probed again.
   */
  private legacyStdio = false;
  private readonly prober: HealthProbe;
  private closed = false;
  private settings: UpstreamConfig;

  constructor(
    config: UpstreamConfig,
    private limits: GatewayConfig['limits'],
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
    /**
     * How HTTP requests reach the upstream: absent, over the network (the global fetch for the SDK
     * client, the undici hop for forwarded requests); given (createRuntime's `upstreamTransport`, in
     * process), every request goes through it on the SDK client.
     */
    fetchUpstream?: FetchLike,
  ) {
    this.settings = config;
    this.sessions = new SessionPool(config, (owner) => this.openSession(owner));
    const target = config.url !== undefined ? loggableUrl(config.url) : `stdio "${config.command}"`;
    // A stdio attempt is a process spawn: only the backoff starts one (supervisor.ts `onDemand`).
    this.supervisor = new UpstreamSupervisor(
      config.name,
      config.restart,
      (onBehalfOf) => this.connect(onBehalfOf),
      metrics,
      log,
      target,
      config.command === undefined,
      () => this.trial,
    );
    this.fetchUpstream = fetchUpstream ?? ((url, init) => fetch(url, init));
    this.hop = new HopRouting(() => this.settings, fetchUpstream === undefined, {
      listChanged: (method) => this.listChanged(method),
      resourceUpdated: (uri) => this.resources.updated(uri),
      resultBytes: () => this.limits.resultBytes,
    });
    this.resources = new ResourceWatch({
      transport: this.transport,
      describe: () => this.describe(),
      sharedClient: () => this.shared,
      openSession: () => this.openSession(undefined),
    });
    this.prober = new HealthProbe({
      config,
      fetchUpstream: this.fetchUpstream,
      health: () => this.supervisor.health(),
      reconnect: () => this.supervisor.connection(),
      stdioClient: () => this.shared,
      busy: () => this.sending > 0 && Date.now() - Math.max(this.waitingSince, (this.stdio && lastHeardFrom(this.stdio)) || 0) < this.config.timeoutMs,
      lost: (reason) => this.lost(reason),
    });
  }

  /** The upstream's configuration in force: the one it was built with, or the last {@link reconfigure}d. */
  get config(): UpstreamConfig {
    return this.settings;
  }

  /**
   * Live reload (`keep` and `repolicy`, gateway/reload/plan.ts): later requests use `next`'s per-call
   * settings (`timeoutMs`) and the configuration's `limits` (`resultBytes`, `maxListPages`) on this same
   * connection; requests in flight keep the deadline they started with.
   * @throws Error when `next` differs in a connection key (the plan replaces the client then).
   */
  reconfigure(next: UpstreamConfig, limits: GatewayConfig['limits']): void {
    if (!sameConnection(this.settings, next)) throw new Error(`upstream ${this.name}: a connection key changed; the reload opens a new connection instead`);
    this.settings = next;
    this.limits = limits;
  }

  get name(): string {
    return this.config.name;
  }

  /** `stdio` when the gateway spawns the upstream, else `http`. */
  get transport(): 'http' | 'stdio' {
    return this.config.command !== undefined ? 'stdio' : 'http';
  }

  /** Whether lists may differ per caller: only an HTTP upstream that receives the caller's credential. */
  get callerScoped(): boolean {
    return this.transport === 'http' && this.config.forwardCredentials;
  }

  /** Connects on first use (probing the era with server/discover) and returns what the upstream advertised. */
  describe(onBehalfOf: OnBehalfOf = {}): Promise<UpstreamInfo> {
    if (this.info) return Promise.resolve(this.info);
    // A first connect made for a caller carries its credential (an upstream may refuse initialize without one).
    return this.supervisor.connection(onBehalfOf);
  }

  /** What the upstream advertised when it was last connected, without connecting; undefined before. */
  get described(): UpstreamInfo | undefined {
    return this.info;
  }

  /**
   * What the upstream advertised the last time it was connected, kept while it is down (a reconnection
   * replaces it): what the gateway goes on advertising, so that a caller of a resource or a prompt hears
   * "upstream unavailable" rather than "Method not found" until it is back. Undefined before a first connect.
   */
  get lastDescribed(): UpstreamInfo | undefined {
    return this.lastInfo;
  }

  /** The last known state of the connection, without touching the upstream. */
  health(): UpstreamHealth {
    return this.supervisor.health();
  }

  /** Registers a callback for upstream list_changed notifications (cache invalidation); returns its removal. */
  onListChanged(listener: ListChanged): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Registers a callback for a reconnection after a loss (new session or new process): lists may have changed. Returns its removal. */
  onReconnect(listener: () => void): () => void {
    return this.supervisor.onReconnect(listener);
  }

  /** Registers a listener for this upstream going away (it was up); returns its removal. */
  onLost(listener: () => void): () => void {
    return this.supervisor.onLost(listener);
  }

  /**
   * Fetches every page of a list with the low-level request API, before any filtering. A cursor seen
   * twice or more than `limits.maxListPages` pages fails the fetch: a list is never silently truncated.
   * `onPage`, when given, receives each page's items once the next page is requested, so that the
   * caller's work on one page overlaps the upstream's on the next; what it throws fails the fetch.
   */
  async listAll(method: ListMethod, onBehalfOf: OnBehalfOf, onPage?: (items: unknown[]) => void): Promise<ListResult> {
    const key = LIST_ITEMS[method];
    const seen = new Set<string>();
    const items: unknown[] = [];
    let first: Record<string, unknown> | undefined;
    const allowed = (page: number): void => {
      if (page > this.limits.maxListPages)
        throw new GatewayError('upstream_error', `upstream ${this.name} returned more than ${this.limits.maxListPages} pages of ${method}`);
    };
    allowed(1);
    let pending = this.send(method, {}, onBehalfOf);
    for (let page = 1; ; page++) {
      const result = (await pending) as Record<string, unknown>;
      first ??= result;
      const listed = result[key];
      // The hop hands pages back as the upstream sent them: a page whose list is no array fails the fetch, as the SDK's schema did.
      if (listed !== undefined && !Array.isArray(listed))
        throw new GatewayError('upstream_error', `upstream ${this.name} answered ${method} with a "${key}" that is not an array`);
      const pageItems = (listed as unknown[] | undefined) ?? [];
      for (const item of pageItems) items.push(item);
      const next = result.nextCursor;
      const more = typeof next === 'string';
      if (more) {
        allowed(page + 1);
        if (seen.has(next))
          throw new GatewayError('upstream_error', `upstream ${this.name} repeated cursor "${next.slice(0, 40)}" in ${method}: pagination loop`);
        seen.add(next);
        pending = this.send(method, { cursor: next }, onBehalfOf);
        // Awaited below; until then (and for good if `onPage` throws) its failure must not go unhandled.
        pending.catch(() => undefined);
      }
      if (onPage) {
        // One turn of the event loop puts the next request on the wire before the page's work starts.
        if (more) await new Promise((resolve) => setImmediate(resolve));
        onPage(pageItems);
      }
      if (!more) break;
    }
    const cacheScope = first.cacheScope === 'public' || first.cacheScope === 'private' ? first.cacheScope : undefined;
    return { items, ttlMs: typeof first.ttlMs === 'number' ? first.ttlMs : undefined, cacheScope };
  }

  /** Forwards one per-request method with `options.credential` and `options.requestId` (none: sent for nobody). */
  forward(method: ForwardMethod, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> {
    return this.send(method, params, options) as Promise<Record<string, unknown>>;
  }

  /** Closes the connection (a stdio upstream's process is ended: stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.closed = true;
    this.prober.stop();
    // The forwarded requests end first: a reconnect attempt hung on an upstream that stopped answering holds the
    // supervisor's close for up to the handshake bound (10 s), and the calls waiting meanwhile were cut with an
    // empty reply at the shutdown's end instead of answered "may have run" (SRE try-out).
    const hopClosed = this.hop.close();
    try {
      // A connect under way finishes first (and closes what it opened: see connect), so no process outlives us. An
      // HTTP attempt holds no process: it is waited for at most a second (one hung on an upstream that stopped
      // answering held a shutdown up to its 10 s handshake bound, past a pod's grace: review).
      const stopped = this.supervisor.close();
      await (this.config.url === undefined
        ? stopped
        : Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, HTTP_CONNECT_CLOSE_WAIT_MS).unref())]));
      await this.shared?.close();
      await this.resources.close();
    } finally {
      this.sessions.clear();
      await hopClosed;
    }
  }

  /**
   * `failure` without the secrets this upstream's configuration carries (obs/redact.ts configuredSecrets):
   * an upstream that quotes its service key in an error message ("backend failed with key ...") would
   * otherwise hand it to every caller who can make it fail, and to the logs (try-out).
   */
  private withoutConfiguredSecrets(failure: UpstreamFailure, secrets: readonly string[] = this.configuredSecrets()): UpstreamFailure {
    if (secrets.length === 0) return failure;
    const message = withoutSecrets(failure.message, secrets);
    const data = withoutSecretsDeep(failure.data, secrets);
    return message === failure.message && data === failure.data ? failure : { ...failure, message, ...(data !== undefined ? { data } : {}) };
  }

  /**
   * The secrets this request must not hand back that `params` does not hold itself: the upstream's configured
   * ones, and the credential headers sent on the caller's behalf that its request never carried (an OAuth
   * token's service credential, `oauth.external.credentialHeaders`, or the key pair behind a built-in sign-in:
   * security try-out, an upstream quoting them in an error handed every signed-in caller the shared service
   * secret). A secret the caller sent is no secret from it, and masking it in what the upstream echoes back
   * made the masking an oracle: a string of 20,000 guesses came back with the one right guess `[redacted]`
   * (security try-out). Undefined when there is none (most upstreams: the hot path pays nothing); else worked out on
   * first use (an error, a result, a notification).
   */
  private secretsNotSentIn(params: Record<string, unknown>, credential: Credential | undefined): (() => readonly string[]) | undefined {
    const configured = this.configuredSecrets();
    // Worked out in the closure only: a credential object is new per request (review: hot path).
    const standingIn = credential?.granted !== undefined && this.callerScoped ? credential : undefined;
    if (configured.length === 0 && standingIn === undefined) return undefined;
    let left: readonly string[] | undefined;
    return () => {
      if (left) return left;
      const sent = JSON.stringify(params) ?? '';
      const all = standingIn ? this.secretsWith(standingIn.headers) : configured;
      return (left = all.filter((secret) => !sent.includes(secret)));
    };
  }

  /** This upstream's configured secrets and those of credential `headers` it was sent (obs/redact.ts credentialSecrets), longest first. */
  private secretsWith(headers: Readonly<Record<string, string>>): readonly string[] {
    const configured = this.configuredSecrets();
    const carried = credentialSecrets(headers);
    return carried.length === 0 ? configured : [...new Set([...configured, ...carried])].sort((a, b) => b.length - a.length);
  }

  /** The secret values of this upstream's settings (obs/redact.ts configuredSecrets), worked out once per settings. */
  private configuredSecrets(): string[] {
    if (this.secrets?.of !== this.settings) this.secrets = { of: this.settings, values: configuredSecrets(this.settings) };
    return this.secrets.values;
  }

  /**
   * `options` whose log, progress and task status notifications and questions to the caller lose this upstream's configured secrets
   * (obs/redact.ts), as its errors do: an upstream reporting "backend refused key ..." on its log channel or
   * in a progress message tells the caller as much (review). `options` as it is when it has none.
   */
  private maskedNotifications(options: ForwardOptions, secretsNow: (() => readonly string[]) | undefined): ForwardOptions {
    if (!secretsNow || (!options.onlog && !options.onprogress && !options.ontaskstatus && !options.oninputrequest)) return options;
    const { onlog, onprogress, ontaskstatus, oninputrequest } = options;
    return {
      ...options,
      // Its questions to the caller too (an elicitation's message, a sampling prompt: review).
      ...(oninputrequest ? { oninputrequest: (request) => oninputrequest(withoutSecretsDeep(request, secretsNow()) as typeof request) } : {}),
      ...(onlog ? { onlog: (message) => onlog(withoutSecretsDeep(message, secretsNow()) as typeof message) } : {}),
      ...(onprogress ? { onprogress: (progress) => onprogress(withoutSecretsDeep(progress, secretsNow()) as typeof progress) } : {}),
      ...(ontaskstatus ? { ontaskstatus: (params) => ontaskstatus(withoutSecretsDeep(params, secretsNow()) as typeof params) } : {}),
    };
  }

  private async send(method: string, params: Record<string, unknown>, sent: ForwardOptions = {}): Promise<unknown> {
    const started = performance.now();
    this.sending++;
    // The first request since the process last wrote anything: what its silence is counted from.
    if (this.stdio && this.waitingSince <= (lastHeardFrom(this.stdio) ?? 0)) this.waitingSince = Date.now();
    const secrets = this.secretsNotSentIn(params, sent.credential);
    const options = this.maskedNotifications(sent, secrets);
    try {
      // A connected stateless upstream, on the hop: every input is explicit, no forward scope is needed.
      const hopped = this.hopped(method, params, options);
      const result = hopped ? await hopped : await this.sendOnce(method, params, options, true);
      if (this.info?.era === 'legacy') refuseForeignResultType(result);
      if (method === 'tools/call' && typeof result === 'object' && result !== null) {
        const problems = callToolResultProblems(result as Record<string, unknown>);
        if (problems.length) throw new SdkError(SdkErrorCode.InvalidResult, `Invalid result: ${problems.join('; ')}`);
      }
      if (!secrets) return result;
      // A tool's error result is its error message ("backend failed with key ..."): masked as the errors are, and a
      // task's answers whole (a finished task carries its tool's result, a status its message: review), and an
      // input_required result's questions (2026-07-28 multi-round-trip: review).
      const answer = result as { isError?: unknown; resultType?: unknown } | undefined;
      if (answer?.isError === true || answer?.resultType === 'input_required' || method.startsWith('tasks/')) return withoutSecretsDeep(result, secrets());
      // A successful answer is data: not a list page (the catalogue's names and schemas are the upstream's own words), its
      // keys kept, and only secrets long enough to be a credential, which no data holds by chance (security try-out: a tool
      // echoing its request headers handed every caller the service key; review: masking `postgres` everywhere broke
      // tools named and resources addressed with it).
      if (method.endsWith('/list')) return result;
      const credentials = secrets().filter((secret) => secret.length >= RESULT_SECRET_MIN_CHARS);
      return credentials.length ? withoutSecretsDeep(result, credentials, false) : result;
    } catch (error) {
      const classified = this.withoutConfiguredSecrets(classifyUpstreamFailure(error, this.name), secrets?.() ?? NO_SECRET_LIST);
      // A timeout names the setting that decided it, as a result over limits.resultBytes does (try-out).
      const failure =
        classified.kind === 'upstream_timeout'
          ? { ...classified, message: `${classified.message} (its timeoutMs, ${this.config.timeoutMs} ms)`, timeoutMs: this.config.timeoutMs }
          : classified;
      // The caller gave up: the SDK cancelled just this request upstream (aborted its fetch, or sent
      // notifications/cancelled) and rejects with the abort reason, which for a caller whose own HTTP
      // connection closed is the gateway server's SdkError CONNECTION_CLOSED. That says nothing about the
      // upstream: reconnecting here would fail every other caller's calls in flight.
      const cancelled = options.signal?.aborted === true;
      if (!this.trial) this.metrics.upstreamErrors.inc({ upstream: this.name, kind: cancelled ? 'cancelled' : failure.kind });
      if (!cancelled && isConnectionLoss(error)) this.lost(new GatewayError('upstream_unavailable', failure.message, { upstream: this.name }));
      // A response stream cut mid-answer: the upstream may be gone, or only that stream.
      else if (!cancelled && error instanceof UpstreamStreamBroken) void runInBackground(() => this.prober.checkAlive());
      // Classified once, here where it failed: every layer above reads this error's kind and code. A GatewayError
      // of our own is thrown as it is, unless its message quoted one of the upstream's secrets (then as masked).
      if (error instanceof GatewayError && failure.message === error.message) throw error;
      throw upstreamFailureError(failure, this.name, error);
    } finally {
      this.sending--;
      this.metrics.upstreamRequestDuration.observe({ upstream: this.name, method }, (performance.now() - started) / 1000);
    }
  }

  /**
   * The send of a hop method to a connected HTTP upstream without sessions (modern, or stateless
   * 2025-era): straight onto the hop, as {@link sendOnce} would put it; undefined for anything else.
   */
  private hopped(method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> | undefined {
    return this.info && !this.info.sessionful ? this.hop.route(this.shared, method, params, options) : undefined;
  }

  private async sendOnce(method: string, params: Record<string, unknown>, options: ForwardOptions, retrySession: boolean): Promise<unknown> {
    const info = await this.describe(options);
    const client = info.sessionful ? await this.sessions.client(options) : this.shared!;
    // What the SDK client's transport fetch and notification handlers read of this send (the SDK's own
    // per-request headers drop authorization and mcp-*). A copy per send: its response's raw error code is
    // recorded on it (keepWireErrorCodes). Only SDK sends run in it: an AsyncLocalStorage that is never
    // entered leaves the process without async hooks (obs/request-context.ts), which the hop keeps so.
    const scope: ForwardScope = { ...options };
    try {
      const hopped = this.hop.route(client, method, params, options);
      if (hopped) return await hopped;
      return await forwardScope.run(scope, () => this.sdkRequest(client, method, params, options));
    } catch (error) {
      // The SDK had sent the request and was awaiting its answer when the connection closed: it may have run.
      if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed && deliveryOf(error) === undefined) markDelivery(error, 'sent');
      // A sessionful upstream forgot the session (restart, expiry): start a new one, once. The spec says
      // 404; some servers (server-everything) answer 400 "No valid session ID". Either way the request was
      // refused before it ran, so sending it again is safe.
      const wireCode = scope.wireErrorCode;
      if (wireCode !== undefined && error instanceof ProtocolError && error.code !== wireCode) {
        throw new ProtocolError(wireCode, error.message, error.data);
      }
      if (info.sessionful && retrySession && error instanceof SdkHttpError && (error.status === 404 || error.status === 400)) {
        this.sessions.forget(options);
        this.log.info({ upstream: this.name, status: error.status }, 'upstream forgot the session; opening a new one');
        return this.sendOnce(method, params, options, false);
      }
      throw error;
    }
  }

  /** One request on the SDK client (stdio, in-process transports, and anything the hop does not carry). */
  private async sdkRequest(client: Client, method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<unknown> {
    const sent = {
      signal: abortSignalOf(options.signal),
      onprogress: options.onprogress,
      resetTimeoutOnProgress: options.onprogress !== undefined,
      timeout: this.config.timeoutMs,
      ...(options.allowInputRequired ? { allowInputRequired: true } : {}),
      ...(options.headers && this.transport === 'http' ? { headers: options.headers } : {}),
    };
    // The SDK client has no runtime for tasks (2.4): their methods go with a loose result schema. So do tools/list,
    // as the hop hands it back (the catalogue checks each tool, catalog.ts, where one malformed definition in the SDK's
    // schema failed the upstream's whole list), and tools/call, whose result {@link send} checks as it checks the hop's
    // (callToolResultProblems: a JSON Pointer per problem, where the SDK's parse answered a page of Zod issues).
    if (method.startsWith('tasks/') || method === 'tools/call' || method === 'tools/list') return await client.request({ method, params }, ANY_RESULT, sent);
    return await client.request({ method: method as 'resources/read', params }, sent);
  }

  /**
   * One connection attempt (the supervisor decides when): a new Client over a new transport or process.
   * The handshake's requests carry `onBehalfOf` (the caller whose request made the attempt; nobody for a
   * scheduled reconnect), and only they: the client is shared, so what it sends later is sent for the
   * caller of that send.
   */
  private async connect(onBehalfOf: OnBehalfOf = {}): Promise<UpstreamInfo> {
    if (this.closed) throw new GatewayError('upstream_unavailable', `upstream ${this.name} is closed`);
    const client = this.newClient();
    let connecting: OnBehalfOf | undefined = onBehalfOf;
    const transport: Transport =
      this.transport === 'stdio'
        ? stdioTransport(this.config, this.log, STDIO_LINE_FACTOR * this.limits.resultBytes)
        : new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: (url, init) => this.forwardingFetch(url, init, connecting) });
    // Bounded apart from timeoutMs, which operators raise for slow tools: a handshake that waited it would
    // hold up readiness, reloads and shutdown as long (the SDK's version probe has the same bound).
    const connectTimeoutMs = Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS);
    if (this.transport === 'stdio') this.stdio = transport as StdioClientTransport;
    try {
      await client.connect(transport, { timeout: connectTimeoutMs, ...(this.legacyStdio ? { prior: { kind: 'legacy' as const } } : {}) });
    } catch (error) {
      this.legacyStdio = false;
      await client.close().catch(() => {});
      const failure = classifyUpstreamFailure(error, this.name);
      if (!this.trial) this.metrics.upstreamErrors.inc({ upstream: this.name, kind: failure.kind });
      const lostOnTheWay = isConnectionLoss(error) || isConnectionLoss((error as Error).cause);
      const message =
        this.transport === 'stdio'
          ? `upstream ${this.name}: "${this.config.command}" did not start serving (${lostOnTheWay ? `the process ${exitOf(transport)}` : failure.kind === 'upstream_timeout' ? `no answer to the handshake within ${connectTimeoutMs} ms, the lesser of its timeoutMs and ${CONNECT_TIMEOUT_MS / 1000} s` : (error as Error).message})`
          : refusedPort(error)
            ? `upstream ${this.name} is unavailable: fetch refuses to connect to port ${new URL(this.config.url!).port} (a "bad port" of the Fetch standard, fetch.spec.whatwg.org/#port-blocking), and the MCP client's HTTP transport connects with fetch; serve the upstream on another port`
            : lostOnTheWay
              ? `upstream ${this.name} is unreachable`
              : failure.kind === 'upstream_timeout'
                ? // The bound that decided it, as a call's timeout names its timeoutMs (try-out).
                  `upstream ${this.name} did not answer the handshake within ${connectTimeoutMs} ms, the lesser of its timeoutMs and ${CONNECT_TIMEOUT_MS / 1000} s`
                : failure.message;
      throw new GatewayError(
        failure.kind === 'unauthorized' ? 'unauthorized' : 'upstream_unavailable',
        // The upstream's own words (a stdio server's or a handshake's error) may quote a secret of its configuration (review),
        // or the credential the handshake carried: this error is handed to every caller until the next attempt (review).
        `${withoutSecrets(
          message,
          onBehalfOf.credential && this.config.forwardCredentials ? this.secretsWith(onBehalfOf.credential.headers) : this.configuredSecrets(),
        )} (connecting)`,
        { upstream: this.name },
      );
    } finally {
      connecting = undefined;
    }
    if (this.closed) {
      await client.close().catch(() => {});
      throw new GatewayError('upstream_unavailable', `upstream ${this.name} is closed`);
    }
    keepWireErrorCodes(transport);
    const sessionful = transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined;
    const info: UpstreamInfo = {
      era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
      sessionful,
      capabilities: client.getServerCapabilities() ?? {},
      instructions: client.getInstructions(),
    };
    info.resourceUpdates = info.capabilities.resources?.subscribe === true && (info.era === 'modern' || sessionful || this.transport === 'stdio');
    this.legacyStdio = this.transport === 'stdio' && info.era === 'legacy';
    info.tasks = taskSupport(info);
    if (transport instanceof StreamableHTTPClientTransport) this.hop.adopt(client, transport);
    if (sessionful) this.sessions.adopt(onBehalfOf, client);
    else this.shared = client;
    this.watchStreams(client);
    // A stdio process that exits closes its client; so does an HTTP client that we close ourselves.
    client.onclose = () => {
      const what = this.transport === 'stdio' ? `the process ${exitOf(transport)}` : 'the connection closed';
      if (this.shared === client) this.lost(new GatewayError('upstream_unavailable', `upstream ${this.name}: ${what}`, { upstream: this.name }));
    };
    this.watchListChanges(client, info);
    this.info = info;
    this.lastInfo = info;
    const pid = 'pid' in transport ? ((transport.pid as number | null) ?? undefined) : undefined;
    this.log.info(
      { upstream: this.name, transport: this.transport, pid, era: info.era, sessionful, version: client.getNegotiatedProtocolVersion() },
      'connected to upstream',
    );
    return info;
  }

  /** The connection is gone: drop every client and let the supervisor reconnect. */
  private lost(reason: GatewayError): void {
    if (this.closed) return;
    const client = this.shared;
    this.shared = undefined;
    this.info = undefined;
    this.sessions.clear();
    void client?.close().catch(() => {});
    this.supervisor.lost(reason);
  }

  private newClient(): Client {
    return new Client(GATEWAY_CLIENT, {
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS) } },
      // The gateway never fulfils input requests itself: forwards that may get one pass allowInputRequired
      // and relay it to the caller, who answers and retries (forwarding.ts).
      inputRequired: { autoFulfill: false },
      listMaxPages: this.limits.maxListPages,
      // What a 2025-era upstream may ask during a call, on its stream: answered by the caller through the
      // input bridge (input-bridge.ts) when the caller can, refused otherwise. Toward a 2026-07-28 upstream
      // the caller's own capabilities are sent instead (forwarding.ts forwardedMeta).
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} },
    });
  }

  /**
   * A new session of a sessionful 2025-era upstream, opened for `owner` (the session pool's, one per
   * credential) or for nobody (the resource watch's background session). Everything its client sends is
   * for that owner: the handshake and any stream the SDK opens on its own carry the owner's credential
   * (and the request id of the send that opened the session, only while it opens).
   */
  private async openSession(owner: OnBehalfOf | undefined): Promise<Client> {
    const client = this.newClient();
    let sender = owner;
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: (url, init) => this.forwardingFetch(url, init, sender) });
    await client.connect(transport, { timeout: Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS) });
    sender = owner && { credential: owner.credential };
    keepWireErrorCodes(transport);
    this.hop.adopt(client, transport);
    this.watchListChanges(client, this.info!);
    this.watchStreams(client);
    return client;
  }

  private listChanged(method: ListMethod): void {
    let tell = this.listChangeLines.get(method);
    if (!tell) {
      // A line per notification let an upstream write 20,000 lines with one answer (try-out); the refreshes merge anyway.
      tell = coalesced(LIST_CHANGED_LOG_INTERVAL_MS, (notifications) => this.log.info({ upstream: this.name, method, notifications }, 'upstream list changed'));
      this.listChangeLines.set(method, tell);
    }
    tell();
    for (const listener of this.listeners) listener(method);
  }

  /**
   * The transport's fetch hook: static config headers, then the credential headers (when
   * `forwardCredentials`, never a key of `credentials.apiKeys`: auth/credentials.ts `forwardedHeaders`)
   * and request id of the send under way (the forward scope {@link sendOnce} runs SDK sends in), else of
   * `otherwise` (what the transport was made for: a handshake, a credential's session), and the current span's W3C trace context when tracing is on (obs/tracing.ts). Background
   * work (catalogue warm-up, reconnects, listen streams) runs outside both and carries neither.
   */
  private forwardingFetch(url: string | URL, init: RequestInit | undefined, otherwise: OnBehalfOf | undefined): Promise<Response> {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(this.config.headers)) headers.set(name, value);
    const scope = forwardScope.getStore() ?? otherwise;
    const forwarded = this.config.forwardCredentials ? forwardedHeaders(scope?.credential) : undefined;
    if (forwarded) for (const [name, value] of Object.entries(forwarded)) headers.set(name, value);
    if (scope?.requestId) headers.set('x-request-id', scope.requestId);
    injectTraceHeaders(headers);
    return this.fetchUpstream(url, { ...init, headers });
  }

  /**
   * A broken HTTP response stream (the SDK reports it on `onerror`; the request itself would only fail
   * at `timeoutMs`) triggers a liveness check: when the upstream no longer accepts connections, the
   * connection counts as lost, which fails the calls in flight at once and starts the reconnect.
   */
  private watchStreams(client: Client): void {
    if (this.transport !== 'http') return;
    client.onerror = (error) => {
      if (!this.closed && /SSE stream disconnected|reconnect SSE stream|reconnection attempts/i.test(error.message))
        void runInBackground(() => this.prober.checkAlive());
    };
  }

  /**
   * Holds a subscription to updates of `uri` at this upstream, outside any caller's request, and calls
   * `onUpdated` for each update; resolves to its closer, or undefined when this upstream cannot deliver
   * updates (resource-watch.ts).
   */
  watchResource(uri: string, onUpdated: (uri: string) => void): Promise<(() => Promise<void>) | undefined> {
    return this.resources.watch(uri, onUpdated);
  }

  private watchListChanges(client: Client, info: UpstreamInfo): void {
    client.setNotificationHandler('notifications/message', (notification) => forwardScope.getStore()?.onlog?.(notification.params));
    for (const method of ['sampling/createMessage', 'elicitation/create', 'roots/list'] as const) {
      client.setRequestHandler(method, async (request) => {
        const ask = forwardScope.getStore()?.oninputrequest;
        if (!ask) throw new ProtocolError(-32601, `Method not found: the gateway cannot relay ${method} to this call's caller`);
        return (await ask({ method, params: request.params as Record<string, unknown> })) as never;
      });
    }
    client.setNotificationHandler('notifications/resources/updated', (notification) => this.resources.updated(notification.params.uri));
    // 2025-11-25 wire vocabulary the SDK types leave out (no tasks runtime): registered by its schema-less form.
    client.setNotificationHandler('notifications/tasks/status', { params: ANY_RESULT }, (params) => forwardScope.getStore()?.ontaskstatus?.(params));
    const notify = (method: ListMethod) => () => this.listChanged(method);
    client.setNotificationHandler('notifications/tools/list_changed', notify('tools/list'));
    client.setNotificationHandler('notifications/prompts/list_changed', notify('prompts/list'));
    client.setNotificationHandler('notifications/resources/list_changed', notify('resources/list'));
    const caps = info.capabilities;
    const filter = {
      toolsListChanged: caps.tools?.listChanged === true,
      promptsListChanged: caps.prompts?.listChanged === true,
      resourcesListChanged: caps.resources?.listChanged === true,
    };
    if (info.era !== 'modern' || !Object.values(filter).some(Boolean)) return;
    // The listen stream outlives the request that connected: it must not carry that caller's credential.
    runInBackground(() =>
      client.listen(filter).then(
        (subscription) =>
          void subscription.closed.then(
            (how) => how === 'remote' && !this.closed && this.log.warn({ upstream: this.name }, 'upstream listen stream ended; relying on TTLs'),
          ),
        (error: unknown) =>
          this.log.info(
            { upstream: this.name, err: withoutSecrets(String((error as Error)?.message), this.configuredSecrets()) },
            'upstream refused subscriptions/listen; relying on TTLs',
          ),
      ),
    );
  }
}

/** The task forms an upstream serves (see {@link UpstreamInfo.tasks}), from what it declared. */
function taskSupport(info: UpstreamInfo): TaskForms | undefined {
  const caps = info.capabilities as ServerCapabilities & { tasks?: { cancel?: unknown; requests?: { tools?: { call?: unknown } } } };
  if (info.era === 'legacy') return caps.tasks?.requests?.tools?.call !== undefined ? { legacy: { cancel: caps.tasks.cancel !== undefined } } : undefined;
  return caps.extensions?.[TASKS_EXTENSION] !== undefined ? { modern: true } : undefined;
}

/**
 * Whether fetch refused the connection for its port (Fetch standard §2.9 port blocking: undici's network
 * error "bad port", the cause of fetch's TypeError): the SDK reports it as a failed era negotiation.
 */
function refusedPort(error: unknown): boolean {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 4; depth++, at = at.cause) if (at.message === 'bad port') return true;
  return false;
}
