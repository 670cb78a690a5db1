/**
 * What an untrusted upstream can make the gateway write stays small (adversarial-upstream try-out): a flood of
 * tools/list_changed is one "upstream list changed" line (the rest are counted in a line at the end of the
 * interval), a tool name listed twice is warned about once, not on every refresh, and a catalogue of changed
 * tools held for approval is one log line and one `/readyz` entry per upstream and reason, with a count (it was
 * a line and an entry per tool). In process, through the real handler.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeepPartial } from '../../config/load.ts';
import type { GatewayConfig } from '../../config/types.ts';
import type { FakeTool, FakeUpstreamOptions } from '../fixtures/fake-upstream.ts';
import { connectV2 } from '../helpers/clients.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';

const tool = (name: string, description = `Tool ${name}.`): FakeTool => ({ definition: { name, description, inputSchema: { type: 'object' } } as Tool });

let stack: InProcessGateway | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function start(upstream: FakeUpstreamOptions, gateway: DeepPartial<GatewayConfig> = {}): Promise<InProcessGateway> {
  stack = await inProcessStack({ upstream, gateway });
  return stack;
}

async function listedDescriptions(on: InProcessGateway): Promise<string[]> {
  const client = await connectV2(new URL('/mcp', on.gatewayUrl), FULL_KEY);
  try {
    return (await client.listTools()).tools.map((t) => String(t.description));
  } finally {
    await client.close();
  }
}

describe('an upstream flooding tools/list_changed', () => {
  it('makes one "upstream list changed" line, and its catalogue is refreshed to the last version', async () => {
    const g = await start({ tools: [tool('echo')], listChanged: true }, { pinning: { mode: 'off' } });
    expect(await listedDescriptions(g)).toEqual(['Tool echo.']);
    for (let i = 1; i <= 200; i++) g.fake!.setTools([tool('echo', `Version ${i}.`)]);
    await expect.poll(() => listedDescriptions(g), { timeout: 10_000 }).toEqual(['Version 200.']);
    // The first is told at once; the others within the interval (10 s) in one line at its end, after this test.
    expect(g.logs.records('upstream list changed').map((r) => [r.method, r.notifications])).toEqual([['tools/list', 1]]);
  });
});

describe('an upstream listing a tool name twice', () => {
  it('is warned about once, not on every refresh of its catalogue', async () => {
    const g = await start({ tools: [tool('dup', 'First.'), tool('dup', 'Second.'), tool('other')] }, { pinning: { mode: 'off' } });
    for (let refresh = 0; refresh < 3; refresh++) {
      g.runtime.state.upstreams[0]!.catalog.invalidate('tools/list');
      expect(await listedDescriptions(g)).toEqual(['First.', 'Tool other.']);
    }
    expect(g.logs.records('listed a tool name twice').map((r) => [r.upstream, r.duplicates, r.count])).toEqual([['fake', ['dup'], 1]]);
  });
});

describe('an upstream whose 30 tools all change, held for approval', () => {
  it('makes one log line with the count and the first names, and one /readyz entry with the count', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
    const g = await start({ tools: names.map((n) => tool(n)) });
    expect(await listedDescriptions(g)).toHaveLength(30);
    g.fake!.setTools(names.map((n) => tool(n, `Tool ${n}, changed.`)));
    g.runtime.state.upstreams[0]!.catalog.invalidate('tools/list');
    expect(await listedDescriptions(g)).toEqual(names.map((n) => `Tool ${n}.`));
    expect(g.logs.records('held until an operator approves')).toEqual([
      expect.objectContaining({ upstream: 'fake', outcome: 'held', count: 30, tools: names.slice(0, 10) }),
    ]);
    const ready = (await (await g.fetch(new Request(`${g.gatewayUrl}/readyz`))).json()) as Record<string, unknown>;
    expect(ready).toEqual({ status: 'ready', held: [{ upstream: 'fake', reason: 'changed', count: 30 }] });
    // Each tool's change is still in the guard's report (console, `pins list`).
    expect(g.runtime.state.pins.held()).toHaveLength(30);
  });
});

describe('an upstream whose 12 tools all change, served (pinning.mode: warn)', () => {
  it('tells each served change on a line of its own: a summary naming ten let the eleventh go unnamed (review)', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
    const g = await start({ tools: names.map((n) => tool(n)) }, { pinning: { mode: 'warn' } });
    expect(await listedDescriptions(g)).toHaveLength(12);
    g.fake!.setTools(names.map((n) => tool(n, `Tool ${n}, changed.`)));
    g.runtime.state.upstreams[0]!.catalog.invalidate('tools/list');
    expect(await listedDescriptions(g)).toEqual(names.map((n) => `Tool ${n}, changed.`));
    const warned = g.logs.records().filter((r) => r.outcome === 'warned');
    expect(warned.map((r) => r.tool).sort()).toEqual(names);
    expect(warned.every((r) => Array.isArray(r.changes) && (r.changes as unknown[]).length > 0)).toBe(true);
  });
});
