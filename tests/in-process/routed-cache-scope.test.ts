/**
 * resources/read and prompts/get of an upstream reachable by scope only (`upstreams[].scopes.required`)
 * are never `cacheScope: "public"` (SEP-2549): a shared cache honouring it could hand what one caller
 * may read to one who may not, so the gateway answers them `private`, as it does their lists, and their
 * `ttlMs` no longer than the caller's scopes are known to hold; an
 * upstream open to everyone keeps what it says. A URI two upstreams list is read from the one the caller
 * may use; server/discover's instructions name only the upstreams the caller may use, and logging/setLevel
 * reaches only those. In process,
 * 2026-07-28, through the real handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryFakeUpstream, inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { encodeParamValue } from '../../gateway/wire/param-value.ts';
import { rpc } from '../helpers/raw-mcp.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';

const READER = { 'x-cpz-key': 'reader', 'x-cpz-secret': 'any' };
const ADMIN = { 'x-cpz-key': 'admin', 'x-cpz-secret': 'any' };

let scopes: ScopeEndpoint;
beforeAll(async () => {
  scopes = await startScopeEndpoint({ reader: ['notes:read'], admin: ['notes:read', 'notes:admin'] });
});
afterAll(async () => {
  await scopes?.close();
});

async function readResource(gateway: InProcessGateway, uri = 'notes://guide'): Promise<{ cacheScope?: string; contents?: unknown[] }> {
  const { headers, body } = rpc('modern', 1, 'resources/read', { uri });
  const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...READER }, body: JSON.stringify(body) }));
  const message = (await response.json()) as { result?: { cacheScope?: string; contents?: unknown[] }; error?: unknown };
  expect(message.error).toBeUndefined();
  return message.result!;
}

describe('cacheScope of a routed read', () => {
  for (const [label, required, expected] of [
    ['an upstream reachable by scope only', ['notes:read'], 'private'],
    ['an upstream open to everyone', [], 'public'],
  ] as const) {
    it(`is ${expected} for ${label}`, async () => {
      const upstream = inMemoryFakeUpstream({
        tools: [],
        resources: { 'notes://guide': 'read me' },
        resourcesReadHint: { ttlMs: expected === 'private' ? 300_000 : 60_000, cacheScope: 'public' },
      });
      const gateway = inProcessGateway(
        { scopes: { endpoint: scopes.url }, upstreams: [{ scopes: { required: [...required] } }] },
        { upstreams: { notes: upstream } },
      );
      try {
        const result = (await readResource(gateway)) as { cacheScope?: string; contents?: unknown[]; ttlMs?: number };
        expect(result.contents).toHaveLength(1);
        expect(result.cacheScope).toBe(expected);
        // Reachable by scope: kept no longer than the caller's scopes are known to hold (the scope cache's
        // entry, a minute at most), not the upstream's 5 minutes; an open upstream's own hint stands.
        if (expected === 'private') expect(result.ttlMs).toBeLessThanOrEqual(60_000);
        else expect(result.ttlMs).toBe(60_000);
      } finally {
        await gateway.close();
      }
    });
  }
});

describe('a resource URI two upstreams list', () => {
  it("is read from the one the caller may use, not the first (the other's copy was read, or refused as not found)", async () => {
    const copy = (text: string) => inMemoryFakeUpstream({ tools: [], resources: { 'shared://doc/1': text } });
    const gateway = inProcessGateway(
      { scopes: { endpoint: scopes.url }, upstreams: [{ scopes: { required: ['secret:read'] } }, {}] },
      { upstreams: { alpha: copy("alpha's copy"), beta: copy("beta's copy") } },
    );
    try {
      const result = await readResource(gateway, 'shared://doc/1');
      expect(result.contents).toEqual([expect.objectContaining({ text: "beta's copy" })]);
    } finally {
      await gateway.close();
    }
  });
});

describe('the instructions of server/discover', () => {
  it("name only the upstreams the caller may use: another's heading or text would name a server hidden from it", async () => {
    const gateway = inProcessGateway(
      { scopes: { endpoint: scopes.url }, upstreams: [{ scopes: { required: ['secret:read'] } }, {}] },
      {
        upstreams: {
          alpha: inMemoryFakeUpstream({ tools: [], instructions: 'The vault of the admins.' }),
          beta: inMemoryFakeUpstream({ tools: [], instructions: 'Notes for everyone.' }),
        },
      },
    );
    try {
      const { headers, body } = rpc('modern', 1, 'server/discover', {});
      const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...READER }, body: JSON.stringify(body) }));
      const instructions = ((await response.json()) as { result: { instructions: string } }).result.instructions;
      expect(instructions).toContain('## beta\nNotes for everyone.');
      expect(instructions).toContain('Tools and prompts of 1 MCP server,');
      expect(instructions).not.toMatch(/alpha|vault/);
    } finally {
      await gateway.close();
    }
  });
});

describe('logging/setLevel (2025-11-25)', () => {
  it("reaches only the upstreams the caller may use: one closed to it by scopes.required is never sent the caller's level (try-out)", async () => {
    const legacy = (name: string) => inMemoryFakeUpstream({ era: 'legacy', logging: true, tools: [], instructions: name });
    const alpha = legacy('alpha');
    const beta = legacy('beta');
    const gateway = inProcessGateway(
      { scopes: { endpoint: scopes.url }, upstreams: [{ scopes: { required: ['secret:read'] } }, {}] },
      { upstreams: { alpha, beta } },
    );
    try {
      const { headers, body } = rpc('legacy', 1, 'logging/setLevel', { level: 'emergency' });
      const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...READER }, body: JSON.stringify(body) }));
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('"result":{}');
      expect(beta.received.filter((r) => r.method === 'logging/setLevel').map((r) => r.params.level)).toEqual(['emergency']);
      expect(alpha.received.filter((r) => r.method === 'logging/setLevel')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

describe('a ui:// view no upstream lists', () => {
  it.each([
    ['two upstreams', true],
    ['one upstream (review: routed to it unchecked)', false],
  ])('is read for a caller that may use a tool linking it, and is as missing as an unknown URI for one that may not, %s (try-out)', async (_, two) => {
    const linked = (name: string, view: string) => ({
      definition: { name, inputSchema: { type: 'object' as const }, _meta: { ui: { resourceUri: view } } },
      call: () => ({ content: [] }),
    });
    const notes = inMemoryFakeUpstream({
      tools: [
        linked('admin_panel', 'ui://notes/admin-view'),
        linked('notes_panel', 'ui://notes/notes-view'),
        linked('admin_listed', 'ui://notes/admin-listed'),
      ],
      resources: {
        'ui://notes/admin-view': { text: 'the admin view', unlisted: true },
        // Listed: the upstream's ui:// scheme is known, and still no unlisted view is routed by it (review).
        'ui://notes/notes-view': { text: 'the notes view' },
        // Listed, and linked by a tool hidden from the reader: the listing is no way around the tool's scope (try-out).
        'ui://notes/admin-listed': { text: 'the listed admin view' },
        'ui://notes/other-view': { text: 'another view', unlisted: true },
      },
      // A template of the ui:// scheme: a spelling of a hidden view that matches it was routed to the upstream (review).
      resourceTemplates: ['ui://notes/{kind}/{name}'],
    });
    const gateway = inProcessGateway(
      {
        scopes: { endpoint: scopes.url },
        upstreams: [{ scopeRules: { admin_panel: ['notes:admin'], admin_listed: ['notes:admin'], notes_panel: ['notes:read'] } }, ...(two ? [{}] : [])],
      },
      {
        upstreams: {
          notes,
          ...(two ? { other: inMemoryFakeUpstream({ tools: [] }) } : {}),
        },
      },
    );
    const read = async (uri: string) => {
      const { headers, body } = rpc('modern', 1, 'resources/read', { uri });
      // As a client must send a value with control characters or surrounding spaces (spec basic/transports §Request Metadata).
      headers['mcp-name'] = encodeParamValue(uri);
      const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...READER }, body: JSON.stringify(body) }));
      return (await response.json()) as {
        result?: { contents: { text: string }[] };
        error?: { code: number; message: string; data?: Record<string, unknown> };
      };
    };
    try {
      expect((await read('ui://notes/notes-view')).result?.contents).toEqual([expect.objectContaining({ text: 'the notes view' })]);
      const hidden = await read('ui://notes/admin-view');
      const missing = await read('ui://notes/no-such-view');
      expect(hidden.result).toBeUndefined();
      expect(hidden.error).toEqual({
        ...missing.error,
        message: missing.error!.message.replace('no-such-view', 'admin-view'),
        data: { ...missing.error!.data, uri: 'ui://notes/admin-view' },
      });
      // A view no tool links, unlisted: not routed by its scheme either; nor the hidden one by an upper-case scheme (review).
      expect((await read('ui://notes/other-view')).result).toBeUndefined();
      expect((await read('UI://notes/admin-view')).result).toBeUndefined();
      // A listed view of a hidden tool, and a `ui:` spelling without `//` a server may read as the view (try-out): as missing.
      for (const uri of ['ui://notes/admin-listed', 'ui:notes/admin-view']) {
        const refused = await read(uri);
        expect(refused.result).toBeUndefined();
        expect(refused.error?.message).toBe(`Resource not found: ${uri}`);
      }
      // Spellings a WHATWG URL parser (the SDK server's `new URL(uri)`) reads as the hidden view: refused as no
      // URI at all, before any routing, whoever asks (security try-out: one upstream served them).
      const reads = notes.received.filter((r) => r.method === 'resources/read').length;
      for (const spelling of [
        '\tui://notes/admin-view',
        ' ui://notes/admin-view',
        'u\ti://notes/admin-view',
        'ui:\n//notes/admin-view',
        '\u0000ui://notes/admin-view',
        'ui://notes/admin-view\r',
        // Spelt as the parser does not keep them, matching the upstream's listed template `ui://notes/{kind}/{name}` (review).
        'ui://notes/../admin-view',
        'ui://notes/%2e%2e/admin-view',
        'ui://notes:/admin-view',
        'ui://@notes/admin-view',
        'UI://notes/admin-view',
      ]) {
        const refused = await read(spelling);
        expect(refused.result).toBeUndefined();
        expect(refused.error?.code).toBe(-32602);
        expect(refused.error?.message).toMatch(
          /^Invalid params: \/uri (is not a URI: it (holds the control character U\+00(09|0A|0D|00) at \d+|begins or ends with a space) \(RFC 3986 §2\)|is a ui:\/\/ view spelt as no URL parser keeps it: read as ui:\/\/notes\/admin-view)$/,
        );
        expect(refused.error?.data).toMatchObject({ path: '/uri' });
      }
      expect(notes.received.filter((r) => r.method === 'resources/read').length).toBe(reads);
      // Nor listed to it (try-out: the hidden tool's view was listed, name and URI, to a caller whose read of it
      // answered not found); listed to a caller that may use the tool, and private for both (it depends on the caller).
      const list = async (who: Record<string, string>) => {
        const { headers, body } = rpc('modern', 2, 'resources/list', {});
        const response = await gateway.fetch(new Request(gateway.mcpUrl, { method: 'POST', headers: { ...headers, ...who }, body: JSON.stringify(body) }));
        const { result } = (await response.json()) as { result: { resources: { uri: string }[]; cacheScope: string } };
        return { uris: result.resources.map((r) => r.uri), cacheScope: result.cacheScope };
      };
      expect(await list(READER)).toEqual({ uris: ['ui://notes/notes-view'], cacheScope: 'private' });
      expect(await list(ADMIN)).toEqual({ uris: ['ui://notes/notes-view', 'ui://notes/admin-listed'], cacheScope: 'private' });
    } finally {
      await gateway.close();
    }
  });
});
