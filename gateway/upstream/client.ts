import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  ProtocolError,
  PROTOCOL_VERSION_META_KEY,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type FetchLike,
  type LoggingMessageNotificationParams,
  type ServerCapabilities,
  type Transport,
} from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import * as z from 'zod/v4';
import { TASKS_EXTENSION } from '../catalog/extensions.ts';
import type { GatewayConfig, UpstreamConfig } from '../../config/types.ts';
import { GatewayError, classifyUpstreamFailure, upstreamFailureError } from '../errors.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { forwardScope, runInBackground, type ForwardScope, type OnBehalfOf } from './forward-scope.ts';
import type { UpstreamInputRequest } from './input-bridge.ts';
import { injectTraceHeaders, withTraceHeaders } from '../obs/tracing.ts';
import { HttpHop, UpstreamStreamBroken, type HopCall, type HopSession } from './http-hop.ts';
import { stdioTransport } from './stdio.ts';
import { UpstreamSupervisor, type UpstreamHealth } from './supervisor.ts';

export type { UpstreamHealth } from './supervisor.ts';
export type { OnBehalfOf } from './forward-scope.ts';

/** The paginated list methods an upstream serves, and the result key holding their items. */
export const LIST_ITEMS = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;
export type ListMethod = keyof typeof LIST_ITEMS;

/**
 * The per-request methods forwarded with the caller's credential (`logging/setLevel` and the resource
 * subscriptions: 2025-era upstreams only), and the task methods: `tasks/result` and `tasks/list` of the
 * 2025-11-25 tasks utility, `tasks/update` of the 2026-07-28 extension (SEP-2663), get and cancel both.
 */
export type ForwardMethod =
  | 'tools/call'
  | 'resources/read'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | TaskMethod;

/** The task methods the gateway relays (see {@link ForwardMethod}). */
export type TaskMethod = 'tasks/get' | 'tasks/result' | 'tasks/list' | 'tasks/cancel' | 'tasks/update';

/** Any JSON object: the result schema of the task methods, which the SDK client has no runtime for. */
const ANY_RESULT = z.looseObject({});

/** What the upstream advertised when the gateway connected. */
export interface UpstreamInfo {
  era: 'modern' | 'legacy';
  /** Legacy HTTP upstream that issued a session id: one session per credential digest. */
  sessionful: boolean;
  capabilities: ServerCapabilities;
  instructions?: string;
  /**
   * It declares `resources.subscribe` and can deliver the updates to the gateway (watchResource): a
   * 2026-07-28 upstream, a sessionful 2025-era one, or stdio; a stateless 2025-era HTTP one cannot.
   */
  resourceUpdates?: boolean;
  /**
   * The task forms it serves: `legacy` when a 2025-era upstream declares
   * `capabilities.tasks.requests.tools.call` (2025-11-25 basic/utilities/tasks; `cancel` when it also
   * declares `tasks.cancel`), `modern` when a 2026-07-28 upstream declares the
   * `io.modelcontextprotocol/tasks` extension (SEP-2663). Several upstreams: each form any of them serves.
   */
  tasks?: TaskForms;
}

/** The task forms served (see {@link UpstreamInfo.tasks}). */
export interface TaskForms {
  legacy?: { cancel: boolean };
  modern?: true;
}

/** All pages of one list, with the cache hints of the first page (2026-07-28 upstreams only). */
export interface ListResult {
  items: unknown[];
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** One forwarded request: on whose behalf (credential, request id) and how it is followed. */
export interface ForwardOptions extends OnBehalfOf {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Log messages (`notifications/message`) the upstream sends on this request's response stream. */
  onlog?: (message: LoggingMessageNotificationParams) => void;
  /** Extra HTTP headers of this request (`Mcp-Param-*`); the transport keeps the standard and auth ones its own. */
  headers?: Record<string, string>;
  /** Answers the upstream's own requests during this one (see ForwardScope.oninputrequest). */
  oninputrequest?: (request: UpstreamInputRequest) => Promise<Record<string, unknown>>;
  /** Hand an `input_required` result back instead of failing (2026-07-28 multi-round-trip, manual mode). */
  allowInputRequired?: boolean;
  /** Hand a 2026-07-28 `resultType: "task"` result (SEP-2663 CreateTaskResult) back instead of failing. */
  allowTaskResult?: boolean;
  /** `notifications/tasks/status` (2025-11-25) the upstream sends on this request's response stream. */
  ontaskstatus?: (params: Record<string, unknown>) => void;
}

/**
 * Records the error code of each JSON-RPC error response as it arrives, in the forward's own scope:
 * the SDK client rebuilds a `-32002 { uri }` (2025-11-25 resource not found) as its ResourceNotFoundError,
 * whose code is -32602, and the gateway must relay the upstream's code for the caller's revision
 * (mcp/error-translation.ts), not the client's normalisation.
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
/**
 * The methods the undici hop carries to a connected HTTP upstream (http-hop.ts): every per-request method
 * and the list pages; the rest (handshake, server/discover, listen streams) stays with the SDK client.
 */
const HOP_METHODS: ReadonlySet<string> = new Set<ForwardMethod | ListMethod>([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'tools/call',
  'resources/read',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
]);
const LIST_CHANGED: Readonly<Record<string, ListMethod>> = {
  'notifications/tools/list_changed': 'tools/list',
  'notifications/prompts/list_changed': 'prompts/list',
  'notifications/resources/list_changed': 'resources/list',
};

type ListChanged = (method: ListMethod) => void;

const GATEWAY_CLIENT = { name: 'mcp-catalog-gateway', version: '0.1.0' };
const CONNECT_TIMEOUT_MS = 10_000;
/** Any HTTP answer within this proves the upstream alive (a broken stream was that stream's problem). */
const LIVENESS_TIMEOUT_MS = 2000;

/**
 * The gateway's connection to one upstream MCP server, over Streamable HTTP (either era) or stdio. It
 * moves bytes and knows no policy.
 *
 * How clients are kept: a modern (2026-07-28) or stateless legacy HTTP upstream, and a stdio upstream
 * (one process), get ONE long-lived Client shared by every caller, which multiplexes their requests; over
 * HTTP the caller's credential and request id go on the hop as explicit arguments, and on the SDK
 * client's own sends through the transport's `fetch`, which reads them from the forward scope. A sessionful legacy upstream (it issued an Mcp-Session-Id)
 * gets one Client per credential digest (or one for all when `forwardCredentials` is off), in a bounded
 * LRU pool, re-initialised once when the upstream answers 404 or 400 for the session (it restarted).
 *
 * Forwarded requests to an HTTP upstream (tools/call and the other {@link ForwardMethod}s) travel on the
 * undici hop (http-hop.ts: a keep-alive pool, `upstreams[].connections` sockets at most), and so do
 * list pages, inside the session the SDK client opened, with the credential and request id of `options` as explicit
 * arguments; the SDK client does what happens once (handshake, server/discover,
 * listen streams) and everything over stdio, or over an in-process transport (`fetchUpstream` given).
 * Errors come out of either as the SDK client's, so callers cannot tell which carried the request.
 *
 * When the upstream goes away (connection refused or reset; the stdio process exited) the
 * {@link UpstreamSupervisor} reconnects with backoff: a new session, or a new process. Calls in flight
 * fail (isError upstream), calls made while an attempt runs wait for it, and `onReconnect` listeners
 * (the catalogue cache) refetch.
 */
export class UpstreamClient {
  private shared?: Client;
  private info?: UpstreamInfo;
  private readonly sessions: LRUCache<string, Promise<Client>>;
  /** HTTP upstreams reached over the network: the undici hop for forwarded requests. */
  private readonly hop?: HttpHop;
  /** The hop's view of each connected HTTP client: revision, session id, envelope. */
  private readonly hopSessions = new WeakMap<Client, HopSession>();
  /** How the SDK client's HTTP requests reach the upstream. */
  private readonly fetchUpstream: FetchLike;
  private readonly listeners = new Set<ListChanged>();
  /** Resource-update listeners by URI (watchResource). */
  private readonly resourceListeners = new Map<string, Set<(uri: string) => void>>();
  private watching?: Promise<Client>;
  private readonly supervisor: UpstreamSupervisor<UpstreamInfo>;
  private closed = false;
  private checking?: Promise<void>;
  private readonly prober?: NodeJS.Timeout;
  private probing = false;
  /** Probes in a row that got no answer within `health.timeoutMs`. */
  private silentProbes = 0;

  constructor(
    readonly config: UpstreamConfig,
    private readonly limits: GatewayConfig['limits'],
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
    /**
     * How HTTP requests reach the upstream: absent, over the network (the global fetch for the SDK
     * client, the undici hop for forwarded requests); given (createRuntime's `upstreamTransport`, in
     * process), every request goes through it on the SDK client.
     */
    fetchUpstream?: FetchLike,
  ) {
    this.sessions = new LRUCache({ max: config.sessions.maxEntries, dispose: (client) => void client.then((c) => c.close()).catch(() => {}) });
    this.supervisor = new UpstreamSupervisor(config.name, config.restart, (onBehalfOf) => this.connect(onBehalfOf), metrics, log);
    this.fetchUpstream = fetchUpstream ?? ((url, init) => fetch(url, init));
    if (fetchUpstream === undefined && config.url !== undefined && config.command === undefined)
      this.hop = new HttpHop(config.url, config.headers, config.connections);
    if (config.health.intervalMs > 0) {
      this.prober = setInterval(() => void runInBackground(() => this.probe()), config.health.intervalMs);
      this.prober.unref();
    }
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
    clearInterval(this.prober);
    // A connect under way finishes first (and closes what it opened: see connect), so no process outlives us.
    await this.supervisor.close();
    try {
      await this.shared?.close();
      await this.watching?.then((c) => c.close()).catch(() => undefined);
    } finally {
      this.sessions.clear();
      await this.hop?.close();
    }
  }

  private async send(method: string, params: Record<string, unknown>, options: ForwardOptions = {}): Promise<unknown> {
    const started = performance.now();
    try {
      // A connected stateless upstream, on the hop: every input is explicit, no forward scope is needed.
      const hopped = this.hopped(method, params, options);
      if (hopped) return await hopped;
      return await this.sendOnce(method, params, options, true);
    } catch (error) {
      const failure = classifyUpstreamFailure(error, this.name);
      // The caller gave up: the SDK cancelled just this request upstream (aborted its fetch, or sent
      // notifications/cancelled) and rejects with the abort reason, which for a caller whose own HTTP
      // connection closed is the gateway server's SdkError CONNECTION_CLOSED. That says nothing about the
      // upstream: reconnecting here would fail every other caller's calls in flight.
      const cancelled = options.signal?.aborted === true;
      this.metrics.upstreamErrors.inc({ upstream: this.name, kind: cancelled ? 'cancelled' : failure.kind });
      if (!cancelled && isConnectionLoss(error)) this.lost(new GatewayError('upstream_unavailable', failure.message, { upstream: this.name }));
      // A response stream cut mid-answer: the upstream may be gone, or only that stream.
      else if (!cancelled && error instanceof UpstreamStreamBroken) void runInBackground(() => this.checkAlive());
      // Classified once, here where it failed: every layer above reads this error's kind and code.
      throw error instanceof GatewayError ? error : upstreamFailureError(failure, this.name, error);
    } finally {
      this.metrics.upstreamRequestDuration.observe({ upstream: this.name, method }, (performance.now() - started) / 1000);
    }
  }

  /**
   * The send of a hop method to a connected HTTP upstream without sessions (modern, or stateless
   * 2025-era): straight onto the hop, as {@link sendOnce} would put it; undefined for anything else.
   */
  private hopped(method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> | undefined {
    const { hop, info, shared } = this;
    if (!hop || !info || info.sessionful || !shared || !HOP_METHODS.has(method)) return undefined;
    const session = this.hopSessions.get(shared);
    return session && hop.request(session, method, params, this.hopCall(options));
  }

  private async sendOnce(method: string, params: Record<string, unknown>, options: ForwardOptions, retrySession: boolean): Promise<unknown> {
    const info = await this.describe(options);
    const client = info.sessionful ? await this.sessionClient(options) : this.shared!;
    // What the SDK client's transport fetch and notification handlers read of this send (the SDK's own
    // per-request headers drop authorization and mcp-*). A copy per send: its response's raw error code is
    // recorded on it (keepWireErrorCodes). Only SDK sends run in it: an AsyncLocalStorage that is never
    // entered leaves the process without async hooks (obs/request-context.ts), which the hop keeps so.
    const scope: ForwardScope = { ...options };
    try {
      const session = this.hop && HOP_METHODS.has(method) ? this.hopSessions.get(client) : undefined;
      if (session) return await this.hop!.request(session, method, params, this.hopCall(options));
      return await forwardScope.run(scope, () => this.sdkRequest(client, method, params, options));
    } catch (error) {
      // A sessionful upstream forgot the session (restart, expiry): start a new one, once. The spec says
      // 404; some servers (server-everything) answer 400 "No valid session ID". Either way the request was
      // refused before it ran, so sending it again is safe.
      const wireCode = scope.wireErrorCode;
      if (wireCode !== undefined && error instanceof ProtocolError && error.code !== wireCode) {
        throw new ProtocolError(wireCode, error.message, error.data);
      }
      if (info.sessionful && retrySession && error instanceof SdkHttpError && (error.status === 404 || error.status === 400)) {
        this.sessions.delete(this.sessionKey(options));
        this.log.info({ upstream: this.name, status: error.status }, 'upstream forgot the session; opening a new one');
        return this.sendOnce(method, params, options, false);
      }
      throw error;
    }
  }

  /** One request on the SDK client (stdio, in-process transports, and anything the hop does not carry). */
  private async sdkRequest(client: Client, method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<unknown> {
    // The SDK client has no runtime for tasks (2.4): their methods, and a tools/call that may create one, go with a loose result schema.
    if (method.startsWith('tasks/') || (method === 'tools/call' && params.task !== undefined))
      return await client.request({ method, params }, ANY_RESULT, {
        signal: options.signal,
        onprogress: options.onprogress,
        resetTimeoutOnProgress: options.onprogress !== undefined,
        timeout: this.config.timeoutMs,
      });
    return await client.request(
      { method: method as 'tools/call', params },
      {
        signal: options.signal,
        onprogress: options.onprogress,
        resetTimeoutOnProgress: options.onprogress !== undefined,
        timeout: this.config.timeoutMs,
        ...(options.allowInputRequired ? { allowInputRequired: true } : {}),
        ...(options.headers && this.transport === 'http' ? { headers: options.headers } : {}),
      },
    );
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
        ? stdioTransport(this.config, this.log)
        : new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: (url, init) => this.forwardingFetch(url, init, connecting) });
    try {
      await client.connect(transport, { timeout: Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS) });
    } catch (error) {
      await client.close().catch(() => {});
      const failure = classifyUpstreamFailure(error, this.name);
      this.metrics.upstreamErrors.inc({ upstream: this.name, kind: failure.kind });
      const lostOnTheWay = isConnectionLoss(error) || isConnectionLoss((error as Error).cause);
      const message =
        this.transport === 'stdio'
          ? `upstream ${this.name}: "${this.config.command}" did not start serving (${lostOnTheWay ? 'the process exited' : (error as Error).message})`
          : lostOnTheWay
            ? `upstream ${this.name} is unreachable`
            : failure.message;
      throw new GatewayError(failure.kind === 'unauthorized' ? 'unauthorized' : 'upstream_unavailable', `${message} (connecting)`, { upstream: this.name });
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
    info.tasks = taskSupport(info);
    if (transport instanceof StreamableHTTPClientTransport) this.hopSessions.set(client, hopSession(client, transport));
    if (sessionful) this.sessions.set(this.sessionKey(onBehalfOf), Promise.resolve(client));
    else this.shared = client;
    this.watchStreams(client);
    // A stdio process that exits closes its client; so does an HTTP client that we close ourselves.
    client.onclose = () => {
      const what = this.transport === 'stdio' ? 'the process exited' : 'the connection closed';
      if (this.shared === client) this.lost(new GatewayError('upstream_unavailable', `upstream ${this.name}: ${what}`, { upstream: this.name }));
    };
    this.watchListChanges(client, info);
    this.info = info;
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
   * The pooled session of `onBehalfOf`'s credential (sessionful legacy upstreams). Everything its client
   * sends is for that credential: the handshake and any stream the SDK opens on its own carry it (and the
   * request id of the send that opened the session, only while it opens).
   */
  private sessionClient(onBehalfOf: OnBehalfOf): Promise<Client> {
    const key = this.sessionKey(onBehalfOf);
    let client = this.sessions.get(key);
    if (!client) {
      const fresh = this.newClient();
      let owner: OnBehalfOf = onBehalfOf;
      const transport = new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: (url, init) => this.forwardingFetch(url, init, owner) });
      client = fresh.connect(transport, { timeout: Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS) }).then(() => {
        owner = { credential: onBehalfOf.credential };
        keepWireErrorCodes(transport);
        this.hopSessions.set(fresh, hopSession(fresh, transport));
        this.watchListChanges(fresh, this.info!);
        this.watchStreams(fresh);
        return fresh;
      });
      client.catch(() => this.sessions.delete(key));
      this.sessions.set(key, client);
    }
    return client;
  }

  /** Sessions follow the credential that is forwarded; with forwarding off, every caller shares one. */
  private sessionKey(onBehalfOf: OnBehalfOf): string {
    if (!this.config.forwardCredentials) return 'shared';
    return onBehalfOf.credential?.digest ?? 'anonymous';
  }

  /** What the hop needs of one forward: the credential headers and request id it was given, and the relays. */
  private hopCall(options: ForwardOptions): HopCall {
    return {
      credentialHeaders: this.config.forwardCredentials ? options.credential?.headers : undefined,
      requestId: options.requestId,
      signal: options.signal,
      onprogress: options.onprogress,
      onlog: options.onlog,
      onnotification: (method, params) => {
        const list = LIST_CHANGED[method];
        if (list) this.listChanged(list);
        const uri = (params as { uri?: unknown } | undefined)?.uri;
        if (method === 'notifications/resources/updated' && typeof uri === 'string') this.resourceUpdated(uri);
        if (method === 'notifications/tasks/status' && params !== null && typeof params === 'object') options.ontaskstatus?.(params as Record<string, unknown>);
      },
      oninputrequest: options.oninputrequest,
      // The hop bypasses the SDK transport's fetch hook, so the trace context goes on here.
      headers: withTraceHeaders(options.headers),
      allowInputRequired: options.allowInputRequired,
      allowTaskResult: options.allowTaskResult,
      timeoutMs: this.config.timeoutMs,
    };
  }

  private resourceUpdated(uri: string): void {
    for (const listener of this.resourceListeners.get(uri) ?? []) listener(uri);
  }

  private listChanged(method: ListMethod): void {
    this.log.info({ upstream: this.name, method }, 'upstream list changed');
    for (const listener of this.listeners) listener(method);
  }

  /**
   * The transport's fetch hook: static config headers, then the credential headers (when
   * `forwardCredentials`) and request id of the send under way (the forward scope {@link sendOnce} runs
   * SDK sends in), else of `otherwise` (what the transport was made for: a handshake, a credential's
   * session), and the current span's W3C trace context when tracing is on (obs/tracing.ts). Background
   * work (catalogue warm-up, reconnects, listen streams) runs outside both and carries neither.
   */
  private forwardingFetch(url: string | URL, init: RequestInit | undefined, otherwise: OnBehalfOf | undefined): Promise<Response> {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(this.config.headers)) headers.set(name, value);
    const scope = forwardScope.getStore() ?? otherwise;
    if (scope?.credential && this.config.forwardCredentials) for (const [name, value] of Object.entries(scope.credential.headers)) headers.set(name, value);
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
        void runInBackground(() => this.checkAlive());
    };
  }

  /**
   * One health probe (every `health.intervalMs`, outside any request). Up: HTTP upstreams get a `ping`
   * POST of their own (any HTTP answer proves the server alive, whatever the session or era), stdio ones
   * a `ping` request; a refused or reset connection marks the upstream lost at once, two probes in a row
   * without an answer within `health.timeoutMs` too. Down: a reconnect attempt, subject to
   * `restart.onDemandMinIntervalMs` (the supervisor's backoff alone can wait up to `restart.maxDelayMs`).
   * Never contacts an upstream that was never used (`idle`): the first connection is on first use.
   */
  private async probe(): Promise<void> {
    if (this.closed || this.probing) return;
    const health = this.supervisor.health();
    if (health.attempting || health.state === 'idle' || health.state === 'connecting') return;
    this.probing = true;
    try {
      if (health.state === 'down') {
        await this.supervisor.connection().catch(() => undefined);
        return;
      }
      const outcome = await this.ping();
      if (outcome === 'alive') this.silentProbes = 0;
      else if (outcome === 'lost' || ++this.silentProbes >= 2) {
        this.silentProbes = 0;
        const why = outcome === 'lost' ? 'refuses connections' : `did not answer two health probes within ${this.config.health.timeoutMs} ms`;
        this.lost(new GatewayError('upstream_unavailable', `upstream ${this.name} went away (it ${why})`, { upstream: this.name }));
      }
    } finally {
      this.probing = false;
    }
  }

  private async ping(): Promise<'alive' | 'lost' | 'silent'> {
    const timeoutMs = this.config.health.timeoutMs;
    try {
      if (this.transport === 'stdio') {
        // A JSON-RPC error answer (a server without ping) is an answer too.
        await this.shared?.ping({ timeout: timeoutMs }).catch((error: unknown) => {
          if (error instanceof SdkError && (error.code === SdkErrorCode.RequestTimeout || isConnectionLoss(error))) throw error;
        });
        return 'alive';
      }
      const response = await this.fetchUpstream(this.config.url!, {
        method: 'POST',
        headers: { ...this.config.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'gateway-health', method: 'ping' }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      return 'alive';
    } catch (error) {
      return isConnectionLoss(error) ? 'lost' : 'silent';
    }
  }

  private checkAlive(): Promise<void> {
    this.checking ??= (async () => {
      try {
        const response = await this.fetchUpstream(this.config.url!, {
          method: 'POST',
          headers: { ...this.config.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 'gateway-liveness', method: 'ping' }),
          signal: AbortSignal.timeout(LIVENESS_TIMEOUT_MS),
        });
        await response.body?.cancel();
      } catch (error) {
        if (isConnectionLoss(error))
          this.lost(
            new GatewayError('upstream_unavailable', `upstream ${this.name} went away (a response stream broke and it refuses connections)`, {
              upstream: this.name,
            }),
          );
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  /**
   * Holds a subscription to updates of `uri` at this upstream, outside any caller's request (no caller
   * credential), and calls `onUpdated` for each `notifications/resources/updated` it sends; resolves to
   * the subscription's closer, or undefined when this upstream cannot deliver updates: it does not
   * declare `resources.subscribe`, or it is a stateless 2025-era HTTP server (no stream to carry them).
   * A 2026-07-28 upstream gets a `subscriptions/listen` of its own per URI; a sessionful 2025-era one
   * `resources/subscribe` on one background session (which opens its standalone GET stream); stdio
   * `resources/subscribe` on its one session.
   */
  async watchResource(uri: string, onUpdated: (uri: string) => void): Promise<(() => Promise<void>) | undefined> {
    const info = await runInBackground(() => this.describe());
    if (info.capabilities.resources?.subscribe !== true) return undefined;
    const listeners = (this.resourceListeners.get(uri) ?? new Set<(uri: string) => void>()).add(onUpdated);
    this.resourceListeners.set(uri, listeners);
    const forget = () => {
      listeners.delete(onUpdated);
      if (listeners.size === 0) this.resourceListeners.delete(uri);
    };
    if (info.era === 'modern') {
      const subscription = await runInBackground(() => this.shared!.listen({ resourceSubscriptions: [uri] }));
      return async () => {
        forget();
        await subscription.close();
      };
    }
    if (this.transport === 'http' && !info.sessionful) {
      forget();
      return undefined;
    }
    const client = this.transport === 'stdio' ? this.shared! : await this.watchSession();
    await runInBackground(() => client.subscribeResource({ uri }));
    return async () => {
      forget();
      if (!this.resourceListeners.has(uri)) await runInBackground(() => client.unsubscribeResource({ uri })).catch(() => undefined);
    };
  }

  /** The background session of a sessionful 2025-era upstream that carries resource subscriptions (no caller's credential). */
  private watchSession(): Promise<Client> {
    this.watching ??= runInBackground(async () => {
      const client = this.newClient();
      const transport = new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: (url, init) => this.forwardingFetch(url, init, undefined) });
      await client.connect(transport, { timeout: Math.min(this.config.timeoutMs, CONNECT_TIMEOUT_MS) });
      this.watchListChanges(client, this.info!);
      return client;
    });
    this.watching.catch(() => (this.watching = undefined));
    return this.watching;
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
    client.setNotificationHandler('notifications/resources/updated', (notification) => this.resourceUpdated(notification.params.uri));
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
        (error: unknown) => this.log.info({ upstream: this.name, err: (error as Error).message }, 'upstream refused subscriptions/listen; relying on TTLs'),
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

/** The hop's view of a connected client: what its handshake negotiated, and the 2026-07-28 envelope it sends. */
function hopSession(client: Client, transport: StreamableHTTPClientTransport): HopSession {
  const era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  const protocolVersion = client.getNegotiatedProtocolVersion() ?? '2025-03-26';
  return {
    era,
    protocolVersion,
    sessionId: transport.sessionId,
    // The SDK client's outbound envelope (its codec's outboundEnvelope): this hop's client declares no capabilities.
    envelope:
      era === 'modern'
        ? { [PROTOCOL_VERSION_META_KEY]: protocolVersion, [CLIENT_INFO_META_KEY]: GATEWAY_CLIENT, [CLIENT_CAPABILITIES_META_KEY]: {} }
        : undefined,
  };
}

const LOST_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * Whether a failed request means the connection is gone (not that this one request failed): a refused
 * or reset connection, a closed transport (the stdio process exited). Timeouts, HTTP statuses and
 * JSON-RPC errors are about the request and leave the connection alone.
 */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof SdkHttpError) return false;
  if (error instanceof SdkError)
    return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed;
  if (!(error instanceof Error)) return false;
  if (error.message === 'Not connected') return true;
  const cause = (error as Error & { cause?: { code?: unknown } }).cause;
  return error.name === 'TypeError' && typeof cause?.code === 'string' && LOST_CONNECTION_CODES.has(cause.code);
}
