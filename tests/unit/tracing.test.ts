/**
 * gateway/obs/tracing.ts on its own, against the SDK's in-memory exporter: the parent comes from the
 * traceparent header, else `_meta.traceparent`; child and upstream spans nest under the request span;
 * the upstream carrier names the upstream span; nothing is recorded or injected outside a traced request.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { GatewayError, RelayedUpstreamError } from '../../gateway/errors.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { annotateRequest, createTracing, inSpan, injectTraceHeaders, TRACING_SHUTDOWN_MS, traceIdOf, upstreamSpan } from '../../gateway/obs/tracing.ts';

const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${PARENT_TRACE}-${PARENT_SPAN}-01`;
const config = () => loadConfig({ env: {}, overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }] } }).tracing;

describe('tracing', () => {
  it('nests scope, check and upstream spans under the request span, parented by the traceparent header', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing(config(), { exporter });
    const request = tracing.startRequest({
      path: '/mcp/compact',
      surface: 'compact',
      httpMethod: 'POST',
      headers: { traceparent },
      message: {
        method: 'tools/call',
        id: 7,
        params: { name: 'call_tool', arguments: { name: 'list_deals' }, _meta: { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` } },
      },
      protocolVersion: '2026-07-28',
    });
    let carrier: Record<string, string> = {};
    const headers = new Headers();
    await request.run(async () => {
      await inSpan('scope lookup', { 'ai.cpz.gateway.cache': 'miss' }, async () => {});
      inSpan('input check', {}, () => 1);
      await upstreamSpan({ upstream: 'cpzai', url: 'http://127.0.0.1:3001/mcp', method: 'tools/call', target: 'list_deals', requestId: 7 }, async (c) => {
        carrier = c;
        injectTraceHeaders(headers);
        return { isError: true };
      });
    });
    request.end({ httpStatus: 200 });
    const spans = exporter.getFinishedSpans();
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['input check', 'scope lookup', 'tools/call call_tool', 'tools/call list_deals']);
    const root = byName['tools/call call_tool']!;
    expect(root.spanContext().traceId).toBe(PARENT_TRACE);
    expect(root.parentSpanContext?.spanId).toBe(PARENT_SPAN);
    expect(root.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'call_tool',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '7',
      'mcp.protocol.version': '2026-07-28',
      'http.response.status_code': 200,
    });
    for (const name of ['input check', 'scope lookup', 'tools/call list_deals'])
      expect(byName[name]!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    const upstream = byName['tools/call list_deals']!;
    expect(upstream.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': 3001,
      'ai.cpz.gateway.upstream': 'cpzai',
      'error.type': 'tool_error',
    });
    expect(carrier.traceparent).toBe(`00-${PARENT_TRACE}-${upstream.spanContext().spanId}-01`);
    expect(headers.get('traceparent')).toBe(carrier.traceparent);
    expect(request.traceId).toBe(PARENT_TRACE);
    await tracing.shutdown();
  });

  it('types a failure by what the gateway classified it as, else the upstream error code; error.type goes with an ERROR status', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing(config(), { exporter });
    const request = tracing.startRequest({
      path: '/mcp',
      surface: 'full',
      httpMethod: 'POST',
      headers: {},
      message: { method: 'tools/call', id: 1, params: { name: 'a' } },
    });
    const call = (target: string, outcome: () => Promise<unknown>) =>
      request.run(() => upstreamSpan({ upstream: 'u', method: 'tools/call', target }, outcome).catch(() => undefined));
    await call('timeout', () => Promise.reject(new GatewayError('upstream_timeout', 'upstream u did not answer in time', { upstream: 'u' })));
    await call('rejected', () => Promise.reject(new RelayedUpstreamError('u', -32603, 'boom')));
    await call('tool_error', async () => ({ isError: true }));
    request.run(() => annotateRequest({ 'error.type': 'tool_error' }));
    request.end({ httpStatus: 200 });
    const byName = Object.fromEntries(exporter.getFinishedSpans().map((s) => [s.name, s]));
    expect(
      ['tools/call timeout', 'tools/call rejected', 'tools/call tool_error', 'tools/call a'].map((name) => [
        byName[name]!.attributes['error.type'],
        byName[name]!.status.code,
      ]),
    ).toEqual([
      ['upstream_timeout', SpanStatusCode.ERROR],
      ['-32603', SpanStatusCode.ERROR],
      ['tool_error', SpanStatusCode.ERROR],
      ['tool_error', SpanStatusCode.ERROR],
    ]);
    await tracing.shutdown();
  });

  it('takes the parent from _meta.traceparent when there is no header', () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing(config(), { exporter });
    const request = tracing.startRequest({
      path: '/mcp',
      surface: 'full',
      httpMethod: 'POST',
      headers: {},
      message: { method: 'tools/list', id: 1, params: { _meta: { traceparent } } },
    });
    request.end({ httpStatus: 200 });
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('tools/list');
    expect(span!.spanContext().traceId).toBe(PARENT_TRACE);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_SPAN);
  });

  it('records nothing and injects nothing when off, but still reports the incoming trace id', async () => {
    const tracing = createTracing(config());
    expect(tracing.enabled).toBe(false);
    const request = tracing.startRequest({ path: '/mcp', surface: 'full', httpMethod: 'POST', headers: { traceparent } });
    expect(request.traceId).toBe(PARENT_TRACE);
    const headers = new Headers();
    const carrier = await request.run(() => upstreamSpan({ upstream: 'u', method: 'tools/call' }, async (c) => (injectTraceHeaders(headers), c)));
    expect(carrier).toEqual({});
    expect([...headers.keys()]).toEqual([]);
    expect(inSpan('x', {}, (span) => span)).toBeUndefined();
  });

  it('says at start whether spans are exported and where to (the URL without its userinfo or query)', async () => {
    const capture = new LogCapture();
    const log = pino({ level: 'info' }, capture);
    await createTracing(config(), { log }).shutdown();
    const on = createTracing({ ...config(), exporter: 'otlp', endpoint: 'https://u:pw@collector.example:4318/v1/traces?key=k' }, { log });
    await on.shutdown();
    const lines = capture.records();
    expect(lines.map((line) => line.msg)).toEqual([
      'tracing off: no spans are exported (tracing.exporter is none; set it to otlp, or set an OTLP endpoint)',
      'tracing on: exporting spans over OTLP/HTTP',
    ]);
    expect(lines[1]!.endpoint).toBe('https://***@collector.example:4318/v1/traces?…');
  });

  it('counts and logs span batches a stopped collector never receives', async () => {
    const capture = new LogCapture();
    const log = pino({ level: 'info' }, capture);
    const metrics = createMetrics();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const tracing = createTracing({ ...config(), exporter: 'otlp', endpoint: 'http://127.0.0.1:1/v1/traces', timeoutMs: 2000 }, { log, metrics });
    for (let i = 0; i < 2; i++)
      tracing
        .startRequest({ path: '/mcp', surface: 'full', httpMethod: 'POST', headers: {}, message: { method: 'tools/list', id: i } })
        .end({ httpStatus: 200 });
    await tracing.shutdown();
    expect((await metrics.traceExportFailures.get()).values[0]?.value).toBe(1);
    const warnings = capture.records().filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      msg: 'tracing: spans could not be exported to the OTLP endpoint and are lost',
      endpoint: 'http://127.0.0.1:1/v1/traces',
      spans: 2,
    });
  });

  it('counts the spans dropped for a collector that hangs, and gives up on it TRACING_SHUTDOWN_MS into the shutdown, not tracing.timeoutMs', async () => {
    // Takes the connection and the request, never answers.
    const sockets: Socket[] = [];
    const collector = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const capture = new LogCapture();
      const metrics = createMetrics();
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
      const tracing = createTracing({ ...config(), exporter: 'otlp', endpoint, timeoutMs: 60_000 }, { log: pino(capture), metrics });
      // One batch (512) goes out and hangs, 2,048 wait in the queue, the rest are dropped: counted, not silent.
      for (let i = 0; i < 3000; i++)
        tracing
          .startRequest({ path: '/mcp', surface: 'full', httpMethod: 'POST', headers: {}, message: { method: 'tools/list', id: i } })
          .end({ httpStatus: 200 });
      const dropped = async () => (await metrics.traceSpans.get()).values.find((v) => v.labels.outcome === 'dropped')?.value;
      expect(await dropped()).toBe(3000 - 512 - 2048);
      const started = performance.now();
      await tracing.shutdown();
      // Generous against TRACING_SHUTDOWN_MS (2 s), far under the export's own 60 s.
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(capture.records('the OTLP endpoint did not take the last spans in time')).toMatchObject([{ level: 40, endpoint, waitedMs: TRACING_SHUTDOWN_MS }]);
    } finally {
      for (const socket of sockets) socket.destroy();
      collector.close();
    }
  });

  it('reads a trace id only from a well-formed traceparent', () => {
    expect(traceIdOf(traceparent)).toBe(PARENT_TRACE);
    expect(traceIdOf(`00-${'0'.repeat(32)}-${PARENT_SPAN}-01`)).toBeUndefined();
    expect(traceIdOf('garbage')).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });
});

describe('tracing configuration from OTEL_* variables', () => {
  const load = (env: Record<string, string>) => loadConfig({ env, overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }] } }).tracing;

  it('is off without any variable', () => {
    expect(load({}).exporter).toBe('none');
  });
  it('turns on with OTEL_EXPORTER_OTLP_ENDPOINT, appending /v1/traces', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toMatchObject({ exporter: 'otlp', endpoint: 'http://127.0.0.1:4318/v1/traces' });
  });
  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, over the general one', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:9999/traces' }).endpoint).toBe(
      'http://b:9999/traces',
    );
  });
  it('honours OTEL_TRACES_EXPORTER=none, OTEL_SDK_DISABLED, OTEL_SERVICE_NAME and headers', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' }).exporter).toBe('none');
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).exporter).toBe('none');
    expect(load({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'edge-gw', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%3Db,x=1' })).toMatchObject({
      exporter: 'otlp',
      endpoint: 'http://localhost:4318/v1/traces',
      serviceName: 'edge-gw',
      headers: { 'api-key': 'a=b', x: '1' },
    });
  });
  it('turns on with GATEWAY_TRACING_ENDPOINT or tracing.endpoint alone; an exporter said outright wins', () => {
    expect(load({ GATEWAY_TRACING_ENDPOINT: 'http://c:4318/v1/traces', GATEWAY_TRACING_HEADERS: '{"api-key":"k"}' })).toMatchObject({
      exporter: 'otlp',
      endpoint: 'http://c:4318/v1/traces',
      headers: { 'api-key': 'k' },
    });
    const fromFile = (tracing: Record<string, unknown>) =>
      loadConfig({ env: {}, overrides: { upstreams: [{ name: 'u', url: 'http://127.0.0.1:1/mcp' }], tracing } }).tracing.exporter;
    expect(fromFile({ endpoint: 'http://c:4318/v1/traces' })).toBe('otlp');
    expect(fromFile({ endpoint: 'http://c:4318/v1/traces', exporter: 'none' })).toBe('none');
    expect(load({ GATEWAY_TRACING_ENDPOINT: 'http://c:4318/v1/traces', GATEWAY_TRACING_EXPORTER: 'none' }).exporter).toBe('none');
    expect(load({ GATEWAY_TRACING_ENDPOINT: 'http://c:4318/v1/traces', OTEL_SDK_DISABLED: 'true' }).exporter).toBe('none');
  });
  it('refuses an exporter or protocol it cannot serve, naming the variable', () => {
    expect(() => load({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/tracing\.exporter: must be one of none, otlp \(from OTEL_TRACES_EXPORTER\)/);
    expect(() => load({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /tracing\.protocol: must be one of http\/protobuf, http\/json \(from OTEL_EXPORTER_OTLP_PROTOCOL\)/,
    );
    expect(load({ OTEL_TRACES_EXPORTER: 'otlp' }).protocol).toBe('http/protobuf');
    expect(load({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }).protocol).toBe(
      'http/json',
    );
  });
});
