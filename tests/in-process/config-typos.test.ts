/**
 * A per-tool config entry naming no tool the upstream lists (a typo such as `scopeRules.write_not` for
 * `write_note`) applies to nothing: the gateway says so once, naming the key and the nearest listed
 * name, and counts it in `mcp_config_unmatched_rules{upstream}`, so a lost scope rule does not pass
 * silently. In process, through the real handler.
 */
import { createServer } from 'node:net';
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessGateway, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { rawRequest } from '../helpers/enforcement.ts';
import { waitFor } from '../helpers/wait.ts';

const tool = (name: string, readOnly: boolean) => ({
  definition: { name, description: `${name} (test tool)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: readOnly } } as Tool,
});
const KEY = { 'x-cpz-key': 'k_writer', 'x-cpz-secret': 'writer-secret-0123' };

/** A loopback port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('config entries naming no listed tool', () => {
  let gateway: InProcessGateway;
  beforeAll(async () => {
    gateway = inProcessGateway(
      {
        credentials: { apiKeys: [{ name: 'writer', key: 'k_writer', secret: 'writer-secret-0123', scopes: ['notes:read', 'notes:write'] }] },
        upstreams: [
          { scopeRules: { write_not: ['notes:write'] }, scopes: { required: ['notes:read'] }, anchors: ['read_note'], categories: { raed_note: 'read' } },
        ],
      },
      { fake: { tools: [tool('read_note', true), tool('write_note', false)] } },
    );
    const response = await rawRequest(gateway.gatewayUrl, '/mcp', 'modern', 'tools/list', {}, KEY, routedFetch);
    expect(response.status).toBe(200);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('are warned about once, by key, with the nearest listed name, and counted per upstream', async () => {
    // A second list of the same catalogue adds no second warning.
    await rawRequest(gateway.gatewayUrl, '/mcp/compact', 'modern', 'tools/list', {}, KEY, routedFetch);
    const warnings = gateway.logs.records('name tools it does not list');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.unmatched).toEqual(['scopeRules.write_not (did you mean write_note?)', 'categories.raed_note (did you mean read_note?)']);
    expect(warnings[0]!.level).toBe(40);
    const metrics = await (await routedFetch(`${gateway.gatewayUrl}/metrics`)).text();
    expect(metrics).toMatch(/^mcp_config_unmatched_rules\{upstream="fake"\} 2$/m);
  });
});

describe('an API key scope that nothing needs', () => {
  it('is warned about once the catalogues are fetched, naming the key and the nearest scope in use', async () => {
    const gateway = inProcessGateway(
      {
        credentials: {
          apiKeys: [
            { name: 'reader', key: 'k_reader', secret: 'reader-secret-0123', scopes: ['notes:reed'] },
            { name: 'writer', key: 'k_writer', secret: 'writer-secret-0123', scopes: ['notes:read', 'notes:write'] },
          ],
        },
        upstreams: [{ scopeRules: { write_note: ['notes:write'] }, scopes: { required: ['notes:read'] } }],
      },
      { fake: { tools: [tool('read_note', true), tool('write_note', false)] } },
    );
    try {
      gateway.runtime.warm();
      const [warning] = await waitFor(
        'the idle scope warning',
        () => gateway.logs.records('grant nothing').length > 0 && gateway.logs.records('grant nothing'),
      );
      expect(warning!.idleScopes).toEqual(['credentials.apiKeys[0] (reader): notes:reed (did you mean notes:read?)']);
      expect(warning!.level).toBe(40);
      // What the misspelt key sees: nothing, as the warning says.
      const listed = await (
        await rawRequest(gateway.gatewayUrl, '/mcp', 'modern', 'tools/list', {}, { 'x-cpz-key': 'k_reader', 'x-cpz-secret': 'reader-secret-0123' }, routedFetch)
      ).json();
      expect(listed.result.tools).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('is not warned about while tools are held: their scopes are still needed (operator try-out: with the pin store down, every tool held unverified, every scope was said to grant nothing)', async () => {
    // A pin store that cannot be reached (nothing listens on the port): every tool is held unverified, out of the catalogue.
    const gateway = inProcessGateway(
      {
        credentials: { apiKeys: [{ name: 'writer', key: 'k_writer', secret: 'writer-secret-0123', scopes: ['notes:read', 'notes:write'] }] },
        upstreams: [{ scopeRules: { write_note: ['notes:write'] }, scopes: { required: ['notes:read'] } }],
        cache: { store: 'redis', redisUrl: `redis://127.0.0.1:${await closedPort()}`, operationTimeoutMs: 100 },
      },
      { fake: { tools: [tool('read_note', true), tool('write_note', false)] } },
    );
    try {
      gateway.runtime.warm();
      await waitFor('the tools held', () => gateway.runtime.state.pins.held().length === 2);
      await waitFor('the catalogue', () => gateway.runtime.state.upstreams[0]!.catalog.lastCatalog());
      await rawRequest(gateway.gatewayUrl, '/mcp', 'modern', 'tools/list', {}, KEY, routedFetch);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(gateway.logs.records('grant nothing')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('is not warned about when every scope is in use', async () => {
    const gateway = inProcessGateway(
      {
        credentials: { apiKeys: [{ name: 'writer', key: 'k_writer', secret: 'writer-secret-0123', scopes: ['notes:read', 'notes:write'] }] },
        upstreams: [{ scopeRules: { write_note: ['notes:write'] }, scopes: { required: ['notes:read'] } }],
      },
      { fake: { tools: [tool('read_note', true), tool('write_note', false)] } },
    );
    try {
      gateway.runtime.warm();
      await waitFor('the catalogue', () => gateway.runtime.state.upstreams[0]!.catalog.lastCatalog());
      await rawRequest(gateway.gatewayUrl, '/mcp', 'modern', 'tools/list', {}, KEY, routedFetch);
      expect(gateway.logs.records('grant nothing')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
