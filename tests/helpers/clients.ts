import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { routedFetch } from './in-process.ts';

/** The platform's seeded demo credentials (upstream/platform), as the headers a caller sends. */
export const DEMO_KEYS = {
  full: { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'demo-secret-full' },
  data: { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' },
  identity: { 'x-cpz-key': 'cpz_demo_identity', 'x-cpz-secret': 'demo-secret-identity' },
} as const;
export type DemoKey = keyof typeof DEMO_KEYS;

/** The demo secrets: must never appear in a log line. */
export const DEMO_SECRETS = Object.values(DEMO_KEYS).map((k) => k['x-cpz-secret']);

/** The 10 tools the data key may see (issue 3, Done when), sorted. */
export const DATA_KEY_TOOLS = [
  'list_accounts',
  'list_positions',
  'list_orders',
  'get_order',
  'get_market_data',
  'get_bars',
  'list_data_files',
  'get_data_file',
  'get_backtest_results',
  'get_backtest_result',
].sort();

export type Credentials = Readonly<Record<string, string>>;

/**
 * A fetch that adds `headers` to every request (the v2 client's per-request `headers` drop authorization).
 * An in-process gateway's URL is served by its runtime (routedFetch), any other over the network.
 */
export function fetchWithHeaders(headers: Credentials): FetchLike {
  return (url, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return routedFetch(url, { ...init, headers: merged });
  };
}

/**
 * A v2 client (`@modelcontextprotocol/client`) connected to `url`: pinned to 2026-07-28 by default,
 * `auto` negotiation on request. Credentials go through a custom fetch.
 */
export async function connectV2(url: string | URL, headers: Credentials, mode: 'pinned' | 'auto' = 'pinned'): Promise<Client> {
  const client = new Client(
    { name: 'gateway-tests-v2', version: '1.0.0' },
    { versionNegotiation: { mode: mode === 'pinned' ? { pin: '2026-07-28' } : 'auto' } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithHeaders(headers) }));
  return client;
}

/** A v1 SDK client (`@modelcontextprotocol/sdk`, legacy initialize handshake), headers via requestInit. */
export async function connectV1(url: string | URL, headers: Credentials): Promise<V1Client> {
  const client = new V1Client({ name: 'gateway-tests-v1', version: '1.0.0' });
  await client.connect(new V1Transport(new URL(url), { requestInit: { headers: { ...headers } }, fetch: routedFetch }));
  return client;
}

/** Tool names of a listing, sorted. */
export function namesOf(result: { tools: { name: string }[] }): string[] {
  return result.tools.map((t) => t.name).sort();
}

/** A /mcp tools/list without the gateway's own client hint (`anthropic/alwaysLoad`, tests/gateway/always-load.test.ts). */
export function withoutClientHints<T extends { _meta?: Record<string, unknown> }>(tools: T[]): T[] {
  return tools.map((tool) => {
    if (tool._meta?.['anthropic/alwaysLoad'] === undefined) return tool;
    const { 'anthropic/alwaysLoad': _hint, ...meta } = tool._meta;
    const { _meta: _dropped, ...rest } = tool;
    return (Object.keys(meta).length ? { ...rest, _meta: meta } : rest) as T;
  });
}
