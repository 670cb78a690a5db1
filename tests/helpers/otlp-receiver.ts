import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, flattened from OTLP/HTTP JSON (ids in hex, attributes as plain values). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number };
  serviceName?: string;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

/**
 * A local OTLP/HTTP receiver (the collector's `/v1/traces`): JSON bodies are parsed into spans,
 * protobuf bodies kept as bytes; each is answered 200 with an empty ExportTraceServiceResponse.
 */
export async function startOtlpReceiver(): Promise<{
  url: string;
  exports: number;
  spans(): ReceivedSpan[];
  protobufBodies: Buffer[];
  close(): Promise<void>;
}> {
  const bodies: unknown[] = [];
  const protobufBodies: Buffer[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const type = String(req.headers['content-type']);
    if (req.method === 'POST' && req.url === '/v1/traces' && type.startsWith('application/json'))
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    if (req.method === 'POST' && req.url === '/v1/traces' && type.startsWith('application/x-protobuf')) protobufBodies.push(Buffer.concat(chunks));
    // An empty ExportTraceServiceResponse in either encoding.
    if (type.startsWith('application/x-protobuf')) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get exports() {
      return bodies.length + protobufBodies.length;
    },
    protobufBodies,
    spans: () => bodies.flatMap((body) => flatten(body)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function flatten(body: unknown): ReceivedSpan[] {
  const resourceSpans =
    (body as { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[] }).resourceSpans ?? [];
  return resourceSpans.flatMap((rs) => {
    const serviceName = values(rs.resource?.attributes)['service.name'] as string | undefined;
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        traceId: span.traceId as string,
        spanId: span.spanId as string,
        parentSpanId: (span.parentSpanId as string | undefined) || undefined,
        name: span.name as string,
        kind: span.kind as number,
        attributes: values(span.attributes as KeyValue[] | undefined),
        status: span.status as { code?: number } | undefined,
        serviceName,
      })),
    );
  });
}

function values(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? '')),
    ]),
  );
}
