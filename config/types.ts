/**
 * The gateway configuration after loading: config/schema.json with its defaults applied.
 * The schema is the single source of truth for keys, bounds and defaults; this type mirrors it for the compiler.
 */
export interface GatewayConfig {
  listen: { host: string; port: number };
  /** Public base URL (behind a proxy); default: http://<Host header>. */
  publicUrl?: string;
  upstreams: UpstreamConfig[];
  /** With several upstreams: exposed names are `<upstream><separator><name>` (see gateway/catalog/naming.ts). */
  /** `aliasTtlMs`: how long a name a reload changed stays callable (catalog/catalog-merge.ts aliases). */
  naming: { separator: string; aliasTtlMs: number };
  /**
   * Serve requests that carry no credential, as a caller with no scopes (only public tools). Required
   * when an upstream receives no caller credential and no scope source is configured (load.ts).
   */
  anonymous: boolean;
  credentials: {
    keyHeader: string;
    secretHeader: string;
    bearer: boolean;
    /** The config's own credential source: each key's scopes; secrets from the environment (`${VAR}`). */
    apiKeys: ApiKeyConfig[];
  };
  scopes: {
    /** GET endpoint answering the caller's scopes; absent: every caller sees the full catalogue. */
    endpoint?: string;
    field: string;
    timeoutMs: number;
    ttlMs: number;
    unknownTtlMs: number;
    /** How long an authoritative no (401/403 from the endpoint) is remembered, ms; 0: never. */
    unauthorizedTtlMs: number;
    maxEntries: number;
    sweepIntervalMs: number;
    /** When the lookup itself fails (timeout, 5xx, no scopes field): serve the last good answer's scopes (`open`) or 503 (`closed`). */
    failureMode: ScopeFailureMode;
    /** `open`: the oldest last good answer served while the lookup fails (ms); 0: never. */
    staleIfErrorMs: number;
    /** Dotted path of the account id in the answer (rate budgets count per account). */
    accountField?: string;
  };
  cache: {
    store: 'memory' | 'redis';
    redisUrl?: string;
    /** Every Redis connection's TLS files, topology and name (gateway/store/redis-connection.ts). */
    redis: {
      clientName: string;
      tls: { caFile?: string; certFile?: string; keyFile?: string; serverName?: string };
      sentinel?: { masterName: string; nodes: string[] };
      cluster?: { nodes: string[] };
    };
    ttlMs: number;
    maxEntries: number;
    operationTimeoutMs: number;
    /** HMAC key of every credential digest (GATEWAY_CACHE_KEY); unset: random per process. */
    key?: string;
    /** The key being rotated out (GATEWAY_CACHE_KEY_PREVIOUS): what is keyed by its digests is still found. */
    keyPrevious?: string;
    /** Bound of the built tools/list answers kept in memory (gateway/catalog/listing.ts), bytes. */
    listingBytes: number;
    /** Bound of each upstream's cached lists (gateway/catalog/catalog-cache.ts), bytes. */
    catalogBytes: number;
  };
  compact: { enabled: boolean; searchLimit: number; maxSearchLimit: number; codeMode: CodeModeConfig };
  /** Body bytes, upstream list pages, and the structural limits of a POST body (gateway/checks/input-limits.ts) and its headers. */
  limits: {
    bodyBytes: number;
    /** Largest answer read from an HTTP upstream for one forwarded request (gateway/upstream/http-hop.ts `maxBytes`), bytes. */
    resultBytes: number;
    maxListPages: number;
    jsonDepth: number;
    stringLength: number;
    arrayLength: number;
    objectMembers: number;
    headerBytes: number;
    /** Longest prompt name or resource URI a request may name (http/classify.ts `nameBreach`). */
    nameLength: number;
    /** `subscriptions/listen` streams one account may hold open at once (store/listen-streams.ts). */
    listenStreamsPerAccount: number;
  };
  /** Node HTTP server timeouts (gateway/gateway.ts); `sendTimeoutMs`: an answer left unread (http/send-timeout.ts). */
  server: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; sendTimeoutMs: number };
  /** `alwaysLoad`: Claude Code's `_meta["anthropic/alwaysLoad"]` on /mcp's anchors and state-changing tools. */
  clientHints: { alwaysLoad: boolean };
  /** `fastPath`: plain tools/list and tools/call answered without the SDK's per-request server (gateway/mcp/fast-path.ts). */
  /** `compressListings`: large JSON tools/list answers in gzip when the caller accepts it (never on SSE). */
  dispatch: { fastPath: boolean; compressListings: boolean };
  /**
   * `hiddenToolCalls`: what a direct tools/call of a catalogue tool the caller cannot see does
   * (gateway/policy/visibility.ts): `refuse` it as unknown (the default), or `forward` to the upstream anyway.
   */
  policy: { hiddenToolCalls: 'forward' | 'refuse' };
  security: { allowedOrigins: string[]; allowedHosts: string[]; dnsRebindingProtection?: boolean; trustedProxies: string[] };
  metrics: { enabled: boolean; port?: number };
  /** Issuers listed in the RFC 9728 documents besides the one `oauth` brings (builtin: this gateway; external: its issuer). */
  authorizationServers: string[];
  oauth: OAuthConfig;
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  /** Graceful shutdown (gateway.ts `close`): `drainMs` serving while /readyz answers 503 (SIGTERM), then `graceMs` for what is in flight. */
  shutdown: { drainMs: number; graceMs: number };
  /** OpenTelemetry traces over OTLP/HTTP (gateway/obs/tracing.ts); filled from the standard OTEL_* variables. */
  tracing: {
    /** `otlp` exports spans; `none` (default unless an OTLP endpoint variable is set) records nothing. */
    exporter: 'none' | 'otlp';
    /** OTLP/HTTP traces URL, e.g. http://localhost:4318/v1/traces. */
    endpoint: string;
    /** OTLP/HTTP body encoding: `http/protobuf` (the OTLP default) or `http/json`. */
    protocol: 'http/protobuf' | 'http/json';
    serviceName: string;
    headers: Record<string, string>;
    timeoutMs: number;
  };
  /** The audit trail of tool decisions (gateway/obs/audit.ts). */
  audit: {
    /** `off`, `stdout`, `stderr`, or a file path (appended to; its folder is created). */
    destination: string;
    /** HMAC key of the credential and argument digests; absent: a key generated per process (logged as a warning). */
    digestKey?: string;
  };
  /** Rate budgets per credential (gateway/policy/rate-limits.ts); an absent budget is no limit. */
  rateLimits: {
    /** Where the counters live; default: follows `cache.store` (Redis at `cache.redisUrl`). */
    store: 'memory' | 'redis';
    /** Every MCP POST of a credential; over it: HTTP 429 with Retry-After. */
    requests?: RateBudget;
    /** A credential's calls of read-only tools; over it: an isError result saying when to retry. */
    reads?: RateBudget;
    /** A credential's calls of state-changing tools. */
    writes?: RateBudget;
    /** A credential's calls of any one tool. */
    tool?: RateBudget;
    /** RFC 7591 registrations (built-in authorization server): from one client address, and from everyone. */
    registrations: { perAddress?: RateBudget; total?: RateBudget };
    /** Attempts on the OAuth sign-in page, counted before the key is checked: naming one key, through one client, from one address. */
    signIns: { perKey?: RateBudget; perClient?: RateBudget; perAddress?: RateBudget };
    /** Console requests with a wrong admin token, from one address. */
    consoleSignIns: { perAddress?: RateBudget };
    /** Refused key pairs on the MCP endpoints, naming one key from one address (auth/refused-credentials.ts). */
    refusedCredentials: { perKey?: RateBudget };
  };
  /** The operator console at /console: mounted only when `adminToken` is set. */
  console: { adminToken?: string };
  /** The check that this gateway is not one of several without a shared store (gateway/ops/replica-check.ts). */
  replicas: { dnsName?: string; checkIntervalMs: number };
  /** Tool definition pins and the description lint (gateway/catalog/pin-guard.ts). */
  pinning: PinningConfig;
  /** Live reload: SIGHUP always; `watch` also on changes of the config file. */
  reload: { watch: boolean };
  /** search_tools' ranking (search/): the optional external semantic arm. */
  search: { embeddings?: EmbeddingsConfig };
}

/** `pinning` (gateway/catalog/pin-guard.ts, issue 30). */
export interface PinningConfig {
  /** A changed definition of a pinned tool: `hold` it, `warn` and serve it, or `off` (no pins). */
  mode: 'hold' | 'warn' | 'off';
  /** A tool first listed after its upstream's first catalogue: `accept` (trust on first use) or `hold`. */
  newTools: 'accept' | 'hold';
  /** Lint findings other than invisible characters (always removed): `warn`, `hold`, or `off`. */
  lint: 'warn' | 'hold' | 'off';
  /** Absolute path of the pin lock file (config/load.ts resolves it against the configuration's folder); absent: none. */
  lockFile?: string;
}

/** A fixed-window budget: `points` requests per `durationMs` (whole seconds); over it, refused for `blockMs` (default: until the window ends). */
export interface RateBudget {
  points: number;
  durationMs: number;
  blockMs?: number;
}

/**
 * An OpenAI-compatible embeddings endpoint (`POST {url}/embeddings`: Ollama, vLLM, TEI, hosted services)
 * used as search_tools' semantic arm in place of the in-process one (search/semantic/embeddings.ts).
 */
export interface EmbeddingsConfig {
  /** Base URL up to the API version, e.g. `http://127.0.0.1:11434/v1`. */
  url: string;
  model: string;
  /** Environment variable holding the API key (sent as `Authorization: Bearer`); the key itself is never in the config. */
  apiKeyEnv?: string;
  /** Budget of one request, ms. */
  timeoutMs: number;
  /** Texts per request. */
  batchSize: number;
  /** Vector length asked of the model (`dimensions`); absent: the model's own. */
  dimensions?: number;
}

/** Search text for one tool from the gateway's config (upstreams[].tools.<name>). */
export interface ToolSearchOverrides {
  keywords?: string[];
  title?: string;
  description?: string;
}

export type ScopeFailureMode = 'open' | 'closed';

/** One API key of `credentials.apiKeys`: a key id + secret pair, or a bearer token. */
export interface ApiKeyConfig {
  /** Names the key in logs and metrics; never secret. */
  name: string;
  /** Sent in `credentials.keyHeader`, with `secret` in `credentials.secretHeader`. */
  key?: string;
  secret?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  scopes: string[];
}

/** One upstream MCP server: `url` (Streamable HTTP, either era) or `command` (stdio, spawned and supervised). */
export interface UpstreamConfig {
  name: string;
  url?: string;
  /** stdio: the executable; `args`, `env` (on top of a minimal inherited set) and `cwd` go with it. */
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Static headers sent on every upstream request; `${VAR}` is replaced from the environment at load. */
  headers: Record<string, string>;
  /** Send the caller's credential headers upstream (HTTP only). */
  forwardCredentials: boolean;
  timeoutMs: number;
  /** `_meta` key holding `{ category, requiredScopes }` on each tool. */
  metaKey: string;
  /** tool name -> required scopes (any one suffices); wins over `_meta`; `[]` makes the tool public. */
  scopeRules: Record<string, string[]>;
  scopes: {
    /** `scopes.failureMode` unless set here (filled in at load). */
    failureMode: ScopeFailureMode;
    /**
     * Scopes (any one suffices) for this upstream's resources, prompts and completions, and for its
     * tools with neither a scope rule nor `_meta` scopes; `[]`: public.
     */
    required: string[];
  };
  readOnlyOverrides: Record<string, boolean>;
  anchors: string[];
  /** Most read tools listed up front on /mcp/compact: `anchors` first, then model-visible MCP Apps tools in catalogue order. */
  maxAnchors: number;
  categories: Record<string, string>;
  outputSchemas: Record<string, Record<string, unknown>>;
  /** tool name -> what search_tools reads besides the definition: extra `keywords` (a field of their own),
   *  and a `title`/`description` indexed in place of the upstream's (the listing is unchanged). */
  tools: Record<string, ToolSearchOverrides>;
  catalog: { ttlMs?: number; cacheScope?: 'public' | 'private' };
  sessions: { maxEntries: number };
  /** HTTP: most sockets the forwarded-request pool keeps open to this upstream (keep-alive; more requests queue). */
  connections: number;
  /** Reconnect/restart backoff after the upstream went away. */
  restart: { minDelayMs: number; maxDelayMs: number; stableAfterMs: number; onDemandMinIntervalMs: number };
  /** The periodic health probe; `intervalMs` 0 turns it off. */
  health: { intervalMs: number; timeoutMs: number };
  /** Budgets of this upstream's tools, each with its own counter: they replace the gateway-wide ones. */
  rateLimits: { reads?: RateBudget; writes?: RateBudget; tool?: RateBudget; tools: Record<string, RateBudget> };
}

/**
 * MCP authorization (spec 2025-11-25 and 2026-07-28 basic/authorization): `builtin` runs an OAuth 2.1
 * authorization server on the gateway's origin (gateway/auth/oauth), `external` validates JWT access
 * tokens of an existing identity provider, `off` accepts only the credential headers.
 */
export interface OAuthConfig {
  mode: 'off' | 'builtin' | 'external';
  /** builtin: the issuer identifier; default `publicUrl`, else the URL the gateway listens on. */
  issuer?: string;
  /** Root key (GATEWAY_TOKEN_SECRET) sealing tokens and wrapping credentials, shared by every replica. */
  tokenSecret?: string;
  /** The root key being rotated out (GATEWAY_TOKEN_SECRET_PREVIOUS): what it sealed still opens until it expires. */
  tokenSecretPrevious?: string;
  /** Shown on the sign-in and consent pages. */
  serviceName: string;
  /** `scopes_supported` (RFC 9728 and RFC 8414) and the scopes a token may carry. */
  scopes: string[];
  /** Scope -> one line saying what it allows (the consent page, the console). */
  scopeDescriptions: Record<string, string>;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  authorizationCodeTtlSeconds: number;
  /** How long a sign-in page stays usable. */
  interactionTtlSeconds: number;
  /** RFC 7591 dynamic client registration. */
  registration: boolean;
  /** RFC 7591 §3: registration requires `Authorization: Bearer <initialAccessToken>`. */
  initialAccessToken?: string;
  /** Registered clients: forgotten after `unusedTtlSeconds` without a completed authorization, else after `idleTtlSeconds` idle; metadata at most `maxMetadataBytes`. */
  clients: { unusedTtlSeconds: number; idleTtlSeconds: number; maxMetadataBytes: number };
  clientMetadataDocuments: { enabled: boolean; timeoutMs: number; maxBytes: number; cacheTtlMs: number; allowLoopback: boolean; caFile?: string };
  /** Without Redis: bytes of the in-process store's evictable part (unused registrations, sign-in pages). */
  memoryStoreBytes: number;
  external: {
    issuer?: string;
    /** Expected `aud`; default: the canonical URL of the endpoint the token is presented to. */
    audience?: string;
    /** Default: `jwks_uri` of the issuer's RFC 8414 / OIDC discovery document. */
    jwksUri?: string;
    algorithms: string[];
    /**
     * Accepted JWT `typ` header values (RFC 9068 §4: `at+jwt`), compared as RFC 7515 §4.1.9 reads a media
     * type (case-insensitive, `application/` implied); `''` accepts a token with no `typ`.
     */
    tokenTypes: string[];
    /** Claim holding the scopes: a space-delimited string or an array. */
    scopeClaim: string;
    /** IdP scope -> platform scopes; an IdP scope not listed maps to itself. */
    scopeMap: Record<string, string[]>;
    /** Tolerance on `exp`, `nbf` and `iat`, s. */
    clockSkewSeconds: number;
    /** How long after its `iat` a token is accepted, whatever its `exp`, s (a leaked long-lived token is not good for longer). */
    maxTokenAgeSeconds: number;
    /** Answer a call of a tool the token's scopes do not reach with 403 insufficient_scope (reveals the tool exists). */
    insufficientScope: boolean;
    /** Sent upstream instead of the caller's token (a service credential); `${VAR}` from the environment. */
    credentialHeaders: Record<string, string>;
  };
}

/** `compact.codeMode`: the run_code tool (gateway/surfaces/run-code.ts) and its sandbox's limits (gateway/sandbox/). */
export interface CodeModeConfig {
  enabled: boolean;
  /** Budget of run_code's TypeScript declarations, UTF-8 bytes. */
  declarationBytes: number;
  limits: {
    memoryBytes: number;
    instructions: number;
    wallTimeMs: number;
    outputBytes: number;
    toolCalls: number;
    concurrentRunsPerCredential: number;
    concurrentRuns: number;
  };
}
