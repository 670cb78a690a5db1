import { setTimeout as delay } from 'node:timers/promises';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createContextKey,
  createNoopMeter,
  trace,
  type Attributes,
  type Meter,
  type MeterProvider,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Counter } from 'prom-client';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type BufferConfig,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
} from '@opentelemetry/semantic-conventions/incubating';
import type { GatewayConfig } from '../../config/types.ts';
import { loggableUrl, throttled, type Logger } from './log.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * The gateway's OpenTelemetry tracing (issue 17). Off unless `tracing.exporter` is `otlp`, which
 * config/load.ts derives from the standard variables (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME,
 * OTEL_EXPORTER_OTLP_HEADERS). Spans go over OTLP/HTTP (protobuf, the OTLP default, or JSON) in batches
 * (OTEL_BSP_* apply) through a per-gateway provider that is never registered globally, so several
 * gateways in one process export separately.
 *
 * Naming and attributes follow the OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md, status
 * Development): span name `{mcp.method.name} {target}` (target: the tool name), `mcp.method.name`,
 * `gen_ai.tool.name`, `gen_ai.operation.name` = `execute_tool` for tools/call, `jsonrpc.request.id`,
 * `mcp.protocol.version`, `mcp.session.id`, `error.type` (`tool_error` for an isError result, the
 * JSON-RPC code otherwise). Gateway-specific attributes are under `ai.cpz.gateway.*`. Never a
 * credential, a digest of one, or an argument value.
 *
 * Propagation (W3C Trace Context): the parent is the HTTP `traceparent` header, else the message's
 * `_meta.traceparent` (MCP 2026-07-28 reserves `traceparent`/`tracestate`/`baggage` in `_meta`,
 * SEP-414; the OTel MCP conventions say the same); upstream requests carry the upstream span's context
 * both as headers and in `_meta` ({@link upstreamSpan}, {@link injectTraceHeaders}).
 *
 * The tracer of a request travels in the OpenTelemetry context with its spans, so any layer can open a
 * child span with {@link inSpan} without being handed the runtime; outside a traced request these
 * helpers only run the function (no allocation, no context manager needed).
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The SERVER span of one MCP POST; {@link RequestTrace.run} makes it current for the rest of the request. */
  startRequest(request: RequestSpanInput): RequestTrace;
  /** Exports what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/** What the edge knows about an MCP POST when it opens the request span. */
export interface RequestSpanInput {
  /** `/mcp`, `/mcp/compact`. */
  path: string;
  surface: string;
  httpMethod: string;
  /** The incoming HTTP headers (lower-case names). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The JSON-RPC message when the POST holds exactly one. */
  message?: { method?: unknown; id?: unknown; params?: unknown };
  /** MCP-Protocol-Version header, or the 2026-07-28 `_meta` claim. */
  protocolVersion?: string;
  sessionId?: string;
}

export interface RequestTrace {
  /** The trace id of the request: its span's, or (tracing off) the incoming traceparent's; else undefined. */
  readonly traceId: string | undefined;
  run<T>(fn: () => T): T;
  /** Ends the span once, with the HTTP status and, for a failed answer, `error.type`. */
  end(result: { httpStatus?: number; errorType?: string }): void;
}

/** `_meta` keys of W3C trace context (MCP 2026-07-28, SEP-414). */
export const TRACE_META_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

const TRACER_KEY = createContextKey('ai.cpz.gateway tracer');
const REQUEST_SPAN_KEY = createContextKey('ai.cpz.gateway request span');
const propagator = new W3CTraceContextPropagator();
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
let contextManagerInstalled = false;

/**
 * How long a shutdown waits for the last spans to be exported: a collector that hangs held the exit for
 * `tracing.timeoutMs` (10 s by default), past the 5 s the chart's terminationGracePeriodSeconds leaves
 * after the drain and the grace, so the kubelet's SIGKILL cut what came after.
 */
export const TRACING_SHUTDOWN_MS = 2000;

export interface TracingOptions {
  log?: Logger;
  /** Tests: export to this exporter (one span at a time) instead of OTLP. */
  exporter?: SpanExporter;
  /** Counts span batches that failed to export (`mcp_trace_export_failures_total`). */
  metrics?: Pick<GatewayMetrics, 'traceExportFailures' | 'traceSpans'>;
}

/**
 * Builds the gateway's tracing from `tracing` config; exporter `none` gives a tracing that records nothing.
 * Either way one startup line says whether spans are exported and where to. A batch the exporter fails
 * to deliver is counted and logged at warn, at most once a minute (the SDK itself only tells its own
 * diagnostic logger, which nobody reads).
 */
export function createTracing(config: GatewayConfig['tracing'], options: TracingOptions = {}): Tracing {
  if (config.exporter !== 'otlp' && !options.exporter) {
    options.log?.info('tracing off: no spans are exported (tracing.exporter is none; set it to otlp, or set an OTLP endpoint)');
    return disabledTracing;
  }
  if (!contextManagerInstalled) {
    // Once per process: the context manager is global state the API keeps; a second one would be refused.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
  const Exporter = config.protocol === 'http/json' ? OTLPJsonTraceExporter : OTLPProtobufTraceExporter;
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(
        new ReportedExporter(new Exporter({ url: config.endpoint, headers: config.headers, timeoutMillis: config.timeoutMs }), config.endpoint, options),
        // sdk-trace-base's type leaves out the option its BatchSpanProcessor hands on to sdk-trace's, which reads it.
        (options.metrics ? { selfObsMeterProvider: spanOutcomes(options.metrics.traceSpans) } : {}) as BufferConfig,
      );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: '0.1.0' }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('mcp-catalog-gateway', '0.1.0');
  options.log?.info(
    { endpoint: loggableUrl(config.endpoint), protocol: config.protocol, serviceName: config.serviceName },
    'tracing on: exporting spans over OTLP/HTTP',
  );
  return {
    enabled: true,
    startRequest: (input) => startRequestSpan(tracer, input),
    shutdown: async () => {
      const flushed = provider
        .forceFlush()
        .catch(() => {})
        .then(() => provider.shutdown())
        .then(
          () => true,
          () => true,
        );
      const inTime = await Promise.race([flushed, delay(TRACING_SHUTDOWN_MS, false, { ref: false })]);
      if (!inTime)
        options.log?.warn(
          { endpoint: loggableUrl(config.endpoint), waitedMs: TRACING_SHUTDOWN_MS },
          'tracing: the OTLP endpoint did not take the last spans in time; they are lost',
        );
    },
  };
}

/** The SDK's self-observability counter of the spans a span processor finished with (semantic conventions `otel.sdk.processor.span.processed`). */
const SPANS_PROCESSED = 'otel.sdk.processor.span.processed';

/**
 * A MeterProvider for the batch span processor's own metrics (its `selfObsMeterProvider`) that counts the
 * spans it finished with in `mcp_trace_spans_total` by outcome: `dropped` for its `error.type`
 * `queue_full` (the SDK drops a span silently when 2,048 wait: a collector that hangs lost about 4,500
 * of 6,000 spans with 3 failed batches counted), `export_failed` for another error, else `exported`.
 * Every other instrument is the API's no-op one.
 */
function spanOutcomes(counter: Counter<'outcome'>): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop);
  meter.createCounter = (name, options) =>
    name === SPANS_PROCESSED
      ? ({
          add: (count: number, attributes?: Attributes) => {
            const type = attributes?.[ATTR_ERROR_TYPE];
            counter.inc({ outcome: type === undefined ? 'exported' : type === 'queue_full' ? 'dropped' : 'export_failed' }, count);
          },
        } as ReturnType<Meter['createCounter']>)
      : noop.createCounter(name, options);
  return { getMeter: () => meter };
}

/** The OTLP exporter, with each failed batch counted and (throttled) logged. */
class ReportedExporter implements SpanExporter {
  private readonly failed = throttled(60_000);

  constructor(
    private readonly inner: SpanExporter,
    private readonly endpoint: string,
    private readonly options: TracingOptions,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        this.options.metrics?.traceExportFailures.inc();
        this.failed((notLogged) =>
          this.options.log?.warn(
            {
              endpoint: loggableUrl(this.endpoint),
              spans: spans.length,
              error: result.error?.message ?? 'export failed',
              ...(notLogged ? { notLogged } : {}),
            },
            'tracing: spans could not be exported to the OTLP endpoint and are lost',
          ),
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

const disabledTracing: Tracing = {
  enabled: false,
  startRequest: (input) => ({
    traceId: traceIdOf(parentCarrier(input)?.traceparent),
    run: (fn) => fn(),
    end: () => {},
  }),
  shutdown: async () => {},
};

function startRequestSpan(tracer: Tracer, input: RequestSpanInput): RequestTrace {
  const carrier = parentCarrier(input);
  const parent = carrier ? propagator.extract(ROOT_CONTEXT, carrier, textGetter) : ROOT_CONTEXT;
  const method = typeof input.message?.method === 'string' ? input.message.method : undefined;
  const target = method ? targetOf(method, input.message?.params) : undefined;
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: input.httpMethod,
    [ATTR_URL_PATH]: input.path,
    [ATTR_NETWORK_TRANSPORT]: 'tcp',
    [ATTR_NETWORK_PROTOCOL_NAME]: 'http',
    'ai.cpz.gateway.surface': input.surface,
    ...mcpAttributes(method, target, input.message?.id),
    ...(input.protocolVersion ? { [ATTR_MCP_PROTOCOL_VERSION]: input.protocolVersion } : {}),
    ...(input.sessionId ? { [ATTR_MCP_SESSION_ID]: input.sessionId } : {}),
  };
  const name = method ? spanName(method, target) : `${input.httpMethod} ${input.path}`;
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const active = trace.setSpan(parent, span).setValue(TRACER_KEY, tracer).setValue(REQUEST_SPAN_KEY, span);
  let ended = false;
  return {
    traceId: span.spanContext().traceId,
    run: (fn) => context.with(active, fn),
    end({ httpStatus, errorType }) {
      if (ended) return;
      ended = true;
      if (httpStatus !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, httpStatus);
      const recorded = errorType ?? (httpStatus !== undefined && httpStatus >= 500 ? String(httpStatus) : undefined);
      if (recorded !== undefined) {
        span.setAttribute(ATTR_ERROR_TYPE, recorded);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/**
 * Runs `fn` in an INTERNAL child span of the current traced request (scope lookup, catalogue fetch,
 * search, input and output checks). Sync and async `fn` alike; a throw marks the span an error and is
 * rethrown. Outside a traced request it just runs `fn`.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span?: Span) => T): T {
  const active = context.active();
  const tracer = active.getValue(TRACER_KEY) as Tracer | undefined;
  if (!tracer) return fn(undefined);
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, active, (span) => finish(span, fn));
}

/**
 * Records, under the current span, work that ran before the span existed (authentication runs before
 * the body that names the request is read): an INTERNAL span from `startTime` to `endTime`
 * (`performance.timeOrigin`-based ms, as `performance.now()` + timeOrigin).
 */
export function recordSpan(name: string, attributes: Attributes, startTime: number, endTime: number): void {
  const active = context.active();
  const tracer = active.getValue(TRACER_KEY) as Tracer | undefined;
  if (!tracer) return;
  tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, startTime }, active).end(endTime);
}

/** What the upstream span needs to be named and described. */
export interface UpstreamCall {
  upstream: string;
  /** The upstream's URL (HTTP) for `server.address`/`server.port`; absent for stdio. */
  url?: string;
  method: string;
  /** The tool or prompt name as the upstream knows it. */
  target?: string;
  requestId?: string | number;
}

/**
 * Runs one forwarded request in a CLIENT span (`{method} {target}`) and hands `fn` the W3C carrier of
 * that span (`traceparent`, `tracestate`) to put in the request's `_meta`; the HTTP headers get the
 * same context from {@link injectTraceHeaders}, since the span is current while `fn` runs. Outside a
 * traced request `fn` gets an empty carrier.
 */
export function upstreamSpan<T>(call: UpstreamCall, fn: (carrier: Record<string, string>) => Promise<T>): Promise<T> {
  const active = context.active();
  const tracer = active.getValue(TRACER_KEY) as Tracer | undefined;
  if (!tracer) return fn({});
  const address = call.url && URL.canParse(call.url) ? new URL(call.url) : undefined;
  const attributes: Attributes = {
    ...mcpAttributes(call.method, call.target, call.requestId),
    'ai.cpz.gateway.upstream': call.upstream,
    ...(address
      ? {
          [ATTR_SERVER_ADDRESS]: address.hostname,
          [ATTR_SERVER_PORT]: Number(address.port || (address.protocol === 'https:' ? 443 : 80)),
          [ATTR_NETWORK_TRANSPORT]: 'tcp',
        }
      : { [ATTR_NETWORK_TRANSPORT]: 'pipe' }),
  };
  return tracer.startActiveSpan(spanName(call.method, call.target), { kind: SpanKind.CLIENT, attributes }, active, (span) =>
    finish(span, () => {
      const carrier: Record<string, string> = {};
      propagator.inject(context.active(), carrier, textSetter);
      return fn(carrier).then((result) => {
        if ((result as { isError?: unknown } | undefined)?.isError === true) annotate(span, { [ATTR_ERROR_TYPE]: 'tool_error' });
        return result;
      });
    }),
  );
}

/** Runs `fn` outside any trace: for work that outlives the request that started it (it must not join that trace). */
export function outsideTrace<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/** Sets `traceparent`/`tracestate` of the current span on outgoing HTTP headers; nothing outside a traced request. */
export function injectTraceHeaders(headers: Headers): void {
  const active = context.active();
  if (!active.getValue(TRACER_KEY)) return;
  propagator.inject(active, headers, { set: (carrier, key, value) => carrier.set(key, value) });
}

/** `headers` plus the current span's W3C trace context (the same object, untouched, when tracing is off). */
export function withTraceHeaders(headers: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> | undefined {
  const active = context.active();
  if (!active.getValue(TRACER_KEY)) return headers;
  const out: Record<string, string> = { ...headers };
  propagator.inject(active, out, { set: (carrier, key, value) => void (carrier[key] = value) });
  return out;
}

/**
 * Adds attributes to the current request's SERVER span (the tool a call_tool dispatched to, a refusal);
 * an `error.type` among them sets the span's status to ERROR too (OpenTelemetry "Recording errors": the
 * two go together; an isError tool result was `tool_error` on a span whose status said nothing).
 */
export function annotateRequest(attributes: Attributes): void {
  annotate(context.active().getValue(REQUEST_SPAN_KEY) as Span | undefined, attributes);
}

function annotate(span: Span | undefined, attributes: Attributes): void {
  if (!span) return;
  span.setAttributes(attributes);
  if (attributes[ATTR_ERROR_TYPE] !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Names the current request's SERVER span by its method alone: for a tools/call whose name is in no
 * catalogue. The span is named `{method} {target}` when the request arrives, before the name is looked
 * up (OpenTelemetry MCP semantic conventions); a name the caller made up would otherwise make one span
 * name per guess, which span-metrics pipelines turn into one series each (as `/metrics` counts it `unknown`).
 */
export function nameRequestByMethod(method: string): void {
  (context.active().getValue(REQUEST_SPAN_KEY) as Span | undefined)?.updateName(method);
}

/** {@link annotateRequest} on the current span of a traced request (an {@link inSpan} child, else the request span); outside one, nothing. */
export function annotateCurrent(attributes: Attributes): void {
  const active = context.active();
  if (active.getValue(TRACER_KEY)) annotate(trace.getSpan(active), attributes);
}

/** The trace id of a W3C `traceparent` value, or undefined when it is absent or malformed. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  return match && !/^0+$/.test(match[1]!) ? match[1] : undefined;
}

/** The incoming trace context: the HTTP headers when they hold a traceparent, else the message's `_meta`. */
function parentCarrier(input: RequestSpanInput): Record<string, string> | undefined {
  const header = single(input.headers.traceparent);
  if (header) return pick({ traceparent: header, tracestate: single(input.headers.tracestate) });
  const meta = (input.message?.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (meta && typeof meta === 'object' && typeof meta.traceparent === 'string') {
    return pick({ traceparent: meta.traceparent, tracestate: typeof meta.tracestate === 'string' ? meta.tracestate : undefined });
  }
  return undefined;
}

function pick(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value || undefined;
}

function targetOf(method: string, params: unknown): string | undefined {
  const name = (params as { name?: unknown } | undefined)?.name;
  return (method === 'tools/call' || method === 'prompts/get') && typeof name === 'string' ? name : undefined;
}

function spanName(method: string, target: string | undefined): string {
  return target ? `${method} ${target}` : method;
}

function mcpAttributes(method: string | undefined, target: string | undefined, id: unknown): Attributes {
  if (!method) return {};
  return {
    [ATTR_MCP_METHOD_NAME]: method,
    ...(method === 'tools/call' ? { [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool', ...(target ? { [ATTR_GEN_AI_TOOL_NAME]: target } : {}) } : {}),
    ...(method === 'prompts/get' && target ? { 'gen_ai.prompt.name': target } : {}),
    ...(typeof id === 'string' || typeof id === 'number' ? { [ATTR_JSONRPC_REQUEST_ID]: String(id) } : {}),
  };
}

/**
 * A thrown error's `error.type`: the gateway's classification of a failure (`upstream_timeout`,
 * `upstream_unavailable`: errors.ts `kind`, a bounded set), else a JSON-RPC error's code (the upstream's
 * own error answer, `upstream_rejected`), else the error's name. The kind first: a timeout carried the
 * -32603 of its family, the code an upstream's own internal error has too.
 */
function errorTypeOf(error: unknown): string {
  const { kind, code, name } = (error ?? {}) as { kind?: unknown; code?: unknown; name?: unknown };
  if (typeof kind === 'string' && kind !== 'upstream_rejected') return kind;
  if (code !== undefined) return String(code);
  return typeof name === 'string' ? name : 'Error';
}

function finish<T>(span: Span, fn: (span: Span) => T): T {
  const failed = (error: unknown) => {
    span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw error;
  };
  let result: T;
  try {
    result = fn(span);
  } catch (error) {
    return failed(error);
  }
  if (result instanceof Promise) {
    return result.then((value) => {
      span.end();
      return value;
    }, failed) as T;
  }
  span.end();
  return result;
}

const textGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};
const textSetter = { set: (carrier: Record<string, string>, key: string, value: string) => void (carrier[key] = value) };
