/**
 * An upstream tool definition that is no spec `Tool` (an inputSchema of type "string", an
 * outputSchema whose `required` is no list, an empty name, a hint that is no boolean) is left out of the
 * catalogue on its own (checks/tool-definition.ts), logged with the member it breaks, and the upstream's
 * other tools are listed and called by real SDK clients of both eras. Before, such a tool was served, and
 * either client refused the whole tools/list (v1: a ZodError; v2: "Invalid result for tools/list"), so every
 * tool of every upstream was out of reach for a caller who could see the bad one (try-out).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolDefinitionProblem } from '../../gateway/checks/tool-definition.ts';
import { ERAS, withClient } from '../helpers/era-client.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { FULL_KEY } from '../helpers/raw-mcp.ts';
import { rawStdioServerArgs } from '../fixtures/raw-stdio-server.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../upstream/replay/index.ts';
import type { ToolDefinition } from '../../upstream/replay/catalog-file.ts';

const normal = {
  name: 'get_weather',
  description: 'Weather now.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};
const MALFORMED: Record<string, { definition: unknown; reason: string }> = {
  stringy: { definition: { name: 'stringy', inputSchema: { type: 'string' } }, reason: '/inputSchema/type: must be "object"' },
  badoutput: {
    definition: { name: 'badoutput', inputSchema: { type: 'object' }, outputSchema: { type: 'object', required: 'a' } },
    reason: '/outputSchema/required: must be an array of property names',
  },
  // An SDK v1 client compiles each outputSchema of the list with Ajv: this one threw for the whole list (try-out).
  badtype: {
    definition: { name: 'badtype', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { x: { type: 'strin' } } } },
    reason: '/outputSchema/properties/x/type: must be a JSON type name or a list of them (string, number, integer, boolean, array, object, null)',
  },
  badpattern: {
    definition: {
      name: 'badpattern',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { x: { type: 'string', pattern: '([a' } } },
    },
    reason: '/outputSchema/properties/x/pattern: is no regular expression (Invalid regular expression: /([a/u: Unterminated character class)',
  },
  '': { definition: { name: '', inputSchema: { type: 'object' } }, reason: '/name: a tool name is a non-empty string' },
  badicon: {
    definition: { name: 'badicon', inputSchema: { type: 'object' }, icons: [{ src: 'https://example.com/i.png', sizes: '48x48' }] },
    reason: '/icons/0/sizes: must be an array of strings ("48x48", "any")',
  },
  boolprop: {
    definition: { name: 'boolprop', inputSchema: { type: 'object', properties: { x: true } } },
    reason: '/inputSchema/properties/x: must be a JSON Schema object',
  },
  badhint: {
    definition: { name: 'badhint', inputSchema: { type: 'object' }, annotations: { readOnlyHint: 'yes' } },
    reason: '/annotations/readOnlyHint: must be a boolean',
  },
};

let replay: ReplayUpstream;
let gateway: InProcessGateway;
beforeAll(async () => {
  // The replay upstream lists its definitions as they are (an SDK server refuses to send these).
  replay = await startReplayUpstream({ tools: [...Object.values(MALFORMED).map(({ definition }) => definition), normal] as ToolDefinition[] });
  gateway = inProcessGateway({ anonymous: true, upstreams: [{ name: 'replay', url: replay.url, forwardCredentials: false }] });
});
afterAll(async () => {
  await gateway?.close();
  await replay?.close();
});

describe.each(ERAS)('an upstream listing tools that are no spec Tool (%s era)', (era) => {
  it('serves its other tools to a real client, leaves the malformed ones out and logs each with the member it breaks', async () => {
    await withClient(era, gateway.mcpUrl, FULL_KEY, async (client) => {
      expect((await client.listTools()).map((t) => t.name)).toEqual(['get_weather']);
      expect((await client.callTool('get_weather', { city: 'Paris' })).isError).toBeFalsy();
    });
    const rejected = gateway.logs.records('tools left out of the catalogue').flatMap((r) => r.rejected as { name: string; reason: string }[]);
    expect(Object.fromEntries(rejected.map((r) => [r.name, r.reason]))).toEqual(
      Object.fromEntries(Object.entries(MALFORMED).map(([name, { reason }]) => [name, reason])),
    );
  });
});

describe('a stdio upstream listing tools that are no spec Tool', () => {
  it('has its other tools served (the list is not refused whole by the SDK client)', async () => {
    const tools = [...Object.values(MALFORMED).map(({ definition }) => definition), { name: 'no_input', description: 'x' }, null, normal];
    const stdio = inProcessGateway({
      anonymous: true,
      // Overrides merge by index: the first upstream stays an HTTP one.
      upstreams: [
        { name: 'replay', url: replay.url, forwardCredentials: false },
        { name: 'raw', command: process.execPath, args: rawStdioServerArgs(tools), forwardCredentials: false },
      ],
    });
    try {
      await withClient('modern', stdio.mcpUrl, FULL_KEY, async (client) => {
        expect((await client.listTools()).map((t) => t.name)).toEqual(['replay__get_weather', 'raw__get_weather']);
        expect((await client.callTool('raw__get_weather', { city: 'Paris' })).isError).toBeFalsy();
      });
      const rejected = stdio.logs
        .records('tools left out of the catalogue')
        .filter((r) => r.upstream === 'raw')
        .flatMap((r) => r.rejected as { name: string }[]);
      expect(rejected.map((r) => r.name).sort()).toEqual([
        '',
        '',
        'badhint',
        'badicon',
        'badoutput',
        'badpattern',
        'badtype',
        'boolprop',
        'no_input',
        'stringy',
      ]);
    } finally {
      await stdio.close();
    }
  });
});

describe('toolDefinitionProblem', () => {
  it('takes the spec Tool shapes: a 2026-07-28 non-object output schema, icons, execution, _meta', () => {
    expect(toolDefinitionProblem(normal)).toBeUndefined();
    const full = {
      ...normal,
      title: 'Weather',
      outputSchema: { type: 'array', items: { type: 'string' } },
      icons: [{ src: 'https://example.com/i.png', mimeType: 'image/png' }],
      execution: { taskSupport: 'optional' },
      _meta: { 'example.com/k': 1 },
      annotations: { title: 'W', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    };
    expect(toolDefinitionProblem(full)).toBeUndefined();
    expect(toolDefinitionProblem({ ...normal, icons: [{}] })).toBe('/icons/0/src: an icon is an object with a string src');
    expect(toolDefinitionProblem({ name: 'noschema', description: 'x' })).toBe('/inputSchema: must be a JSON Schema object');
    expect(toolDefinitionProblem({ ...normal, inputSchema: { type: 'object', properties: [] } })).toBe('/inputSchema/properties: must be an object');
    expect(toolDefinitionProblem({ ...normal, description: 3 })).toBe('/description: must be a string');
    expect(toolDefinitionProblem(null)).toBe('the definition is not an object');
  });
});
