/**
 * A 2025-11-25 task-augmented tools/call where nothing serves tasks (issue 33): the spec says a receiver
 * that does not declare the tasks capability "MUST process requests of that type normally, ignoring any
 * task-augmentation metadata" (basic/utilities/tasks §Behavior Requirements). Behind the gateway, an
 * upstream of either era without the capability: the call is answered with the tool's result, and the
 * upstream receives it without the `task`; the gateway's own tools (search_tools, call_tool) do the same,
 * as the gateway declares no tasks capability then. (With an upstream that serves tasks, a tool without
 * `execution.taskSupport` is -32601: tests/e2e/compat/tasks-relay.test.ts.)
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { connectV1 } from '../helpers/clients.ts';
import { inProcessStack, type InProcessGateway } from '../helpers/in-process.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const echo: Tool = {
  name: 'echo_word',
  description: 'Echoes a word',
  inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};

describe.each(['modern', 'legacy'] as const)('a task-augmented call to a %s upstream without the tasks capability', (upstreamEra) => {
  let stack: InProcessGateway;
  beforeAll(async () => {
    stack = await inProcessStack({
      upstream: { era: upstreamEra, tools: [{ definition: echo, call: (args) => ({ content: [{ type: 'text', text: String(args.word) }] }) }] },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const taskCall = (name: string, args: Record<string, unknown>) => ({
    method: 'tools/call' as const,
    params: { name, arguments: args, task: { ttl: 60_000 } },
  });

  it.each([
    ['/mcp', taskCall('echo_word', { word: 'hi' })],
    ['/mcp/compact', taskCall('call_tool', { name: 'echo_word', arguments: { word: 'hi' } })],
  ])('is processed normally on %s, and the upstream gets no task', async (path, request) => {
    const client = await connectV1(`${stack.gatewayUrl}${path}`, KEY);
    try {
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      const result = await client.request(request, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
      const sent = stack.fake!.received.findLast((r) => r.method === 'tools/call');
      expect(sent?.params).toMatchObject({ name: 'echo_word', arguments: { word: 'hi' } });
      expect(sent?.params).not.toHaveProperty('task');
    } finally {
      await client.close();
    }
  });

  it("is processed normally for the compact surface's own search_tools", async () => {
    const client = await connectV1(`${stack.gatewayUrl}/mcp/compact`, KEY);
    try {
      const found = await client.request(taskCall('search_tools', { query: 'echo a word' }), CallToolResultSchema);
      expect(found.structuredContent).toMatchObject({ tools: [{ name: 'echo_word' }] });
    } finally {
      await client.close();
    }
  });
});
