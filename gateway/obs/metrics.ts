import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The gateway's Prometheus metrics (issue 7), one registry per gateway instance so several gateways
 * can live in one process (tests). Label values are bounded: tool names only from the catalogue
 * ({@link toolLabel}), never credentials, digests, ids or arguments.
 */
export interface GatewayMetrics {
  registry: Registry;
  httpRequestDuration: Histogram<'route' | 'method' | 'status_code'>;
  mcpRequests: Counter<'endpoint' | 'method' | 'era' | 'outcome'>;
  toolCalls: Counter<'endpoint' | 'tool' | 'via' | 'outcome'>;
  toolCallDuration: Histogram<'tool'>;
  /** run_code runs by outcome (ok|script_error|limit|cancelled|refused|error) and, for a limit, which one. */
  codeRuns: Counter<'outcome' | 'limit'>;
  codeRunDuration: Histogram<string>;
  upstreamRequestDuration: Histogram<'upstream' | 'method'>;
  upstreamErrors: Counter<'upstream' | 'kind'>;
  upstreamUp: Gauge<'upstream'>;
  upstreamReconnects: Counter<'upstream'>;
  scopeLookups: Counter<'result'>;
  scopeLookupDuration: Histogram<string>;
  catalogTools: Gauge<'upstream'>;
  catalogRefreshes: Counter<'upstream' | 'outcome'>;
  searchDuration: Histogram<string>;
  /** External embeddings endpoint failures (search answered by the index alone), by stage (tools|query). */
  searchEmbeddingFailures: Counter<'stage'>;
  configUnmatchedRules: Gauge<'upstream'>;
  configReloads: Counter<'outcome'>;
  /** Audit lines `audit.destination` failed to write (each is also a throttled error log line). */
  auditWriteErrors: Counter<string>;
  auditLinesDropped: Counter<string>;
  /** Span batches the OTLP exporter failed to deliver (each is also a throttled warning log line). */
  traceExportFailures: Counter<string>;
  /** Spans by what became of them: exported, export_failed, dropped (obs/tracing.ts). */
  traceSpans: Counter<'outcome'>;
  outputSchemaViolations: Counter<'tool'>;
  outputSchemaCompileFailures: Counter<'tool'>;
  advertisedTools: Gauge<'endpoint'>;
  toolsListBytes: Histogram<'endpoint'>;
  cacheStoreErrors: Counter<'cache' | 'op'>;
  pinStoreLosses: Counter<'upstream'>;
  rateLimited: Counter<'budget'>;
  /** Credentials a sign-in page accepted (built-in authorization server). */
  oauthSignIns: Counter<string>;
  /** Refusals of the authorization server and its pages, by endpoint and reason (an RFC 6749/7591 code or the gateway's own). */
  oauthRefusals: Counter<'endpoint' | 'reason'>;
  /** A consumed refresh token (or authorization code) presented again: its whole grant revoked. */
  oauthRefreshReuse: Counter<string>;
  listingCacheBytes: Gauge<string>;
  listingCacheEntries: Gauge<string>;
  listingCacheEvictions: Counter<string>;
  catalogCacheBytes: Gauge<string>;
  catalogCacheEvictions: Counter<string>;
  /** Connections reset because their client took none of an answer for `server.sendTimeoutMs` (http/send-timeout.ts). */
  sendTimeouts: Counter<string>;
  /** Replicas of this gateway found through `replicas.dnsName`, this one included (gateway/ops/replica-check.ts). */
  replicas: Gauge<string>;
  /** Changes of pinned tool definitions and approvals (catalog/pin-guard.ts), by upstream and outcome. */
  toolDefinitionChanges: Counter<'upstream' | 'outcome'>;
  toolsHeld: Gauge<'upstream'>;
  descriptionFindings: Gauge<'upstream' | 'rule'>;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Creates the metric set in a fresh registry, with Node's default process metrics. */
export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names these gauges `_total`, which `promtool check metrics` rejects (counters only).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }
  const r = [registry];
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route, method and status.',
      labelNames: ['route', 'method', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    mcpRequests: new Counter({
      name: 'mcp_requests_total',
      help: 'MCP messages handled (requests and notifications), by endpoint (full|compact), method (spec method names, else unknown), era (modern|legacy) and outcome (ok|error).',
      labelNames: ['endpoint', 'method', 'era', 'outcome'],
      registers: r,
    }),
    toolCalls: new Counter({
      name: 'mcp_tool_calls_total',
      help: 'tools/call by endpoint, tool, via (direct|call_tool|run_code: an inner call of a script) and outcome (ok|is_error|refused|held|invalid_arguments|output_schema_violation|input_required|rate_limited|task).',
      labelNames: ['endpoint', 'tool', 'via', 'outcome'],
      registers: r,
    }),
    codeRuns: new Counter({
      name: 'mcp_code_runs_total',
      help: 'run_code runs on /mcp/compact by outcome (ok|script_error|limit|cancelled|refused|error) and limit (the codeMode.limits key a limit outcome broke, else none); their inner calls are mcp_tool_calls_total{via="run_code"}.',
      labelNames: ['outcome', 'limit'],
      registers: r,
    }),
    codeRunDuration: new Histogram({
      name: 'mcp_code_run_duration_seconds',
      help: 'run_code runs, from the first line of the script to its result, inner calls included.',
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    toolCallDuration: new Histogram({
      name: 'mcp_tool_call_duration_seconds',
      help: 'tools/call duration through the gateway, by tool.',
      labelNames: ['tool'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    upstreamRequestDuration: new Histogram({
      name: 'mcp_upstream_request_duration_seconds',
      help: 'Requests to upstream MCP servers, by upstream and method.',
      labelNames: ['upstream', 'method'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    upstreamErrors: new Counter({
      name: 'mcp_upstream_errors_total',
      help: 'Failed upstream requests, by upstream and kind.',
      labelNames: ['upstream', 'kind'],
      registers: r,
    }),
    upstreamUp: new Gauge({
      name: 'mcp_upstream_up',
      help: 'Whether the gateway is connected to the upstream (1) or it is down and being reconnected (0), by upstream.',
      labelNames: ['upstream'],
      registers: r,
    }),
    upstreamReconnects: new Counter({
      name: 'mcp_upstream_reconnects_total',
      help: 'Reconnections after a lost upstream (new session or restarted stdio process), by upstream.',
      labelNames: ['upstream'],
      registers: r,
    }),
    scopeLookups: new Counter({
      name: 'mcp_scope_lookups_total',
      help: 'Caller scope lookups by result (hit|miss|error|timeout|no_scopes_field|unauthorized).',
      labelNames: ['result'],
      registers: r,
    }),
    scopeLookupDuration: new Histogram({
      name: 'mcp_scope_lookup_duration_seconds',
      help: 'Duration of scope endpoint calls.',
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    configUnmatchedRules: new Gauge({
      name: 'mcp_config_unmatched_rules',
      help: "Per-tool config entries (scopeRules, readOnlyOverrides, categories, outputSchemas, tools, anchors, rateLimits.tools) naming no tool the upstream's last catalogue listed, by upstream: typos apply to nothing.",
      labelNames: ['upstream'],
      registers: r,
    }),
    auditWriteErrors: new Counter({
      name: 'mcp_audit_write_errors_total',
      help: 'Writes to audit.destination that failed (a full disk, a file that went away); their lines are held (16 MiB at most) and written again with the next line.',
      registers: r,
    }),
    auditLinesDropped: new Counter({
      name: 'mcp_audit_lines_dropped_total',
      help: 'Audit lines dropped, lost: audit.destination had not taken the 16 MiB of lines held before them.',
      registers: r,
    }),
    traceSpans: new Counter({
      name: 'mcp_trace_spans_total',
      help: 'Spans the batch span processor finished with, by outcome: exported, export_failed (their batch was not delivered), dropped (its queue was full: the collector does not keep up).',
      labelNames: ['outcome'],
      registers: r,
    }),
    traceExportFailures: new Counter({
      name: 'mcp_trace_export_failures_total',
      help: 'Span batches the OTLP exporter failed to deliver (collector down, refused or too slow): those spans are lost.',
      registers: r,
    }),
    configReloads: new Counter({
      name: 'mcp_config_reloads_total',
      help: 'Live reloads (SIGHUP, reload.watch) by outcome: applied, refused (the new configuration is invalid or changes a key that needs a restart; the running one keeps serving) or failed.',
      labelNames: ['outcome'],
      registers: r,
    }),
    catalogTools: new Gauge({ name: 'mcp_catalog_tools', help: 'Tools in the last fetched catalogue, by upstream.', labelNames: ['upstream'], registers: r }),
    catalogRefreshes: new Counter({
      name: 'mcp_catalog_refreshes_total',
      help: 'Catalogue fetches by upstream and outcome (ok|error|stale_served).',
      labelNames: ['upstream', 'outcome'],
      registers: r,
    }),
    searchDuration: new Histogram({ name: 'mcp_search_duration_seconds', help: 'search_tools query duration.', buckets: LATENCY_BUCKETS, registers: r }),
    searchEmbeddingFailures: new Counter({
      name: 'mcp_search_embedding_failures_total',
      help: 'Requests to the external embeddings endpoint (search.embeddings) that failed, the search answered without it, by stage (tools: embedding a catalogue version, query: embedding a search).',
      labelNames: ['stage'],
      registers: r,
    }),
    outputSchemaViolations: new Counter({
      name: 'mcp_output_schema_violations_total',
      help: 'tools/call results whose structuredContent broke the outputSchema, by tool.',
      labelNames: ['tool'],
      registers: r,
    }),
    outputSchemaCompileFailures: new Counter({
      name: 'mcp_output_schema_compile_failures_total',
      help: 'outputSchemas that failed to compile (tool served unchecked), by tool.',
      labelNames: ['tool'],
      registers: r,
    }),
    advertisedTools: new Gauge({
      name: 'mcp_advertised_tools',
      help: 'Tools in the last tools/list served, by endpoint.',
      labelNames: ['endpoint'],
      registers: r,
    }),
    toolsListBytes: new Histogram({
      name: 'mcp_tools_list_bytes',
      help: 'Bytes of the tools array of tools/list results served, by endpoint.',
      labelNames: ['endpoint'],
      buckets: [256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
      registers: r,
    }),
    rateLimited: new Counter({
      name: 'mcp_rate_limited_total',
      help: 'Requests, tool calls, registrations and sign-in attempts refused by a rate budget, by budget (requests|reads|writes|tool|registrations_per_address|registrations_total|sign_ins_per_key|sign_ins_per_client|sign_ins_per_address|sign_ins_per_page|console_sign_ins_per_address).',
      labelNames: ['budget'],
      registers: r,
    }),
    oauthSignIns: new Counter({
      name: 'mcp_oauth_sign_ins_total',
      help: "Credentials accepted on the built-in authorization server's sign-in page.",
      registers: r,
    }),
    oauthRefusals: new Counter({
      name: 'mcp_oauth_refusals_total',
      help: 'Requests the built-in authorization server or a sign-in refused, by endpoint (register|authorize|sign_in|consent|token|revoke|console) and reason (an RFC 6749/7591 error code, or invalid_credentials|rate_limited|refresh_token_reuse|authorization_code_reuse|token_of_another_client|unknown_token|key_revoked|scopes_unavailable).',
      labelNames: ['endpoint', 'reason'],
      registers: r,
    }),
    oauthRefreshReuse: new Counter({
      name: 'mcp_oauth_refresh_reuse_total',
      help: 'Consumed refresh tokens or authorization codes presented again (or used twice at once): each revoked its whole grant.',
      registers: r,
    }),
    listingCacheBytes: new Gauge({
      name: 'mcp_listing_cache_bytes',
      help: 'Bytes held by the built tools/list answers cache (JSON and compressed forms; bounded by cache.listingBytes).',
      registers: r,
    }),
    listingCacheEntries: new Gauge({
      name: 'mcp_listing_cache_entries',
      help: 'Built tools/list answers cached (one per surface, catalogue version and scope set).',
      registers: r,
    }),
    listingCacheEvictions: new Counter({
      name: 'mcp_listing_cache_evictions_total',
      help: 'Built tools/list answers dropped by the cache.listingBytes bound, by reason: evicted (least recently used, to make room) or oversized (larger than the whole bound, served once and not kept).',
      labelNames: ['reason'],
      registers: r,
    }),
    catalogCacheBytes: new Gauge({
      name: 'mcp_catalog_cache_bytes',
      help: "Bytes of upstream lists (tools catalogues, resources, prompts) cached per upstream, bounded by cache.catalogBytes (a catalogue counts its tools' serialised definitions).",
      labelNames: ['upstream'],
      registers: r,
    }),
    catalogCacheEvictions: new Counter({
      name: 'mcp_catalog_cache_evictions_total',
      help: 'Upstream lists pushed out of the catalogue cache (least recently used) by cache.catalogBytes or cache.maxEntries, per upstream.',
      labelNames: ['upstream'],
      registers: r,
    }),
    toolDefinitionChanges: new Counter({
      name: 'mcp_tool_definition_changes_total',
      help: 'Changes of pinned tool definitions seen and approvals made, by upstream and outcome (held|warned|reverted|new_held|new_accepted|lint_held|lint_warned|approved); once per process per definition.',
      labelNames: ['upstream', 'outcome'],
      registers: r,
    }),
    toolsHeld: new Gauge({
      name: 'mcp_tools_held',
      help: 'Tools on hold until an operator approves them (pinning), by upstream.',
      labelNames: ['upstream'],
      registers: r,
    }),
    descriptionFindings: new Gauge({
      name: 'mcp_tool_description_findings',
      help: "Tools of an upstream's last catalogue with a description lint finding, by upstream and rule (invisible characters are removed whatever the count).",
      labelNames: ['upstream', 'rule'],
      registers: r,
    }),
    cacheStoreErrors: new Counter({
      name: 'mcp_cache_store_errors_total',
      help: 'Cache store operations that failed or timed out (served by a direct lookup instead), by cache and op.',
      labelNames: ['cache', 'op'],
      registers: r,
    }),
    pinStoreLosses: new Counter({
      name: 'mcp_pin_store_losses_total',
      help: 'Pins this process had read or written that the Redis pin store no longer held (its data lost): written back from memory, by upstream.',
      labelNames: ['upstream'],
      registers: r,
    }),
    sendTimeouts: new Counter({
      name: 'mcp_send_timeouts_total',
      help: 'Connections reset because their client took none of an answer for server.sendTimeoutMs (it sent a request and did not read the answer).',
      registers: r,
    }),
    replicas: new Gauge({
      name: 'mcp_gateway_replicas',
      help: 'Replicas of this gateway found through replicas.dnsName, this one included (0: not checked).',
      registers: r,
    }),
  };
}

/**
 * Drops the gauge series of upstreams a reload removed: a gauge says how things are now, and a removed
 * upstream's last `mcp_upstream_up 0` would fire an alert until the process restarts. Counters keep
 * their history (Prometheus reads their rate).
 */
export async function forgetUpstreams(metrics: GatewayMetrics, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const gone = new Set(names);
  const gauges = [
    metrics.upstreamUp,
    metrics.catalogTools,
    metrics.configUnmatchedRules,
    metrics.catalogCacheBytes,
    metrics.toolsHeld,
    metrics.descriptionFindings,
  ];
  for (const gauge of gauges as Gauge<string>[]) {
    for (const { labels } of (await gauge.get()).values) if (gone.has(String(labels.upstream))) gauge.remove(labels as Record<string, string>);
  }
}

/** A tool label value: the name when the catalogue knows it, else `unknown` (keeps cardinality bounded). */
export function toolLabel(name: unknown, known: (name: string) => boolean): string {
  return typeof name === 'string' && known(name) ? name : 'unknown';
}
