import { Client, SdkHttpError, StreamableHTTPClientTransport, type FetchLike, type ServerCapabilities } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig, UpstreamConfig } from '../config/types.ts';
import { GatewayError, classifyUpstreamFailure } from './errors.ts';
import type { Logger } from './log.ts';
import type { GatewayMetrics } from './metrics.ts';
import { currentRequest, runOutsideRequest } from './request-context.ts';

/** The paginated list methods an upstream serves, and the result key holding their items. */
export const LIST_ITEMS = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;
export type ListMethod = keyof typeof LIST_ITEMS;

/** The per-request methods forwarded with the caller's credential. */
export type ForwardMethod = 'tools/call' | 'resources/read' | 'prompts/get' | 'completion/complete';

/** What the upstream advertised when the gateway connected. */
export interface UpstreamInfo {
  era: 'modern' | 'legacy';
  /** Legacy upstream that issued a session id: one session per credential digest. */
  sessionful: boolean;
  capabilities: ServerCapabilities;
  instructions?: string;
}

/** All pages of one list, with the cache hints of the first page (2026-07-28 upstreams only). */
export interface ListResult {
  items: unknown[];
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

export interface ForwardOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

type ListChanged = (method: ListMethod) => void;

const GATEWAY_CLIENT = { name: 'mcp-catalog-gateway', version: '0.1.0' };
const CONNECT_RETRY_MS = 1000;

/**
 * The gateway's connection to one upstream MCP server over Streamable HTTP (either era). It moves
 * bytes and knows no policy.
 *
 * How clients are kept: a modern (2026-07-28) or stateless legacy upstream gets ONE long-lived
 * Client shared by every caller; the caller's credential and request id are added per HTTP request
 * by the transport's `fetch`, read from the request context (AsyncLocalStorage). A sessionful legacy
 * upstream (it issued an Mcp-Session-Id) gets one Client per credential digest, in a bounded LRU pool
 * (`sessions.maxEntries`), re-initialised once when the upstream answers 404 for the session.
 */
export class UpstreamClient {
  private shared?: Client;
  private info?: UpstreamInfo;
  private connecting?: Promise<UpstreamInfo>;
  /** After a failed connect, callers fail fast until then (no connect storm against a dead upstream). */
  private retryAfter = 0;
  private lastConnectError?: GatewayError;
  private readonly sessions: LRUCache<string, Promise<Client>>;
  private readonly listeners = new Set<ListChanged>();
  private closed = false;

  constructor(
    readonly config: UpstreamConfig,
    private readonly limits: GatewayConfig['limits'],
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {
    this.sessions = new LRUCache({ max: config.sessions.maxEntries, dispose: (client) => void client.then((c) => c.close()).catch(() => {}) });
  }

  get name(): string {
    return this.config.name;
  }

  /** Connects on first use (probing the era with server/discover) and returns what the upstream advertised. */
  describe(): Promise<UpstreamInfo> {
    if (this.info) return Promise.resolve(this.info);
    if (this.lastConnectError && Date.now() < this.retryAfter) return Promise.reject(this.lastConnectError);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** Registers a callback for upstream list_changed notifications (cache invalidation). */
  onListChanged(listener: ListChanged): void {
    this.listeners.add(listener);
  }

  /**
   * Fetches every page of a list with the low-level request API, before any filtering. A cursor seen
   * twice or more than `limits.maxListPages` pages fails the fetch: a list is never silently truncated.
   */
  async listAll(method: ListMethod): Promise<ListResult> {
    const key = LIST_ITEMS[method];
    const seen = new Set<string>();
    const items: unknown[] = [];
    let first: Record<string, unknown> | undefined;
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > this.limits.maxListPages) throw new GatewayError('upstream_error', `upstream ${this.name} returned more than ${this.limits.maxListPages} pages of ${method}`);
      const result = (await this.send(method, cursor === undefined ? {} : { cursor })) as Record<string, unknown>;
      first ??= result;
      items.push(...((result[key] as unknown[] | undefined) ?? []));
      const next = result.nextCursor;
      if (typeof next !== 'string') break;
      if (seen.has(next)) throw new GatewayError('upstream_error', `upstream ${this.name} repeated cursor "${next.slice(0, 40)}" in ${method}: pagination loop`);
      seen.add(next);
      cursor = next;
    }
    const cacheScope = first.cacheScope === 'public' || first.cacheScope === 'private' ? first.cacheScope : undefined;
    return { items, ttlMs: typeof first.ttlMs === 'number' ? first.ttlMs : undefined, cacheScope };
  }

  /** Forwards one per-request method with the caller's credential (from the request context). */
  async forward(method: ForwardMethod, params: Record<string, unknown>, options: ForwardOptions = {}): Promise<Record<string, unknown>> {
    return (await this.send(method, params, options)) as Record<string, unknown>;
  }

  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.shared?.close();
    } finally {
      this.sessions.clear();
    }
  }

  private async send(method: string, params: Record<string, unknown>, options: ForwardOptions = {}): Promise<unknown> {
    const started = performance.now();
    try {
      return await this.sendOnce(method, params, options, true);
    } catch (error) {
      const failure = classifyUpstreamFailure(error, this.name);
      this.metrics.upstreamErrors.inc({ upstream: this.name, kind: failure.kind });
      throw error;
    } finally {
      this.metrics.upstreamRequestDuration.observe({ upstream: this.name, method }, (performance.now() - started) / 1000);
    }
  }

  private async sendOnce(method: string, params: Record<string, unknown>, options: ForwardOptions, retrySession: boolean): Promise<unknown> {
    const info = await this.describe();
    const client = info.sessionful ? await this.sessionClient() : this.shared!;
    try {
      return await client.request({ method: method as 'tools/call', params }, {
        signal: options.signal,
        onprogress: options.onprogress,
        resetTimeoutOnProgress: options.onprogress !== undefined,
        timeout: this.config.timeoutMs,
      });
    } catch (error) {
      // A sessionful upstream forgot the session (restart, expiry): start a new one, once.
      if (info.sessionful && retrySession && error instanceof SdkHttpError && error.status === 404) {
        this.sessions.delete(this.sessionKey());
        return this.sendOnce(method, params, options, false);
      }
      throw error;
    }
  }

  private async connect(): Promise<UpstreamInfo> {
    if (this.closed) throw new GatewayError('upstream_unavailable', `upstream ${this.name} is closed`);
    if (!this.config.url) throw new GatewayError('upstream_unavailable', `upstream ${this.name}: stdio upstreams are not supported yet`);
    const client = this.newClient();
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), { fetch: this.forwardingFetch });
    try {
      await client.connect(transport, { timeout: Math.min(this.config.timeoutMs, 10_000) });
    } catch (error) {
      await client.close().catch(() => {});
      const failure = classifyUpstreamFailure(error, this.name);
      this.metrics.upstreamErrors.inc({ upstream: this.name, kind: failure.kind });
      this.lastConnectError = new GatewayError(failure.kind === 'unauthorized' ? 'unauthorized' : 'upstream_unavailable', `${failure.message} (connecting)`);
      this.retryAfter = Date.now() + CONNECT_RETRY_MS;
      this.log.warn({ upstream: this.name, reason: failure.message }, 'cannot connect to upstream');
      throw this.lastConnectError;
    }
    const info: UpstreamInfo = {
      era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
      sessionful: transport.sessionId !== undefined,
      capabilities: client.getServerCapabilities() ?? {},
      instructions: client.getInstructions(),
    };
    if (info.sessionful) this.sessions.set(this.sessionKey(), Promise.resolve(client));
    else this.shared = client;
    this.watchListChanges(client, info);
    this.info = info;
    this.log.info({ upstream: this.name, era: info.era, sessionful: info.sessionful, version: client.getNegotiatedProtocolVersion() }, 'connected to upstream');
    return info;
  }

  private newClient(): Client {
    return new Client(GATEWAY_CLIENT, {
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: Math.min(this.config.timeoutMs, 10_000) } },
      // The gateway relays input_required results it cannot fulfil itself; they surface as errors.
      inputRequired: { autoFulfill: false },
      listMaxPages: this.limits.maxListPages,
    });
  }

  /** The pooled session of the current caller's credential (sessionful legacy upstreams). */
  private sessionClient(): Promise<Client> {
    const key = this.sessionKey();
    let client = this.sessions.get(key);
    if (!client) {
      const fresh = this.newClient();
      client = fresh
        .connect(new StreamableHTTPClientTransport(new URL(this.config.url!), { fetch: this.forwardingFetch }), { timeout: Math.min(this.config.timeoutMs, 10_000) })
        .then(() => {
          this.watchListChanges(fresh, this.info!);
          return fresh;
        });
      client.catch(() => this.sessions.delete(key));
      this.sessions.set(key, client);
    }
    return client;
  }

  private sessionKey(): string {
    return currentRequest()?.credential?.digest ?? 'anonymous';
  }

  /**
   * The transport's fetch: static config headers, then the caller's credential headers (when
   * `forwardCredentials`) and request id from the request context. Background work (catalogue
   * refresh, listen streams) runs outside any request and carries neither.
   */
  private readonly forwardingFetch: FetchLike = (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(this.config.headers)) headers.set(name, value);
    const request = currentRequest();
    if (request?.credential && this.config.forwardCredentials) for (const [name, value] of Object.entries(request.credential.headers)) headers.set(name, value);
    if (request) headers.set('x-request-id', request.requestId);
    return fetch(url, { ...init, headers });
  };

  private watchListChanges(client: Client, info: UpstreamInfo): void {
    const notify = (method: ListMethod) => () => {
      this.log.info({ upstream: this.name, method }, 'upstream list changed');
      for (const listener of this.listeners) listener(method);
    };
    client.setNotificationHandler('notifications/tools/list_changed', notify('tools/list'));
    client.setNotificationHandler('notifications/prompts/list_changed', notify('prompts/list'));
    client.setNotificationHandler('notifications/resources/list_changed', notify('resources/list'));
    const caps = info.capabilities;
    const filter = { toolsListChanged: caps.tools?.listChanged === true, promptsListChanged: caps.prompts?.listChanged === true, resourcesListChanged: caps.resources?.listChanged === true };
    if (info.era !== 'modern' || !Object.values(filter).some(Boolean)) return;
    // The listen stream outlives the request that connected: it must not carry that caller's credential.
    runOutsideRequest(() =>
      client.listen(filter).then(
        (subscription) => void subscription.closed.then((how) => how === 'remote' && !this.closed && this.log.warn({ upstream: this.name }, 'upstream listen stream ended; relying on TTLs')),
        (error: unknown) => this.log.info({ upstream: this.name, err: (error as Error).message }, 'upstream refused subscriptions/listen; relying on TTLs'),
      ),
    );
  }
}
