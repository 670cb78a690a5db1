import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogSnapshot } from '../../../upstream/server/catalog-snapshot.ts';
import { FULL, IDENTITY, connectLegacy, connectModern, startReferenceStack, type ReferenceStack } from '../../helpers/reference-stack.ts';

const WITH_OUTPUT_SCHEMA = [
  'list_strategies',
  'get_strategy',
  'create_strategy',
  'update_strategy',
  'list_overlays',
  'get_overlay_exposure',
  'get_backtest_results',
  'get_backtest_result',
  'list_orders',
  'get_order',
  'list_positions',
  'list_accounts',
  'list_connections',
  'list_data_files',
  'get_data_file',
  'list_risk_snapshots',
  'get_risk_snapshot',
  'list_deals',
  'list_lifecycle_events',
  'list_cash_flows',
  'list_journal_entries',
  'list_fund_periods',
  'list_webhooks',
  'create_webhook',
  'delete_webhook',
  'get_profile',
];
const WRITES = [
  'place_order',
  'execute_strategy',
  'create_strategy',
  'update_strategy',
  'create_connection',
  'create_webhook',
  'delete_webhook',
  'sync_portfolio',
  'compute_risk',
  'configure_overlay',
];

type ListedTool = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, boolean>;
  _meta?: Record<string, unknown>;
};

let stack: ReferenceStack;
let legacyTools: ListedTool[];
let modernTools: ListedTool[];

beforeAll(async () => {
  stack = await startReferenceStack();
  const legacy = await connectLegacy(stack.mcpUrl, FULL);
  const modern = await connectModern(stack.mcpUrl, IDENTITY);
  legacyTools = (await legacy.listTools()).tools as ListedTool[];
  modernTools = (await modern.listTools()).tools as ListedTool[];
  await legacy.close();
  await modern.close();
});
afterAll(() => stack.close());

/** Every object-valued `properties` entry below `schema`, with its path. */
function propertiesOf(schema: unknown, path = ''): Array<[string, Record<string, unknown>]> {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Record<string, unknown>;
  const own = Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>).map(
    ([name, child]) => [`${path}/${name}`, child] as [string, Record<string, unknown>],
  );
  return [...own, ...own.flatMap(([childPath, child]) => [...propertiesOf(child, childPath), ...propertiesOf(child.items, `${childPath}/items`)])];
}

describe('the reference upstream catalogue', () => {
  it('lists the same 34 tools to the v1 client (legacy initialize) and the v2 client pinned to 2026-07-28, whatever the credential', () => {
    expect(legacyTools).toHaveLength(34);
    expect(new Set(legacyTools.map((t) => t.name)).size).toBe(34);
    expect(modernTools).toEqual(legacyTools);
  });

  it('declares an outputSchema on exactly the 26 tools whose shape it promises', () => {
    expect(
      legacyTools
        .filter((t) => t.outputSchema)
        .map((t) => t.name)
        .sort(),
    ).toEqual([...WITH_OUTPUT_SCHEMA].sort());
  });

  it('marks exactly the 10 state-changing tools readOnlyHint false and sets every hint', () => {
    for (const tool of legacyTools) {
      expect(Object.keys(tool.annotations ?? {}).sort(), tool.name).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
    }
    expect(
      legacyTools
        .filter((t) => !t.annotations!.readOnlyHint)
        .map((t) => t.name)
        .sort(),
    ).toEqual([...WRITES].sort());
  });

  it('carries category and requiredScopes under _meta["ai.cpz/tool"] on every tool', () => {
    for (const tool of legacyTools) {
      const meta = tool._meta?.['ai.cpz/tool'] as { category: string; requiredScopes: string[] };
      expect(meta.category, tool.name).toMatch(/^[a-z-]+$/);
      expect(meta.requiredScopes.length, tool.name).toBeGreaterThan(0);
    }
    const scopes = (name: string) => (legacyTools.find((t) => t.name === name)!._meta!['ai.cpz/tool'] as { requiredScopes: string[] }).requiredScopes;
    expect(scopes('place_order')).toEqual(['trade']);
    expect(scopes('list_cash_flows')).toEqual(['middle-office:read']);
  });

  it('gives every tool a title and a description, and every inputSchema property a description', () => {
    for (const tool of legacyTools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(100);
      expect(tool.inputSchema.type).toBe('object');
      for (const [path, property] of propertiesOf(tool.inputSchema)) {
        expect(typeof property.description, `${tool.name}${path}`).toBe('string');
      }
    }
  });

  it('states the bounds the platform enforces in the inputSchemas', () => {
    const input = (name: string) => legacyTools.find((t) => t.name === name)!.inputSchema as any;
    expect(input('get_bars').properties.timeframe.enum).toEqual(['1Min', '5Min', '15Min', '30Min', '1Hour', '2Hour', '4Hour', '1Day', '1Week', '1Month']);
    expect(input('get_bars').properties.limit).toMatchObject({ minimum: 1, maximum: 10000 });
    expect(input('get_bars').properties.feed.enum).toEqual(['iex', 'sip']);
    expect(input('place_order').properties.quantity.exclusiveMinimum).toBe(0);
    expect(input('place_order').properties.time_in_force.enum).toEqual(['day']);
    expect(input('list_orders').properties.limit).toMatchObject({ minimum: 1, maximum: 100, default: 50 });
    expect(input('list_accounts').properties.limit.default).toBe(100);
  });

  it('compiles every schema under strict Ajv draft-07 and 2020-12, as a gateway would', () => {
    for (const ajv of [new Ajv({ strict: true, strictTypes: false }), new Ajv2020({ strict: true, strictTypes: false })]) {
      addFormats.default(ajv);
      for (const tool of legacyTools) {
        expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
        if (tool.outputSchema) expect(() => ajv.compile(tool.outputSchema!), tool.name).not.toThrow();
      }
    }
  });

  it('lists 3 guide resources and 2 prompts through both clients', async () => {
    for (const client of [await connectLegacy(stack.mcpUrl, FULL), await connectModern(stack.mcpUrl, FULL)]) {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri).sort()).toEqual(['cpzai://guides/discovery', 'cpzai://guides/permissions', 'cpzai://guides/tool-usage']);
      for (const resource of resources) {
        const { contents } = await client.readResource({ uri: resource.uri });
        expect((contents[0] as { text: string }).text.length).toBeGreaterThan(1000);
      }
      const discovery = (await client.readResource({ uri: 'cpzai://guides/discovery' })).contents[0] as { text: string };
      expect(discovery.text).toContain('/mcp/compact');
      expect(discovery.text).toContain('defer_loading');
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name).sort()).toEqual(['analyze_strategy', 'review_portfolio']);
      await client.close();
    }
  });

  it('matches the committed tool-catalog.json (run npm run export:catalog when this fails)', () => {
    const committed = readFileSync(new URL('../../../tool-catalog.json', import.meta.url), 'utf8');
    expect(committed).toBe(catalogSnapshot());
    const served = [...legacyTools].sort((a, b) => a.name.localeCompare(b.name));
    expect(JSON.parse(committed).tools).toEqual(served);
  });

  it('describes each tool in the words users type for it (data/queries/cpzai-dev.jsonl)', () => {
    const stop = new Set(
      'a an the of for my me to in on at by and or is are that which what who i am have has not yet be been with from such as one all its it this their them show read open look up between still now another'.split(
        ' ',
      ),
    );
    const words = (text: string) =>
      text
        .toLowerCase()
        .split(/[^a-z]+/)
        .filter((w) => w && !stop.has(w));
    const stem = (word: string) => word.replace(/(ies|es|s|ed|ing)$/, '');
    const vocabulary = (tool: ListedTool) =>
      new Set(
        words([tool.name, tool.title, tool.description, ...propertiesOf(tool.inputSchema).flatMap(([path, p]) => [path, String(p.description)])].join(' ')).map(
          stem,
        ),
      );
    const queries = readFileSync(new URL('../../../data/queries/cpzai-dev.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n');
    const gaps: string[] = [];
    for (const { query, gold } of queries.map((line) => JSON.parse(line) as { query: string; gold: string[] })) {
      for (const name of gold) {
        const known = vocabulary(legacyTools.find((t) => t.name === name)!);
        const missing = words(query).filter((w) => !known.has(stem(w)));
        if (missing.length) gaps.push(`${name} lacks "${missing.join('", "')}" for "${query}"`);
      }
    }
    expect(gaps).toEqual([]);
  });

  it('has a row for every tool in the tool table of upstream/README.md', () => {
    const readme = readFileSync(new URL('../../../upstream/README.md', import.meta.url), 'utf8');
    const missing = legacyTools.map((t) => t.name).filter((name) => !readme.includes(`| ${name} |`) && !readme.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });
});
