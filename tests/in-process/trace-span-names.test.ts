/**
 * A request span is named `{method} {target}` (OpenTelemetry MCP semantic conventions) only for a target a
 * catalogue has: a tools/call of a name in none is named `tools/call` alone, so a caller inventing names
 * makes no new span name (span-metrics pipelines make a series of each, as `/metrics` counts it `unknown`).
 * Refused before the name is looked up (a bad argument shape), or answered as an unknown tool, on /mcp and
 * /mcp/compact.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const spans = new InMemorySpanExporter();
let gateway: InProcessGateway;

beforeAll(() => {
  gateway = inProcessGateway(
    { upstreams: [{ health: { intervalMs: 0 } }] },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } }] }, spans },
  );
});
afterAll(async () => {
  await gateway?.close();
});

/** The SERVER span's name of one tools/call with `params` on `url`. */
async function spanNameOf(url: string | URL, params: Record<string, unknown>): Promise<string> {
  spans.reset();
  const { headers, body } = rpc('modern', 1, 'tools/call', params);
  await (await gateway.fetch(new Request(url, { method: 'POST', headers, body: JSON.stringify(body) }))).text();
  // The request span ends when the answer's response closes.
  const server = await vi.waitFor(() => {
    const ended = spans.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    expect(ended).toHaveLength(1);
    return ended;
  });
  return server[0]!.name;
}

describe('request span names', () => {
  it('name a catalogue tool that was looked up; a refusal before the lookup names none (gen_ai.tool.name keeps what was asked)', async () => {
    expect(await spanNameOf(gateway.mcpUrl, { name: 'echo', arguments: {} })).toBe('tools/call echo');
    expect(await spanNameOf(gateway.compactUrl, { name: 'call_tool', arguments: { name: 'echo', arguments: {} } })).toBe('tools/call call_tool');
    expect(await spanNameOf(gateway.mcpUrl, { name: 'echo', arguments: 'not an object' })).toBe('tools/call');
  });

  it('leave out a name no catalogue has, answered as unknown or refused before dispatch', async () => {
    expect(await spanNameOf(gateway.mcpUrl, { name: 'zz-invented-20908', arguments: {} })).toBe('tools/call');
    expect(await spanNameOf(gateway.compactUrl, { name: 'zz-invented-20909', arguments: {} })).toBe('tools/call');
    expect(await spanNameOf(gateway.mcpUrl, { name: 'zz-invented-20910', arguments: 'not an object' })).toBe('tools/call');
  });
});
