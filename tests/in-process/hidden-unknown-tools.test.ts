/**
 * A hidden tool answers exactly what a name that exists nowhere does (README "Scopes"): for every tool a
 * narrow credential may not see, the refusal on /mcp, a direct call on /mcp/compact, call_tool and a
 * run_code script's tools.* call (message, `data.nearest`, everything) is the same on a gateway whose
 * upstream has the tool (hidden) and on one whose upstream lacks it (absent), the visible catalogue being
 * the same. The nearest names were asked of the shared index, whose statistics (term rarity, informative
 * words, the semantic arm) count hidden tools: hidden get_order, get_bars, get_strategy got none where a
 * missing name got get_profile (a tester, 7 of 33 pairs).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { FakeTool } from '../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

/** The reference upstream's catalogue, each tool's required scopes in `_meta['ai.cpz/tool']`. */
const CATALOGUE = (JSON.parse(readFileSync('tool-catalog.json', 'utf8')) as { tools: Tool[] }).tools;
const SCOPES = ['profile:read', 'orders:read'];
const required = (tool: Tool) => ((tool._meta?.['ai.cpz/tool'] as { requiredScopes?: string[] } | undefined)?.requiredScopes ?? []) as string[];
const seen = (tool: Tool) => required(tool).every((s) => SCOPES.includes(s));
const HIDDEN = CATALOGUE.filter((t) => !seen(t)).map((t) => t.name);
const fakeTools = (tools: Tool[]): FakeTool[] => tools.map((definition) => ({ definition, call: () => ({ content: [{ type: 'text', text: '{}' }] }) }));

let endpoint: ScopeEndpoint;
let hidden: InProcessGateway;
let absent: InProcessGateway;

beforeAll(async () => {
  endpoint = await startScopeEndpoint({ narrow: SCOPES });
  const config = { scopes: { endpoint: endpoint.url }, upstreams: [{ health: { intervalMs: 0 } }], compact: { codeMode: { enabled: true } } };
  hidden = inProcessGateway(config, { fake: { tools: fakeTools(CATALOGUE) } });
  absent = inProcessGateway(config, { fake: { tools: fakeTools(CATALOGUE.filter(seen)) } });
});
afterAll(async () => {
  await hidden?.close();
  await absent?.close();
  await endpoint?.close();
});

/** One tools/call as the narrow credential, on /mcp or /mcp/compact: the JSON-RPC answer without its id. */
async function call(gateway: InProcessGateway, compact: boolean, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { headers, body } = rpc('modern', 1, 'tools/call', params);
  delete headers['x-cpz-key'];
  delete headers['x-cpz-secret'];
  const url = compact ? gateway.compactUrl : gateway.mcpUrl;
  const response = await gateway.fetch(
    new Request(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer narrow' }, body: JSON.stringify(body) }),
  );
  const [message] = await messagesOf(response);
  const { id: _id, ...answer } = message as Record<string, unknown>;
  const result = answer.result as { _meta?: Record<string, unknown> } | undefined;
  // Each run has an id of its own.
  delete result?._meta?.['ai.cpz.gateway/runId'];
  return answer;
}

const SURFACES: [string, (gateway: InProcessGateway, name: string) => Promise<Record<string, unknown>>][] = [
  ['a tools/call on /mcp', (g, name) => call(g, false, { name, arguments: {} })],
  ['a tools/call on /mcp/compact', (g, name) => call(g, true, { name, arguments: {} })],
  ['call_tool', (g, name) => call(g, true, { name: 'call_tool', arguments: { name, arguments: {} } })],
  [
    'a run_code script',
    (g, name) =>
      call(g, true, {
        name: 'run_code',
        arguments: { code: `try { await tools[${JSON.stringify(name)}]({}); return 'ran'; } catch (e) { return e.message; }` },
      }),
  ],
];

describe('a hidden tool answers as a missing one', () => {
  it('hides most of the catalogue from the narrow credential', () => {
    expect(HIDDEN.length).toBeGreaterThan(25);
    expect(HIDDEN).toContain('get_bars');
  });

  it.each(SURFACES)(
    'on %s: message, nearest names and all, for every hidden tool',
    async (_surface, ask) => {
      const differ: string[] = [];
      let suggested = 0;
      for (const name of HIDDEN) {
        const [whenHidden, whenAbsent] = [await ask(hidden, name), await ask(absent, name)];
        expect(JSON.stringify(whenHidden)).toMatch(/Unknown tool/);
        if (JSON.stringify(whenHidden).includes('Nearest names: ')) suggested += 1;
        if (JSON.stringify(whenHidden) !== JSON.stringify(whenAbsent)) differ.push(`${name}: ${JSON.stringify(whenHidden)} vs ${JSON.stringify(whenAbsent)}`);
      }
      expect(differ).toEqual([]);
      // The hints are compared, not missing: some hidden names get one.
      expect(suggested).toBeGreaterThan(0);
    },
    60_000,
  );
});

/**
 * 2,400 tools, half of them hidden from the narrow credential: from 1,000 findable tools the nearest names
 * come from the names alone (catalog/name-hints.ts), not an index of the caller's findable tools built for
 * each scope set (half a second of CPU at 10,000 tools), and still never name a hidden tool.
 */
describe('a hidden tool in a large catalogue', () => {
  const VERBS = ['get', 'list', 'create', 'cancel', 'update', 'delete'];
  const NOUNS = ['order', 'account', 'quote', 'position', 'strategy', 'alert', 'report', 'ledger'];
  const tool = (name: string, scope: string): Tool => ({
    name,
    description: `${name.replaceAll('_', ' ')}.`,
    inputSchema: { type: 'object' },
    _meta: { 'ai.cpz/tool': { requiredScopes: [scope] } },
  });
  const LARGE = Array.from({ length: 2400 }, (_, i) =>
    tool(`${VERBS[i % VERBS.length]}_${NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]}_${Math.floor(i / 48)}`, i % 2 ? 'admin:write' : 'profile:read'),
  );
  const visibleNames = new Set(LARGE.filter(seen).map((t) => t.name));
  let large: { hidden: InProcessGateway; absent: InProcessGateway };
  beforeAll(async () => {
    const config = { scopes: { endpoint: endpoint.url }, upstreams: [{ health: { intervalMs: 0 } }] };
    large = {
      hidden: inProcessGateway(config, { fake: { tools: fakeTools(LARGE) } }),
      absent: inProcessGateway(config, { fake: { tools: fakeTools(LARGE.filter(seen)) } }),
    };
  });
  afterAll(async () => {
    await large?.hidden.close();
    await large?.absent.close();
  });

  it('suggests visible names by spelling, then by shared words, the same for a hidden name as for a missing one, with no index built', async () => {
    expect(visibleNames.size).toBe(1200);
    const findable = vi.spyOn(large.hidden.runtime.state.searchIndexes, 'findableIndex');
    const nearestOf = (answer: Record<string, unknown>) => (answer.error as { data?: { nearest?: string[] } } | undefined)?.data?.nearest ?? [];
    // A misspelt visible name comes first; the rest share its words.
    const misspelt = await call(large.hidden, false, { name: 'get_ordr_0', arguments: {} });
    expect(nearestOf(misspelt)[0]).toBe('get_order_0');
    expect(nearestOf(misspelt).length).toBe(5);
    // Hidden names (every odd one), and names of no tool.
    const names = [...[1, 501, 1001, 2399].map((i) => LARGE[i]!.name), 'list_strategy', 'ledger'];
    expect(names.filter((n) => visibleNames.has(n))).toEqual([]);
    for (const name of names) {
      const [whenHidden, whenAbsent] = [await call(large.hidden, false, { name, arguments: {} }), await call(large.absent, false, { name, arguments: {} })];
      expect(nearestOf(whenHidden).length, `${name}: ${JSON.stringify(whenHidden)}`).toBeGreaterThan(0);
      expect(
        nearestOf(whenHidden).every((n) => visibleNames.has(n)),
        name,
      ).toBe(true);
      expect(JSON.stringify(whenHidden), name).toBe(JSON.stringify(whenAbsent));
    }
    expect(findable).not.toHaveBeenCalled();
  });
});
