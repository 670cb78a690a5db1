/**
 * An upstream's tool named after an Object.prototype member (`constructor`, `toString`, `valueOf`) is an
 * ordinary tool to every per-tool table of the configuration (readOnlyOverrides, scopeRules, categories,
 * outputSchemas, rateLimits.tools): none of them is read through the prototype. Before, such a state-changing
 * tool read `Object` as its read-only override (truthy), so call_tool ran it and /mcp/compact hid it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');
const write = (name: string) => ({ definition: { name, description: `${name} changes state`, inputSchema: { type: 'object' as const } } });

let stack: InProcessGateway;
beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [
        write('constructor'),
        write('toString'),
        { definition: { name: 'valueOf', description: 'reads', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } },
      ],
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

const upstreamCalls = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;

describe.each(ERAS)('tools named after Object.prototype members (%s era)', (era) => {
  it('serves them as the upstream declared them: the writes listed up front on /mcp/compact, with readOnlyHint false on /mcp', async () => {
    const compact = await withClient(era, stack.compactUrl, KEY, (c) => c.listTools());
    expect(compact.map((t) => t.name).sort()).toEqual(['call_tool', 'constructor', 'search_tools', 'toString']);
    const full = await withClient(era, stack.mcpUrl, KEY, (c) => c.listTools());
    expect(full.map((t) => [t.name, t.annotations?.readOnlyHint ?? false]).sort()).toEqual([
      ['constructor', false],
      ['toString', false],
      ['valueOf', true],
    ]);
  });

  it('call_tool refuses the state-changing ones and runs the read-only one; a direct call reaches each', async () => {
    const before = upstreamCalls();
    await withClient(era, stack.compactUrl, KEY, async (c) => {
      for (const name of ['constructor', 'toString']) {
        const refused = await c.callTool('call_tool', { name, arguments: {} });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain(`${name} changes state, so call_tool will not run it`);
      }
      expect((await c.callTool('call_tool', { name: 'valueOf', arguments: {} })).isError).toBeFalsy();
    });
    expect(upstreamCalls()).toBe(before + 1);
    await withClient(era, stack.mcpUrl, KEY, async (c) => {
      for (const name of ['constructor', 'toString', 'valueOf']) expect((await c.callTool(name, {})).isError).toBeFalsy();
    });
    expect(upstreamCalls()).toBe(before + 4);
  });
});
