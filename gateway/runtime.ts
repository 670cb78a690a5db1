import { describeBreach, findLimitBreach } from './checks/input-limits.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FetchLike } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toFetchResponse, toReqRes } from 'fetch-to-node';
import type Koa from 'koa';
import type { DestinationStream } from 'pino';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { GatewayConfig, UpstreamConfig } from '../config/types.ts';
import { EmbeddingSearch, type VectorStore } from '../search/index.ts';
import { requireAnonymousWhereUnchecked } from '../config/load.ts';
import { isLoopbackHost } from '../config/hosts.ts';
import { ScopeCache } from './auth/scope-cache.ts';
import { Authenticator, credentialSources } from './auth/authenticate.ts';
import { receivesCallerCredential } from './policy/visibility.ts';
import { serverKey } from './auth/credentials.ts';
import { CatalogCache } from './catalog/catalog-cache.ts';
import { idleKeyScopes, type Catalog } from './catalog/catalog.ts';
import { ListingCache } from './catalog/listing.ts';
import { SearchIndexCache } from './catalog/search-index-cache.ts';
import { UpstreamSet } from './catalog/upstream-set.ts';
import { ResourceSubscriptionRelay } from './upstream/resource-subscriptions.ts';
import { InputBridge } from './upstream/input-bridge.ts';
import { MAX_TTL_MS, TaskIndex } from './store/task-index.ts';
import { InputValidator } from './checks/input-check.ts';
import { OutputValidator } from './checks/output-check.ts';
import { createListener, type McpMount } from './http/app.ts';
import { createMcpServerFactory } from './mcp/server.ts';
import type { Surface } from './ports.ts';
import { createLogger, FAILURE_LOG_INTERVAL_MS, throttledBy, type Logger } from './obs/log.ts';
import { createMetrics, type GatewayMetrics } from './obs/metrics.ts';
import type { GatewayRuntime, UpstreamRuntime } from './runtime-state.ts';
import { createKvStore, type KvStore } from './store/kv-store.ts';
import { kvVectorStore } from './store/vector-store.ts';
import { surfaces as defaultSurfaces } from './surfaces/surfaces.ts';
import { UpstreamClient } from './upstream/client.ts';
import { InflightCalls } from './upstream/inflight-calls.ts';
import { createOAuth } from './auth/oauth/index.ts';
import { credentialDigest } from './auth/credentials.ts';
import { createOutcomes, gatewaySubscribers } from './obs/outcomes.ts';
import { createAuditLog } from './obs/audit.ts';
import { createTracing, type Tracing } from './obs/tracing.ts';
import { anyBudget } from './policy/rate-limits.ts';
import { CALL_TOOL, RUN_CODE, SEARCH_TOOLS } from './policy/tool-resolution.ts';
import { authDecisions } from './auth/decisions.ts';
import { createRateLimiter, type RateLimiter } from './store/rate-limiter.ts';
import { RefusedCredentials } from './auth/refused-credentials.ts';
import { ListenStreams } from './store/listen-streams.ts';
import { PinGuard } from './catalog/pin-guard.ts';
import { lockedPinProblem } from './catalog/pinning.ts';
import { memoryPinStore, redisPinStore, type PinStore } from './store/pin-store.ts';
import { withLockFile } from './store/pin-lock-file.ts';
import type { ServedName } from './catalog/upstream-set.ts';
import { CodeSandbox } from './sandbox/sandbox.ts';

/** The secrets the demo stack ships in the open (config/cpzai.yaml, docker-compose.yml): warned about off loopback. */
const DEMO_SECRETS = {
  consoleAdminToken: 'demo-secret-console-admin',
  cacheKey: 'demo-cache-key-for-compose-only-0123456789',
  apiKeySecretPrefix: 'demo-secret-',
} as const;
/**
 * A configured API key's token or secret shorter than this is said to be guessable at start: a refused bearer token is
 * not counted (auth/refused-credentials.ts: a token is the whole secret), so a short one falls to a few thousand
 * requests (security try-out: 3,000 wrong tokens in 4.3 s, none refused 429). 16: the demo secrets' length.
 */
const MIN_CONFIGURED_SECRET_CHARS = 16;

export type { GatewayRuntime, UpstreamRuntime } from './runtime-state.ts';

/**
 * How the gateway reaches each HTTP upstream instead of the network: the fetch for that upstream, or
 * undefined for the network. The fetch receives exactly what the network would (the upstream's URL,
 * credential and request-id headers), so an in-memory upstream, e.g. `(url, init) =>
 * handler.fetch(new Request(url, init))` of an SDK `createMcpHandler`, is driven through the gateway's
 * real upstream client. stdio upstreams are spawned as configured.
 */
export type UpstreamTransport = (upstream: UpstreamConfig) => FetchLike | undefined;

export interface RuntimeOptions {
  /** Where HTTP upstream requests go; default the network (global fetch). */
  upstreamTransport?: UpstreamTransport;
  /** Use this logger (wins over `logDestination`). */
  logger?: Logger;
  /** Where JSON log lines go when no `logger` is given; default stdout. */
  logDestination?: DestinationStream;
  /** The MCP endpoints to mount; default `gateway/surfaces/surfaces.ts`. */
  surfaces?: readonly Surface[];
  /** Where audit events go instead of `audit.destination` (tests). */
  auditDestination?: DestinationStream;
  /** Export spans here, one at a time, instead of over OTLP (tests: an in-memory exporter). */
  spanExporter?: SpanExporter;
  /** Use this metric set (a live reload keeps the counters and the clients it carries over report to it). */
  metrics?: GatewayMetrics;
  /**
   * Live reload: upstreams of the previous runtime to take over, by name. `keep` takes the connection and
   * the catalogue cache as they are; `repolicy` takes the connection, hands it the new per-call settings
   * and builds a new catalogue cache under the new configuration (inheriting the readiness record). Upstreams not named get new clients.
   */
  reuse?: ReadonlyMap<string, { upstream: UpstreamRuntime; decision: 'keep' | 'repolicy' }>;
  /** Live reload: the previous runtime's pin store (the memory store holds the only copy of its pins). */
  pinStore?: PinStore;
  /** Live reload: the previous runtime's pin guard; its state carries over when {@link pinStore} is its store. */
  pins?: PinGuard;
  /** Live reload: the previous runtime's rate limiter (its counters: a reload opens no budget afresh). */
  rateLimiter?: RateLimiter;
  /** Live reload: the previous runtime's refused-credentials guard (the blocks it knows), kept when it counts alike. */
  refusedCredentials?: RefusedCredentials;
  /** Live reload: names the previous configuration served, kept callable (UpstreamSet.aliasesForNext). */
  aliases?: ReadonlyMap<string, ServedName>;
  /**
   * Live reload: the previous runtime's compiled schema validators (keyed by schema content, so valid
   * under any configuration): the first calls after a reload do not recompile every schema at once.
   */
  validators?: { inputs: InputValidator; outputs: OutputValidator };
  /**
   * Live reload: the previous runtime's code sandbox (configuration-free: limits come with each run), so
   * a reload spawns no worker and runs in progress still count against the run limits.
   */
  codeSandbox?: CodeSandbox;
  /** Live reload: the previous runtime's open listen streams per account, still open while it retires. */
  listenStreams?: ListenStreams;
  /** Live reload: the audit digest key the previous runtime generated (`audit.digestKey` not set): digests stay the same. */
  auditKey?: string;
  /**
   * Live reload: the previous runtime's tracing, when `tracing` did not change (or stays off): its
   * exporter carries on, and its startup line ("tracing off" / "tracing on") is not logged again.
   */
  tracing?: Tracing;
}

/**
 * One gateway built and wired, with no socket open: its long-lived state (caches, pools, upstream
 * clients), its Koa app and an in-process `fetch` that drives that app. `startGateway` (gateway.ts)
 * puts HTTP listeners in front of it.
 */
export interface Runtime {
  readonly state: GatewayRuntime;
  readonly app: Koa;
  /** The app as a Node request listener, for `http.createServer`. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests the app is serving now (graceful shutdown waits for them). */
  readonly inflight: { readonly count: number };
  /**
   * Serves one web `Request` through the real Koa app, edge included, without a socket. Resolves once
   * the response's head is written; its body streams (SSE answers arrive event by event). Cancelling
   * the body, or aborting `request.signal`, closes the response as a dropped connection would.
   */
  fetch(request: Request): Promise<Response>;
  /** Starts fetching every upstream's tools catalogue, then (with `/mcp/compact`) building its search index, in the background (never rejects). */
  warm(): void;
  /**
   * Fetches every upstream's tools catalogue, the merged catalogue and its search index, waiting at most
   * `deadlineMs`: a live reload serves with this runtime only once it can answer at once. Never rejects.
   */
  prepare(deadlineMs: number): Promise<void>;
  /**
   * Starts MCP authorization when `oauth.mode` is not `off` (gateway/auth/oauth): its issuer is
   * `oauth.issuer`, else `publicUrl`, else `listeningUrl` (startGateway passes the URL it bound).
   * Until then the app serves no authorization endpoints and takes no OAuth tokens. `serving`: the
   * runtime whose credential sources, rate budgets and audit trail the authorization server uses
   * (default this one); a live reload keeps the server and hands it to the runtime serving next, so
   * the gateway passes its current runtime, never one that a reload retires and closes.
   * @throws when the mode's settings are incomplete or its Redis cannot be reached.
   */
  startOAuth(listeningUrl?: string, serving?: () => GatewayRuntime): Promise<void>;
  /**
   * Closes the MCP handlers, upstream connections (stdio processes end), caches and stores, flushes traces and the audit log; with
   * `carried` (live reload), the upstream clients and catalogue caches in it are left open for the
   * runtime that took them over.
   */
  close(carried?: ReadonlySet<object>): Promise<void>;
  /** Ends every open `subscriptions/listen` stream cleanly (the MCP handlers closed), as `close` does first: a shutdown does it before cutting connections. */
  endStreams(): Promise<void>;
  /** Tells subscribed modern clients (subscriptions/listen) that tools, prompts and resources may have changed. */
  announceListsChanged(): void;
}

/**
 * Warns, once every upstream's catalogue is at hand (start-up and reload: `warm`), about each scope of an
 * API key that nothing needs (catalog.ts `idleKeyScopes`): a misspelt scope starts without complaint and
 * leaves its key seeing nothing of what it was meant to.
 */
function warnIdleKeyScopes(config: GatewayConfig, upstreams: readonly UpstreamRuntime[], pins: PinGuard, log: Logger): void {
  const catalogs = upstreams.map(({ catalog }) => catalog.lastCatalog());
  if (config.credentials.apiKeys.length === 0 || catalogs.some((catalog) => catalog === undefined)) return;
  // A tool held because the pin store could not be read is out of the catalogue, its scopes still needed (operator try-out:
  // with the pin store down every key's scopes were said to grant nothing): no verdict then; the next start or reload gives it.
  // (A tool held as new or for its lint findings grants nothing until approved: the warning is true of it.)
  if (pins.held().some((held) => held.reason === 'unverified')) return;
  const idle = idleKeyScopes(config.credentials.apiKeys, catalogs as Catalog[], config.upstreams);
  if (idle.length === 0) return;
  const named = idle.map((i) => `${i.key}: ${i.scope}${i.nearest ? ` (did you mean ${i.nearest}?)` : ''}`);
  log.warn({ idleScopes: named }, `API key scopes that no tool, resource or prompt of any upstream needs, so they grant nothing: ${named.join(', ')}`);
}

/** The shared (Redis) store a catalogue cache was given: it lives and closes with the cache, whichever runtime holds it. */
const catalogStores = new WeakMap<CatalogCache, KvStore>();

/**
 * The upstreams of a runtime for `config`: those a live reload hands over (`options.reuse`) taken over,
 * the others given new clients. Kept out of createRuntime: a closure there that reads `options` keeps it
 * (V8 keeps a captured variable in the scope every closure of it shares) for as long as the runtime
 * lives, and with it the retired runtime's pin guard, whose onChange holds that runtime, and so on back
 * to the first: every reload kept the one before it, catalogues and search index included (try-out: +21 MB
 * a reload at 10,000 tools).
 */
function upstreamRuntimes(
  config: GatewayConfig,
  options: Pick<RuntimeOptions, 'reuse' | 'upstreamTransport'>,
  made: {
    pins: PinGuard;
    metrics: GatewayMetrics;
    log: Logger;
    catalogCache: (client: UpstreamClient, upstreamConfig: UpstreamConfig, inherit?: CatalogCache) => CatalogCache;
  },
): UpstreamRuntime[] {
  const { pins, metrics, log, catalogCache } = made;
  return config.upstreams.map((upstreamConfig) => {
    const reused = options.reuse?.get(upstreamConfig.name);
    if (reused?.decision === 'keep') {
      reused.upstream.catalog.guardWith(pins);
      // Its settings are the same; the configuration's limits may not be.
      reused.upstream.client.reconfigure(upstreamConfig, config.limits);
      return reused.upstream;
    }
    if (reused?.decision === 'repolicy') {
      reused.upstream.client.reconfigure(upstreamConfig, config.limits);
      return { client: reused.upstream.client, catalog: catalogCache(reused.upstream.client, upstreamConfig, reused.upstream.catalog) };
    }
    const client = new UpstreamClient(upstreamConfig, config.limits, metrics, log, options.upstreamTransport?.(upstreamConfig));
    return { client, catalog: catalogCache(client, upstreamConfig) };
  });
}

/**
 * Builds a gateway for `config` (see config/load.ts) without opening a socket and without contacting
 * an upstream: upstreams are connected on first use (or by `warm()`). A config changed after loading
 * is held to the `anonymous` rule again (config/load.ts `requireAnonymousWhereUnchecked`).
 */
export function createRuntime(config: GatewayConfig, options: RuntimeOptions = {}): Runtime {
  requireAnonymousWhereUnchecked(config);
  const log = options.logger ?? createLogger(config, options.logDestination);
  const metrics = options.metrics ?? createMetrics();
  const stores: KvStore[] = [];
  const store = (name: string, ttlMs: number, maxEntries: number) => {
    const kv = createKvStore(config.cache, { name, ttlMs, maxEntries, metrics, log });
    stores.push(kv);
    return kv;
  };
  const catalogStore = (name: string) =>
    config.cache.store === 'redis'
      ? createKvStore(config.cache, { name: `catalog:${name}`, ttlMs: 24 * 3600_000, maxEntries: config.cache.maxEntries, metrics, log })
      : undefined;
  // Before the audit log: a lock file that refuses the start must leave no audit file stream half open (its
  // exit-time flush threw "sonic boom is not ready yet" after the refusal: try-out).
  const pinStore = options.pinStore ?? createPinStore(config, metrics, log);
  const audit = createAuditLog(config.audit, {
    destination: options.auditDestination,
    log,
    metrics,
    generatedKey: options.auditKey,
    overLimit: (value) => {
      const breach = findLimitBreach(value, config.limits);
      return breach && describeBreach(breach);
    },
  });
  // Every decision reported once (the MCP endpoints' and the authorization server's); the metrics, the audit trail and the request span subscribe.
  const outcomes = createOutcomes(gatewaySubscribers(metrics, audit));
  // An approval changes what is served without a new upstream catalogue: subscribed clients re-list.
  const pins = new PinGuard(config.pinning, pinStore, {
    metrics,
    audit,
    log,
    upstreams: config.upstreams.map((u) => u.name),
    onChange: () => announce(['tools/list']),
    ...(options.pinStore && options.pins?.store === options.pinStore ? { inherit: options.pins } : {}),
  });
  const catalogCache = (client: UpstreamClient, upstreamConfig: UpstreamConfig, inherit?: CatalogCache) => {
    const shared = catalogStore(upstreamConfig.name);
    const catalog = new CatalogCache(client, config.cache, metrics, log, shared, { policy: upstreamConfig, inherit, pins });
    if (shared) catalogStores.set(catalog, shared);
    return catalog;
  };
  // No closure of this function may read `options` (upstreamRuntimes says why): it holds the retired runtime's parts.
  const upstreams = upstreamRuntimes(config, options, { pins, metrics, log, catalogCache });
  const upstreamSet = new UpstreamSet(
    upstreams,
    config.naming.separator,
    log,
    options.aliases,
    // Shadowed only where /mcp/compact is served.
    config.compact.enabled ? [SEARCH_TOOLS, CALL_TOOL, ...(config.compact.codeMode.enabled ? [RUN_CODE] : [])] : [],
    config.pinning.lint,
  );
  const scopes = new ScopeCache(
    config.scopes,
    store(
      'scopes',
      Math.max(config.scopes.ttlMs, config.scopes.unknownTtlMs, config.scopes.unauthorizedTtlMs, config.scopes.staleIfErrorMs),
      config.scopes.maxEntries,
    ),
    metrics,
    log,
  );
  const digestKey = serverKey(config.cache.key);
  const previousDigestKey = config.cache.keyPrevious === undefined ? undefined : Buffer.from(config.cache.keyPrevious, 'utf8');
  if (config.cache.key === undefined && config.cache.store === 'redis') {
    log.warn(
      'cache.key is not set: credential digests use a key random to this process, so replicas sharing Redis will not share scope entries (set GATEWAY_CACHE_KEY on all of them)',
    );
  }
  // policy.hiddenToolCalls: forward holds only where an upstream can decide (visibility.ts hiddenToolCallsFor): said once, by name.
  const undecided = config.policy.hiddenToolCalls === 'forward' ? config.upstreams.filter((u) => !receivesCallerCredential(u)).map((u) => u.name) : [];
  if (undecided.length)
    log.warn(
      { upstreams: undecided },
      `policy.hiddenToolCalls is forward, but ${undecided.join(', ')} never ${undecided.length > 1 ? 'receive' : 'receives'} the caller's credential (stdio or forwardCredentials: false): calls of their tools a caller cannot see are refused as unknown`,
    );
  // ... and where one can, it alone decides: one that checks nothing runs any tool for any caller (try-out: every key of
  // credentials.apiKeys called a hidden state-changing tool; the general warning below did not say so).
  const deciding = config.policy.hiddenToolCalls === 'forward' ? config.upstreams.filter(receivesCallerCredential).map((u) => u.name) : [];
  if (deciding.length)
    log.warn(
      { upstreams: deciding },
      `policy.hiddenToolCalls is forward: a caller's call of a tool of ${deciding.join(', ')} it cannot see is sent there all the same, and only that upstream decides whether it runs; one that checks nothing about its caller runs it for anyone (set refuse unless every such upstream checks each call itself)`,
    );
  // The demo stack's secrets are public (config/cpzai.yaml, docker-compose.yml): on a bind others can reach, anyone who
  // read the repository holds the console's password or can compute the credential digests (deployment try-out).
  const demo = [
    config.console.adminToken === DEMO_SECRETS.consoleAdminToken ? 'console.adminToken (GATEWAY_CONSOLE_ADMIN_TOKEN)' : undefined,
    config.cache.key === DEMO_SECRETS.cacheKey ? 'cache.key (GATEWAY_CACHE_KEY)' : undefined,
    // The example configurations' keys default to the platform stand-in's demo secrets (`${DEMO_SECRET_FULL:-demo-secret-full}`: security try-out).
    ...config.credentials.apiKeys.filter((k) => k.secret?.startsWith(DEMO_SECRETS.apiKeySecretPrefix)).map((k) => `credentials.apiKeys ${k.name}'s secret`),
  ].filter((key) => key !== undefined);
  if (demo.length && !isLoopbackHost(config.listen.host))
    log.warn(
      { keys: demo },
      `${demo.join(' and ')} ${demo.length > 1 ? 'are' : 'is'} the demo stack's public value, and the gateway listens on ${config.listen.host}: set your own before anyone else can reach it`,
    );
  const short = config.credentials.apiKeys.flatMap((k) =>
    [
      k.token !== undefined && k.token.length < MIN_CONFIGURED_SECRET_CHARS ? `${k.name}'s token` : undefined,
      k.secret !== undefined && k.secret.length < MIN_CONFIGURED_SECRET_CHARS ? `${k.name}'s secret` : undefined,
    ].filter((what) => what !== undefined),
  );
  if (short.length)
    log.warn(
      { keys: short },
      `credentials.apiKeys: ${short.join(', ')} ${short.length > 1 ? 'are' : 'is'} shorter than ${MIN_CONFIGURED_SECRET_CHARS} characters and can be guessed (a refused bearer token is not counted at all; a key pair's secret, 20 tries per 15 minutes per address by default): use 32 or more random characters`,
    );
  // Settings of a mode not chosen are not read: an operator who filled them in most likely meant that mode.
  if (config.oauth.mode !== 'external' && config.oauth.external.issuer !== undefined)
    log.warn(
      { mode: config.oauth.mode },
      `oauth.external.issuer is set but oauth.mode is ${config.oauth.mode}: the external identity provider is not used (set oauth.mode: external to validate its tokens)`,
    );
  const rateLimiter = anyBudget(config)
    ? (options.rateLimiter ?? createRateLimiter({ store: config.rateLimits.store, cache: config.cache, metrics, log }))
    : undefined;
  const state: GatewayRuntime = {
    config,
    log,
    metrics,
    upstreams,
    upstreamSet,
    scopes,
    authenticator: new Authenticator(
      config,
      digestKey,
      credentialSources(config, digestKey, scopes),
      previousDigestKey ? { previousKey: previousDigestKey } : {},
    ),
    digestKey,
    ...(previousDigestKey ? { previousDigestKey } : {}),
    outputs: options.validators?.outputs ?? new OutputValidator(metrics, log),
    listings: new ListingCache(
      config.cache.listingBytes,
      (bytes, entries) => {
        metrics.listingCacheBytes.set(bytes);
        metrics.listingCacheEntries.set(entries);
      },
      (reason) => metrics.listingCacheEvictions.inc({ reason }),
    ),
    inputs: options.validators?.inputs ?? new InputValidator(log),
    searchIndexes: searchIndexes(
      config,
      log,
      metrics,
      // Tool vectors shared by replicas and restarts: only a shared store adds anything to the arm's own cache.
      config.search?.embeddings && config.cache.store === 'redis'
        ? kvVectorStore(store('embeddings', VECTOR_TTL_MS, config.cache.maxEntries), VECTOR_TTL_MS)
        : undefined,
    ),
    inflightCalls: new InflightCalls(log),
    repeatedWarnings: throttledBy(FAILURE_LOG_INTERVAL_MS),
    codeSandbox: options.codeSandbox ?? new CodeSandbox(),
    listenStreams: options.listenStreams ?? new ListenStreams(),
    streamsOpen: { count: 0 },
    // An upstream call waits for the caller's retry at most as long as the call itself may take.
    inputBridge: new InputBridge(Math.max(...config.upstreams.map((u) => u.timeoutMs))),
    // Held per URI at the upstream that owns it; its updates go to every surface's listen streams.
    resourceSubscriptions: new ResourceSubscriptionRelay(
      async (uri, onUpdated) => {
        const route = await upstreamSet.route('resources/read', { uri }).catch(() => undefined);
        return route?.upstream.client.watchResource(uri, onUpdated);
      },
      (uri) => {
        for (const { handler } of mounts) handler.notify.resourceUpdated(uri);
      },
      log,
    ),
    taskIndex: new TaskIndex(store('tasks', MAX_TTL_MS, config.cache.maxEntries)),
    tracing: options.tracing ?? createTracing(config.tracing, { log, metrics, ...(options.spanExporter ? { exporter: options.spanExporter } : {}) }),
    audit,
    authDecisions: authDecisions(outcomes),
    pins,
    outcomes,
    rateLimiter,
    refusedCredentials: RefusedCredentials.of(config, rateLimiter, digestKey, options.refusedCredentials),
    draining: false,
  };

  const served = (options.surfaces ?? defaultSurfaces).filter((s) => s.name !== 'compact' || config.compact.enabled);
  const mounts: McpMount[] = served.map((surface) => ({
    surface,
    handler: createMcpHandler(createMcpServerFactory(state, surface), {
      legacy: 'stateless',
      maxRequestBodySize: config.limits.bodyBytes,
      onerror: (error) => log.debug({ err: error.message, surface: surface.name }, 'MCP request rejected or failed'),
    }),
  }));
  // Upstream list changes reach modern callers subscribed with subscriptions/listen.
  function announce(methods: readonly string[]): void {
    for (const { handler } of mounts) {
      if (methods.includes('tools/list')) handler.notify.toolsChanged();
      if (methods.includes('prompts/list')) handler.notify.promptsChanged();
      if (methods.includes('resources/list')) handler.notify.resourcesChanged();
    }
  }
  const listening = upstreams.map(({ catalog }) => catalog.onChange((method) => announce([method])));
  // With several upstreams, one going away withholds its tools, prompts and resources from the merged
  // lists, and its return brings them back: the lists changed though no upstream said so.
  if (upstreams.length > 1)
    for (const { client } of upstreams) {
      const merged = () => announce(['tools/list', 'prompts/list', 'resources/list']);
      listening.push(client.onLost(merged), client.onReconnect(merged));
    }

  const inflight = { count: 0 };
  // The console's credential lookup asks this app's own MCP endpoints, in process (no socket, no network).
  const { app, listener } = createListener(state, mounts, inflight, (request, reached) => serveInProcess(listener, request, reached));
  let closing: Promise<void> | undefined;
  let streamsEnded: Promise<void> | undefined;
  const endStreams = (): Promise<void> => (streamsEnded ??= Promise.allSettled(mounts.map((m) => m.handler.close())).then(() => undefined));
  return {
    state,
    app,
    listener,
    inflight,
    fetch: (request) => serveInProcess(listener, request),
    warm: () => {
      void Promise.all(upstreams.map(({ catalog }) => catalog.warm())).then(async () => {
        warnIdleKeyScopes(config, upstreams, state.pins, log);
        // The merged catalogue, which notes an upstream left out of it now rather than at the first caller's list
        // (review), and the search index, as a reload prepares it: the first search does not wait for it, and the
        // first reload is not the process's first build (reading the word vectors, code not yet optimised).
        const catalog = await upstreamSet.catalog().catch(() => undefined);
        if (catalog && config.compact.enabled) await state.searchIndexes.get(catalog).catch(() => undefined);
      });
    },
    prepare: async (deadlineMs) => {
      let timer: NodeJS.Timeout | undefined;
      const ready = (async () => {
        await Promise.all(upstreams.map(({ catalog }) => catalog.warm()));
        const catalog = await upstreamSet.catalog().catch(() => undefined);
        if (catalog && config.compact.enabled) await state.searchIndexes.get(catalog).catch(() => undefined);
        if (config.compact.enabled && config.compact.codeMode.enabled) state.codeSandbox.warm(config.compact.codeMode.limits.memoryBytes);
      })();
      await Promise.race([ready, new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs)))]);
      clearTimeout(timer);
    },
    startOAuth: async (listeningUrl, serving = () => state) => {
      if (state.oauth) return;
      state.oauthStarting = true;
      try {
        state.oauth = await createOAuth(config, {
          log,
          issuer: listeningUrl,
          resourcePaths: served.map((s) => s.path),
          lookupScopes: (headers) => {
            const now = serving();
            return now.authenticator.resolveScopes({ kind: 'key', headers, digest: credentialDigest(headers, now.digestKey) });
          },
          // Built whenever oauth.mode is builtin (policy/rate-limits.ts anyBudget).
          rateLimiter: {
            consume: (charges) => serving().rateLimiter!.consume(charges),
            refund: (charges) => serving().rateLimiter!.refund(charges),
            // The serving runtime closes its own limiter.
            close: async () => {},
          },
          decide: (decision) => serving().authDecisions(decision),
        });
      } finally {
        state.oauthStarting = false;
      }
    },
    close: (carried) => (closing ??= closeAll(carried ?? new Set())),
    endStreams,
    announceListsChanged: () => announce(['tools/list', 'prompts/list', 'resources/list']),
  };

  async function closeAll(carried: ReadonlySet<object>): Promise<void> {
    for (const off of listening) off();
    try {
      await endStreams();
      // Before the upstream clients close: a carried-over client must not keep this runtime's watches.
      await state.resourceSubscriptions.close();
      state.inputBridge.close();
      await Promise.allSettled(
        upstreams.flatMap((u) => [
          carried.has(u.catalog) ? undefined : u.catalog.close().finally(() => catalogStores.get(u.catalog)?.close()),
          carried.has(u.client) ? undefined : u.client.close(),
        ]),
      );
      await state.scopes.close();
      state.pins.close();
      if (!carried.has(pinStore)) await pinStore.close();
      if (!(state.oauth && carried.has(state.oauth))) await state.oauth?.close();
      await Promise.allSettled([
        carried.has(state.tracing) ? undefined : state.tracing.shutdown(),
        state.audit.close(),
        state.rateLimiter && carried.has(state.rateLimiter) ? undefined : state.rateLimiter?.close(),
        carried.has(state.codeSandbox) ? undefined : state.codeSandbox.close(),
      ]);
    } finally {
      await Promise.allSettled(stores.map((s) => s.close()));
    }
  }
}

/**
 * What Koa reads of a socket (ctx.protocol, ctx.ip): an in-process request arrives as plain HTTP from loopback.
 * It has no local address or port, unless it is made for a request that had them (the console's lookup).
 */
const IN_PROCESS_SOCKET = Object.freeze({ encrypted: false, remoteAddress: '127.0.0.1', remotePort: 0 });

/**
 * Drives a Node request listener with a web Request (fetch-to-node builds the req/res pair) and hands
 * back the web Response. A Node server emits `close` on the response once it is finished or the peer
 * went away; the gateway relies on it (access log, accounting, the SDK adapter's abort), so it is
 * emitted here on finish, on body cancel and on `request.signal` abort. `reached`: the socket's local address
 * and port, for a request made on behalf of one that reached them (http/console/routes.ts `ServeInProcess`).
 */
async function serveInProcess(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  request: Request,
  reached?: { localPort?: number; localAddress?: string },
): Promise<Response> {
  const { req, res } = toReqRes(request);
  Object.defineProperty(req, 'socket', { value: reached ? Object.freeze({ ...IN_PROCESS_SOCKET, ...reached }) : IN_PROCESS_SOCKET });
  // A web Request carries no Host header (fetch derives it from the URL on the wire): add it, as the wire would.
  if (req.headers.host === undefined) req.headers.host = new URL(request.url).host;
  // Nor a framing header for its body; body parsers (type-is hasBody) need one to read it at all.
  if (request.body !== null && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
    req.headers['transfer-encoding'] = 'chunked';
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    res.destroy();
    res.emit('close');
  };
  res.once('finish', () => setImmediate(close));
  request.signal?.addEventListener('abort', close, { once: true });
  listener(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  const response = await toFetchResponse(res);
  if (!response.body) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      close();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** How long an embedded tool vector stays in the shared store unused: a month of catalogue versions. */
const VECTOR_TTL_MS = 30 * 24 * 3600_000;

/** The least time a Redis pin store operation is given, ms (`cache.operationTimeoutMs` when longer). */
const PIN_STORE_MIN_BUDGET_MS = 2000;

/**
 * The pin store the configuration asks for: Redis when `cache.store` is `redis`, else in memory; with
 * `pinning.lockFile`, kept in step with that file (store/pin-lock-file.ts).
 * @throws Error when the lock file exists and is not one, or holds a pin whose digest is not its definition's.
 */
export function createPinStore(config: GatewayConfig, metrics: GatewayMetrics, log: Logger): PinStore {
  const base =
    config.cache.store === 'redis'
      ? // A pin read is made once per catalogue version, not per request, and failing it holds tools: a
        // longer budget than a cache lookup's (a replica starting on a busy machine must not hold everything).
        redisPinStore({ cache: config.cache, operationTimeoutMs: Math.max(config.cache.operationTimeoutMs, PIN_STORE_MIN_BUDGET_MS), metrics, log })
      : memoryPinStore();
  return config.pinning.lockFile
    ? withLockFile(base, config.pinning.lockFile, log, lockedPinProblem(new Map(config.upstreams.map((u) => [u.name, u.metaKey]))))
    : base;
}

/** The search index cache, with the external embeddings arm when `search.embeddings` is configured (its
 *  tool vectors also kept in `vectors`, the shared store, when given). */
function searchIndexes(config: GatewayConfig, log: Logger, metrics: GatewayMetrics, vectors?: VectorStore): SearchIndexCache {
  const e = config.search?.embeddings;
  if (!e) return new SearchIndexCache(log, config.upstreams);
  const arm = new EmbeddingSearch(
    {
      baseUrl: e.url,
      model: e.model,
      apiKey: e.apiKeyEnv ? process.env[e.apiKeyEnv] : undefined,
      timeoutMs: e.timeoutMs,
      batchSize: e.batchSize,
      dimensions: e.dimensions,
    },
    (failure) => {
      metrics.searchEmbeddingFailures.inc({ stage: failure.stage });
      cache.embeddingFailed(failure);
    },
    vectors,
  );
  const cache = new SearchIndexCache(log, config.upstreams, arm);
  return cache;
}
