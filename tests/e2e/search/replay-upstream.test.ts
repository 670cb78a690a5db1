import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DATA_DIR } from '../../fixtures/search-data.ts';
import { startReplayUpstream, type ReplayUpstream } from '../../../upstream/replay/index.ts';
import { syntheticCatalog } from '../../../upstream/replay/synthetic-catalog.ts';

const LIVEMCPBENCH = resolve(DATA_DIR, 'catalogs/livemcpbench-tools.json');

describe('replay upstream serving livemcpbench (527 tools, page size 50)', () => {
  let upstream: ReplayUpstream;
  beforeAll(async () => {
    upstream = await startReplayUpstream({ catalogPath: LIVEMCPBENCH, pageSize: 50 });
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('serves every tool across all pages to a v2 client (modern era)', async () => {
    const client = new Client({ name: 'replay-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(527);
      expect(new Set(tools.map((t) => t.name)).size).toBe(527);
      // Names repeated across servers are told apart by their server key.
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['filesystem__write_file', 'bing_search']));
      expect(tools.find((t) => t.name === 'bing_search')?._meta?.['ai.cpz/tool']).toEqual({ category: 'Discovery', requiredScopes: [] });
    } finally {
      await client.close();
    }
  });

  it('pages with nextCursor at the configured page size to a v1 client (legacy era)', async () => {
    const client = new LegacyClient({ name: 'replay-test-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(upstream.url)));
    try {
      const sizes: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        sizes.push(page.tools.length);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(sizes).toEqual([50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 27]);
    } finally {
      await client.close();
    }
  });

  it('answers an invalid cursor and an unknown tool with -32602', async () => {
    const client = new LegacyClient({ name: 'replay-test-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(upstream.url)));
    try {
      await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });

  it('echoes a call to a tool without outputSchema as text', async () => {
    const client = new Client({ name: 'replay-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    try {
      const result = await client.callTool({ name: 'bing_search', arguments: { query: 'mcp' } });
      expect(result.content).toEqual([{ type: 'text', text: JSON.stringify({ tool: 'bing_search', arguments: { query: 'mcp' } }) }]);
    } finally {
      await client.close();
    }
  });
});

describe('replay upstream with output schemas', () => {
  it('answers with structuredContent that the client validates against the outputSchema', async () => {
    const outputSchema = {
      type: 'object',
      properties: {
        data: { type: 'array', items: { type: 'object' }, minItems: 1 },
        count: { type: 'integer', minimum: 0 },
        status: { type: 'string', enum: ['settled', 'pending'] },
        at: { type: 'string', format: 'date-time' },
      },
      required: ['data', 'count', 'status', 'at'],
    };
    const upstream = await startReplayUpstream({
      tools: [{ name: 'list_cash_flows', description: 'Cash flows', inputSchema: { type: 'object' }, outputSchema }],
    });
    const client = new Client({ name: 'replay-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
      await client.listTools();
      const result = await client.callTool({ name: 'list_cash_flows', arguments: {} });
      expect(result.structuredContent).toEqual({ data: [{}], count: 0, status: 'settled', at: '2026-01-01T00:00:00Z' });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
      await upstream.close();
    }
  });
});

describe('synthetic catalogues', () => {
  it('builds 10,000 uniquely named tools from the shared catalogues, and a client lists them all', async () => {
    const entries = syntheticCatalog(10_000);
    expect(new Set(entries.map((e) => e.tool.name)).size).toBe(10_000);
    const upstream = await startReplayUpstream({ tools: entries, pageSize: 1000 });
    const client = new Client({ name: 'replay-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(10_000);
      expect(tools[644].name).toBe('bing-cn-mcp-2__bing_search');
    } finally {
      await client.close();
      await upstream.close();
    }
  });
});

describe('the replay upstream command line', () => {
  const ROOT = resolve(import.meta.dirname, '../../..');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', './scripts/register-ts.mjs', 'upstream/replay/cli.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

  it('prints its usage for --help and exits 0 (it crashed with a parseArgs stack trace)', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: tsx upstream\/replay\/cli\.ts \(--catalog FILE \| --synthetic N\)/);
    expect(help.stdout).toContain('--page-size N');
    expect(help.stderr).not.toMatch(/\n\s+at /);
  });

  it('answers an unknown option and a bad number with the reason and the usage, exit 2, no stack trace', () => {
    const unknown = run('--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^Unknown option '--bogus'.*\nusage: /s);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
    const bad = run('--synthetic', 'ten');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^--synthetic: expected a whole number of at least 1, got "ten"\nusage: /);
  });
});
