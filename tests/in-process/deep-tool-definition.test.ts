/**
 * A tool whose definition nests deeper than the catalogue takes (catalog/catalog.ts
 * MAX_DEFINITION_DEPTH) is left out on its own, logged as rejected, and the upstream's other tools keep
 * being served (one nested exactly that deep among them, listed and called). Before, one such schema (3,000 levels, about 100 KB) overflowed the stack of the
 * catalogue build's recursive serialisation, the whole tools/list refresh of the upstream failed, and
 * the upstream served nothing.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DEFINITION_DEPTH } from '../../gateway/catalog/catalog.ts';
import { ERAS, withClient } from '../helpers/era-client.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';

/** An object schema `levels` JSON levels deep (itself at 1): each property's schema holds `properties` holding the next. */
function deepSchema(levels: number): Tool['inputSchema'] {
  let schema: Record<string, unknown> = levels % 2 ? { type: 'string' } : { type: 'string', enum: ['x'] };
  for (let depth = levels % 2 ? 1 : 2; depth < levels; depth += 2) schema = { type: 'object', properties: { a: schema } };
  return schema as Tool['inputSchema'];
}

const normal: Tool = {
  name: 'get_weather',
  description: 'Weather now.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};
const deepInput: Tool = { name: 'deep_input', description: 'Nested.', inputSchema: deepSchema(3000) };
const deepOutput: Tool = { name: 'deep_output', description: 'Nested.', inputSchema: { type: 'object' }, outputSchema: deepSchema(3000) };
// The definition at depth 1, its inputSchema at 2: these two nest exactly MAX_DEFINITION_DEPTH levels, and one more.
const atBound: Tool = { name: 'at_bound', description: 'Nested.', inputSchema: deepSchema(MAX_DEFINITION_DEPTH - 1) };
const pastBound: Tool = { name: 'past_bound', description: 'Nested.', inputSchema: deepSchema(MAX_DEFINITION_DEPTH) };

let gateway: InProcessGateway;
beforeAll(() => {
  gateway = inProcessGateway(
    {},
    { fake: { tools: [{ definition: deepInput }, { definition: normal }, { definition: deepOutput }, { definition: atBound }, { definition: pastBound }] } },
  );
});
afterAll(async () => {
  await gateway?.close();
});

describe.each(ERAS)('an upstream listing a tool with a 3000-level schema (%s era)', (era) => {
  it('serves its other tools, lists and runs none of the deep ones, and logs their rejection', async () => {
    await withClient(era, gateway.mcpUrl, FULL_KEY, async (client) => {
      expect((await client.listTools()).map((t) => t.name)).toEqual(['get_weather', 'at_bound']);
      for (const [name, args] of [
        ['get_weather', { city: 'Paris' }],
        ['at_bound', {}],
      ] as const) {
        const result = await client.callTool(name, args);
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      }
      const deep = await client.callTool('deep_input', {}).catch((error: Error) => ({ isError: true, content: [{ text: error.message }] }));
      expect(deep.isError).toBe(true);
    });
    expect(gateway.fake!.received.filter((r) => r.method === 'tools/call').map((r) => (r.params as { name: string }).name)).not.toContain('deep_input');
    const rejected = gateway.logs.records('tools left out of the catalogue').flatMap((r) => r.rejected as { name: string; reason: string }[]);
    expect(new Set(rejected.map((r) => r.name))).toEqual(new Set(['deep_input', 'deep_output', 'past_bound']));
    expect(rejected.find((r) => r.name === 'deep_input')!.reason).toBe(
      `the definition nests deeper than ${MAX_DEFINITION_DEPTH} levels (at /inputSchema/properties/a/properties/a/properties/a/properties/…)`,
    );
  });
});
