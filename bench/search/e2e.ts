/**
 * End-to-end mode of the search benchmark: the query set's catalogue served by the replay upstream, a
 * gateway in front of it, and each query asked of the gateway's `search_tools` on POST /mcp/compact by a
 * real MCP client (v2 SDK). Everything listens on 127.0.0.1 with free ports and is closed afterwards.
 *
 * A catalogue whose tools carry server keys (livemcpbench) is served as one replay upstream per server,
 * each configured in the gateway under its server key, so the gateway sees the servers exactly as it
 * would in production (tools exposed as `<server_key>__<name>`, the upstream known to the search). Any
 * other catalogue is one replay upstream. Rankings are mapped back to the file's names before scoring.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startReplayUpstream } from '../../upstream/replay/index.ts';
import { SERVER_SEPARATOR } from '../../upstream/replay/replay-tools.ts';
import type { Ranker } from './evaluate.ts';
import type { QuerySet } from '../../tests/fixtures/search-data.ts';

export type EndToEnd = { rank: Ranker; close(): Promise<void> };

const READY_TIMEOUT_MS = 30_000;
/** The gateway wants a credential; with no scope endpoint configured any value sees the whole catalogue. */
const CREDENTIAL_HEADERS = { 'x-cpz-key': 'bench-search', 'x-cpz-secret': 'bench-search' };

/** Names of the matches in a search_tools result, whichever of its documented shapes it takes. */
function matchNames(result: { structuredContent?: unknown; content?: unknown }): string[] {
  const fromList = (list: unknown): string[] | undefined =>
    Array.isArray(list) ? list.map((m) => (m as { name?: unknown }).name).filter((n): n is string => typeof n === 'string') : undefined;
  const sc = result.structuredContent as Record<string, unknown> | undefined;
  const structured = sc && (fromList(sc.results) ?? fromList(sc.tools) ?? fromList(sc.matches));
  if (structured) return structured;
  const text = (result.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === 'text')?.text ?? '';
  try {
    const parsed = JSON.parse(text) as unknown;
    return fromList(parsed) ?? fromList((parsed as Record<string, unknown>).results) ?? fromList((parsed as Record<string, unknown>).tools) ?? [];
  } catch {
    return [];
  }
}

/** The file's name of an exposed `<server_key>__<name>` (a name the gateway had to hash stays as it is,
 *  and so counts as a miss). */
function originalName(name: string, serverKeys: ReadonlySet<string>): string {
  const at = name.indexOf(SERVER_SEPARATOR);
  return at > 0 && serverKeys.has(name.slice(0, at)) ? name.slice(at + SERVER_SEPARATOR.length) : name;
}

/** The catalogue split by server key (one group, named after the set, when the file has no keys). */
function byServer(set: QuerySet): Map<string, QuerySet['entries']> {
  const groups = new Map<string, QuerySet['entries']>();
  const keyed = set.entries.every((e) => e.serverKey !== undefined);
  for (const entry of set.entries) {
    // Upstream names are [A-Za-z0-9_-]{1,32} (config/schema.json); one livemcpbench key has spaces.
    const key = keyed ? (entry.serverKey as string).replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 32) : 'replay';
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  return groups;
}

async function waitReady(baseUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
    if (res?.ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway at ${baseUrl} not ready within ${READY_TIMEOUT_MS} ms`);
}

/**
 * Starts replay upstream + gateway for `set` and connects a client to /mcp/compact. Resolves to
 * `{ skipped }` (with the reason) when this gateway has no compact endpoint or no search_tools yet.
 */
export async function startEndToEnd(set: QuerySet): Promise<EndToEnd | { skipped: string }> {
  // Imported here so that the offline mode runs whatever state the gateway is in.
  const { startGateway } = await import('../../gateway/gateway.ts');
  const { loadConfig } = await import('../../config/load.ts');
  const dir = mkdtempSync(join(tmpdir(), 'bench-search-'));
  const closers: (() => Promise<void>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const groups = byServer(set);
    const lines = ['listen: { host: 127.0.0.1, port: 0 }', 'log: { level: silent }', 'upstreams:'];
    for (const [key, entries] of groups) {
      const upstream = await startReplayUpstream({ tools: entries, pageSize: 100, name: key });
      closers.push(() => upstream.close());
      lines.push(`  - name: ${JSON.stringify(key)}`, `    url: ${upstream.url}`);
    }
    const serverKeys = new Set(groups.keys());
    const path = join(dir, 'gateway.yaml');
    writeFileSync(path, lines.join('\n'));
    const gateway = await startGateway(loadConfig({ path, env: {} }));
    closers.push(() => gateway.close());
    await waitReady(gateway.url);
    const client = new Client({ name: 'bench-search', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/compact`), { requestInit: { headers: CREDENTIAL_HEADERS } }));
    closers.push(() => client.close());
    const { tools } = await client.listTools();
    if (!tools.some((t) => t.name === 'search_tools')) {
      await close();
      return { skipped: 'the gateway has no search_tools on /mcp/compact yet' };
    }
    return {
      close,
      async rank(query, limit) {
        const result = await client.callTool({ name: 'search_tools', arguments: { query, limit: Math.min(limit, 20) } });
        if (result.isError) throw new Error(`search_tools failed for ${JSON.stringify(query)}: ${JSON.stringify(result.content)}`);
        return matchNames(result).map((name) => originalName(name, serverKeys));
      },
    };
  } catch (error) {
    await close();
    return { skipped: `end-to-end setup failed: ${(error as Error).message}` };
  }
}
