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
  naming: { separator: string };
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
    maxEntries: number;
    sweepIntervalMs: number;
    /** When the lookup itself fails (timeout, 5xx, no scopes field): serve unfiltered (`open`) or 503 (`closed`). */
    failureMode: ScopeFailureMode;
  };
  cache: {
    store: 'memory' | 'redis';
    redisUrl?: string;
    ttlMs: number;
    maxEntries: number;
    operationTimeoutMs: number;
    /** HMAC key of every credential digest (GATEWAY_CACHE_KEY); unset: random per process. */
    key?: string;
  };
  compact: { enabled: boolean; searchLimit: number; maxSearchLimit: number };
  limits: { bodyBytes: number; maxListPages: number };
  /** `fastPath`: plain tools/list and tools/call answered without the SDK's per-request server (gateway/mcp/fast-path.ts). */
  dispatch: { fastPath: boolean };
  /**
   * `hiddenToolCalls`: what a direct tools/call of a catalogue tool the caller cannot see does
   * (gateway/policy/visibility.ts): `refuse` it as unknown (the default), or `forward` to the upstream anyway.
   */
  policy: { hiddenToolCalls: 'forward' | 'refuse' };
  security: { allowedOrigins: string[]; allowedHosts: string[]; dnsRebindingProtection?: boolean };
  metrics: { enabled: boolean; port?: number };
  authorizationServers: string[];
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  shutdown: { graceMs: number };
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
  categories: Record<string, string>;
  outputSchemas: Record<string, Record<string, unknown>>;
  /** tool name -> what search_tools reads besides the definition: extra `keywords` (a field of their own),
   *  and a `title`/`description` indexed in place of the upstream's (the listing is unchanged). */
  tools: Record<string, ToolSearchOverrides>;
  catalog: { ttlMs?: number; cacheScope?: 'public' | 'private' };
  sessions: { maxEntries: number };
  /** Reconnect/restart backoff after the upstream went away. */
  restart: { minDelayMs: number; maxDelayMs: number; stableAfterMs: number };
}
