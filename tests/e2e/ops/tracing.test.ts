/**
 * Tracing end to end (issue 17, Done when): a gateway configured by OTEL_* variables exports to a
 * local OTLP/HTTP receiver; a tools/call through call_tool on /mcp/compact makes one span tree whose
 * root is parented by the incoming traceparent (header, else `_meta.traceparent`), with the scope
 * lookup, catalogue, input/output checks and the upstream call under it; the upstream receives the
 * upstream span's context in its `traceparent` header and in `_meta`. Unconfigured, nothing is exported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/load.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { startRelayUpstream } from '../../fixtures/fake-tools.ts';
import { FULL_KEY, messagesOf, post, rpc } from '../../helpers/raw-mcp.ts';
import { credentialDigest } from '../../../gateway/auth/credentials.ts';
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { LogCapture } from '../../helpers/log-capture.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const SENTINEL = 'argument-sentinel-5c1f';

let upstream: Awaited<ReturnType<typeof startRelayUpstream>>;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
beforeAll(async () => {
  upstream = await startRelayUpstream();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await upstream?.close();
  await receiver?.close();
});

const gatewayWith = (env: Record<string, string>) => {
  const config = loadConfig({
    env,
    overrides: { log: { level: 'warn' }, listen: { port: 0 }, cache: { key: DIGEST_KEY }, upstreams: [{ name: 'rec', url: upstream.url }] },
  });
  delete config.scopes.endpoint;
  return startGateway(config, { logDestination: new LogCapture() });
};

/** call_tool of regional_lookup (read-only, not advertised on /mcp/compact) with a traceparent header or `_meta`. */
async function callThroughCallTool(base: string, where: 'header' | 'meta', trace: string) {
  const traceparent = `00-${trace}-${PARENT}-01`;
  const { headers, body } = rpc('modern', 41, 'tools/call', {
    name: 'call_tool',
    arguments: { name: 'regional_lookup', arguments: { region: 'eu', text: SENTINEL } },
    ...(where === 'meta' ? { _meta: { traceparent } } : {}),
  });
  const response = await post(`${base}/mcp/compact`, body, where === 'header' ? { ...headers, traceparent } : headers);
  const [message] = await messagesOf(response);
  expect(message?.result?.isError).toBeUndefined();
  expect(JSON.stringify(message?.result?.content)).toContain(`eu:${SENTINEL}`);
}

const upstreamCallsOf = (text: string) => upstream.received.filter((r) => r.method === 'tools/call' && JSON.stringify(r.params).includes(text));

/** The gateway's credential digest key, known here so the test can look for the digest it makes. */
const DIGEST_KEY = 'tracing-test-digest-key-0123456789abcdef';

describe('tracing over OTLP/HTTP', () => {
  it('exports the span tree of a call_tool dispatch, parented by the traceparent header, and sends its context upstream', async () => {
    const gateway = await gatewayWith({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
    try {
      await callThroughCallTool(gateway.url, 'header', TRACE);
    } finally {
      await gateway.close();
    }
    const spans = receiver.spans().filter((s) => s.traceId === TRACE);
    const root = spans.find((s) => s.parentSpanId === PARENT)!;
    expect(root).toMatchObject({ name: 'tools/call call_tool', kind: 2, serviceName: 'gateway-under-test' });
    expect(root.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'call_tool',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '41',
      'mcp.protocol.version': '2026-07-28',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.path': '/mcp/compact',
      'ai.cpz.gateway.surface': 'compact',
      'ai.cpz.gateway.target_tool': 'regional_lookup',
      'ai.cpz.gateway.outcome': 'ok',
    });
    const children = spans.filter((s) => s.parentSpanId === root.spanId);
    const names = new Set(children.map((s) => s.name));
    for (const name of ['scope lookup', 'catalog', 'input check', 'output check', 'tools/call regional_lookup']) expect(names, name).toContain(name);
    const call = children.find((s) => s.name === 'tools/call regional_lookup')!;
    expect(call).toMatchObject({ kind: 3, traceId: TRACE });
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'regional_lookup',
      'ai.cpz.gateway.upstream': 'rec',
      'server.address': '127.0.0.1',
    });
    const inputCheck = children.find((s) => s.name === 'input check' && s.attributes['gen_ai.tool.name'] === 'regional_lookup');
    expect(inputCheck?.attributes['ai.cpz.gateway.check.ok']).toBe(true);

    // What the upstream received: the upstream span's context, as a header and in _meta.
    // This test's call: the file's other tests send the sentinel too.
    const received = upstreamCallsOf(SENTINEL).at(-1);
    const expected = `00-${TRACE}-${call.spanId}-01`;
    expect(received!.headers.traceparent).toBe(expected);
    expect((received!.params._meta as Record<string, unknown>).traceparent).toBe(expected);

    // Never an argument value, a credential or its digest in any attribute.
    const everything = JSON.stringify(spans.map((s: ReceivedSpan) => s.attributes));
    expect(everything).not.toContain(SENTINEL);
    expect(everything).not.toMatch(/demo-secret|cpz_demo/);
    expect(everything).not.toContain(credentialDigest(FULL_KEY, Buffer.from(DIGEST_KEY)));
  });

  it('takes the parent from _meta.traceparent when the request has no traceparent header', async () => {
    const trace = '1bf92f3577b34da6a3ce929d0e0e4736';
    const gateway = await gatewayWith({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' });
    try {
      await callThroughCallTool(gateway.url, 'meta', trace);
    } finally {
      await gateway.close();
    }
    const spans = receiver.spans().filter((s) => s.traceId === trace);
    const root = spans.find((s) => s.parentSpanId === PARENT);
    expect(root?.name).toBe('tools/call call_tool');
    const call = spans.find((s) => s.name === 'tools/call regional_lookup' && s.parentSpanId === root!.spanId)!;
    const received = upstreamCallsOf(SENTINEL).at(-1)!;
    expect((received.params._meta as Record<string, unknown>).traceparent).toBe(`00-${trace}-${call.spanId}-01`);
  });

  it('exports OTLP protobuf by default (the OTLP default protocol): the trace id and span names are in the body', async () => {
    const trace = '3df92f3577b34da6a3ce929d0e0e4736';
    const gateway = await gatewayWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      await callThroughCallTool(gateway.url, 'header', trace);
    } finally {
      await gateway.close();
    }
    // Protobuf carries ids as raw bytes and strings as UTF-8: enough to tell this export apart without a decoder.
    const body = receiver.protobufBodies.find((b) => b.includes(Buffer.from(trace, 'hex')));
    expect(body).toBeDefined();
    for (const name of ['tools/call call_tool', 'tools/call regional_lookup', 'scope lookup', 'input check'])
      expect(body!.includes(Buffer.from(name)), name).toBe(true);
    expect(body!.includes(Buffer.from(SENTINEL))).toBe(false);
  });

  it('exports nothing when no OTEL_* variable configures it, and passes the caller _meta trace context through', async () => {
    const before = receiver.exports;
    const trace = '2cf92f3577b34da6a3ce929d0e0e4736';
    const gateway = await gatewayWith({});
    try {
      await callThroughCallTool(gateway.url, 'meta', trace);
    } finally {
      await gateway.close();
    }
    // close() flushes a configured exporter (the tests above read their spans right after it), so
    // anything this gateway would export has arrived by now.
    expect(receiver.exports).toBe(before);
    const received = upstreamCallsOf(SENTINEL).at(-1)!;
    expect((received.params._meta as Record<string, unknown>).traceparent).toBe(`00-${trace}-${PARENT}-01`);
    expect(received.headers.traceparent).toBeUndefined();
  });
});
