/**
 * An upstream's own `_meta` scope declaration never lowers the operator's `upstreams[].scopes.required`
 * (catalog.ts scopesOf): a third-party server writing `requiredScopes: []` on its tools made them public on an
 * upstream the operator had restricted to one scope, for listing and calling, a tool added later included
 * (pinning try-out). A declared tool needs one of its scopes and one of the upstream's; only `scopeRules` set a
 * tool's scopes outright.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { rpc } from '../helpers/raw-mcp.ts';

const tool = (name: string, requiredScopes?: string[]) => ({
  definition: {
    name,
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    ...(requiredScopes ? { _meta: { 'ai.cpz/tool': { requiredScopes } } } : {}),
  } as Tool,
});
const KEYS = {
  nobody: { name: 'nobody', key: 'k_nobody', secret: 'nobody-secret-0123', scopes: ['other'] },
  admin: { name: 'admin', key: 'k_admin', secret: 'admin-secret-0123', scopes: ['admin'] },
  both: { name: 'both', key: 'k_both', secret: 'both-secret-0123', scopes: ['admin', 'files:write'] },
};
let gateway: InProcessGateway;

beforeAll(() => {
  gateway = inProcessGateway(
    {
      credentials: { apiKeys: Object.values(KEYS) },
      upstreams: [{ health: { intervalMs: 0 }, scopes: { required: ['admin'] }, scopeRules: { ruled_public: [] } }],
    },
    { fake: { tools: [tool('public_by_meta', []), tool('plain'), tool('declared', ['files:write']), tool('ruled_public', [])] } },
  );
});
afterAll(async () => {
  await gateway?.close();
});

const as = (who: keyof typeof KEYS) => ({ 'x-cpz-key': KEYS[who].key, 'x-cpz-secret': KEYS[who].secret });
async function send(who: keyof typeof KEYS, method: string, params: Record<string, unknown> = {}) {
  const { headers, body } = rpc('modern', 1, method, params);
  const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...as(who) }, body: JSON.stringify(body) }));
  return (await response.json()) as { result?: { tools?: { name: string }[]; isError?: boolean }; error?: { message: string } };
}
const listed = async (who: keyof typeof KEYS) => ((await send(who, 'tools/list')).result?.tools ?? []).map((t) => t.name).sort();

describe("an upstream's _meta scopes under its scopes.required", () => {
  it('lists a declared-public tool only to callers with the upstream scope, and a declared one to callers with both', async () => {
    expect(await listed('nobody')).toEqual(['ruled_public']);
    expect(await listed('admin')).toEqual(['plain', 'public_by_meta', 'ruled_public']);
    expect(await listed('both')).toEqual(['declared', 'plain', 'public_by_meta', 'ruled_public']);
  });

  it('refuses the call as an unknown tool to a caller without the upstream scope', async () => {
    expect((await send('nobody', 'tools/call', { name: 'public_by_meta', arguments: {} })).error?.message).toMatch(/^Unknown tool: public_by_meta/);
    expect((await send('admin', 'tools/call', { name: 'declared', arguments: {} })).error?.message).toMatch(/^Unknown tool: declared/);
    expect((await send('admin', 'tools/call', { name: 'public_by_meta', arguments: {} })).error).toBeUndefined();
  });
});

describe('listings cached per visibility key', () => {
  it('do not carry a floored tool to a caller without the floor scope, whichever lists first (review)', async () => {
    // Only declared tools: the floor scope is no tool's own required scope, so the cache key must count it itself.
    for (const order of [
      ['both', 'files'],
      ['files', 'both'],
    ] as const) {
      const keys = {
        files: { name: 'files', key: 'k_files', secret: 'files-secret-0123', scopes: ['files:write'] },
        both: { name: 'both', key: 'k_both', secret: 'both-secret-0123', scopes: ['admin', 'files:write'] },
      };
      const floored = inProcessGateway(
        { credentials: { apiKeys: Object.values(keys) }, upstreams: [{ health: { intervalMs: 0 }, scopes: { required: ['admin'] } }] },
        { fake: { tools: [tool('declared', ['files:write']), tool('also_declared', ['files:write'])] } },
      );
      try {
        const names = async (who: keyof typeof keys, path: URL) => {
          const { headers, body } = rpc('modern', 1, 'tools/list');
          const response = await floored.fetch(
            new Request(path, {
              method: 'POST',
              headers: { ...headers, 'x-cpz-key': keys[who].key, 'x-cpz-secret': keys[who].secret },
              body: JSON.stringify(body),
            }),
          );
          return (((await response.json()) as { result: { tools: { name: string }[] } }).result.tools ?? []).map((t) => t.name).sort();
        };
        const seen: Record<string, string[]> = {};
        for (const who of order) seen[who] = await names(who, floored.mcpUrl);
        expect(seen, order.join(' then ')).toEqual({ both: ['also_declared', 'declared'], files: [] });
      } finally {
        await floored.close();
      }
    }
  });
});
