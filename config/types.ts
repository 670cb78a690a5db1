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
  credentials: { keyHeader: string; secretHeader: string; bearer: boolean };
  scopes: {
    /** GET endpoint answering the caller's scopes; absent: every caller sees the full catalogue. */
    endpoint?: string;
    field: string;
    timeoutMs: number;
    ttlMs: number;
    unknownTtlMs: number;
    maxEntries: number;
    sweepIntervalMs: number;
  };
  cache: { store: 'memory' | 'redis'; redisUrl?: string; ttlMs: number; maxEntries: number; operationTimeoutMs: number };
  compact: { enabled: boolean; searchLimit: number; maxSearchLimit: number };
  limits: { bodyBytes: number; maxListPages: number };
  /** `fastPath`: plain tools/list and tools/call answered without the SDK's per-request server (gateway/mcp/fast-path.ts). */
  dispatch: { fastPath: boolean };
  /**
   * `hiddenToolCalls`: what a direct tools/call of a catalogue tool the caller cannot see does
   * (gateway/policy/visibility.ts): `forward` to the upstream (its platform decides), or `refuse` as unknown.
   */
  policy: { hiddenToolCalls: 'forward' | 'refuse' };
  security: { allowedOrigins: string[]; allowedHosts: string[]; dnsRebindingProtection?: boolean };
  metrics: { enabled: boolean; port?: number };
  authorizationServers: string[];
  log: { level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  shutdown: { graceMs: number };
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
  };
}

/** A fixed-window budget: `points` requests per `durationMs` (whole seconds). */
export interface RateBudget {
  points: number;
  durationMs: number;
}

/** Search text for one tool from the gateway's config (upstreams[].tools.<name>). */
export interface ToolSearchOverrides {
  keywords?: string[];
  title?: string;
  description?: string;
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
  /** Budgets of this upstream's tools, each with its own counter: they replace the gateway-wide ones. */
  rateLimits: { reads?: RateBudget; writes?: RateBudget; tool?: RateBudget; tools: Record<string, RateBudget> };
}
