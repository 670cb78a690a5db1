/**
 * Test fixtures for the reference upstream: the platform and the MCP server started in-process on
 * ephemeral loopback ports, and the two real MCP clients the suites drive them with.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startPlatform, type PlatformStore } from '../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../upstream/server/index.ts';

export const FULL = { 'X-CPZ-Key': 'cpz_demo_full', 'X-CPZ-Secret': 'demo-secret-full' };
export const DATA = { 'X-CPZ-Key': 'cpz_demo_data', 'X-CPZ-Secret': 'demo-secret-data' };
export const IDENTITY = { 'X-CPZ-Key': 'cpz_demo_identity', 'X-CPZ-Secret': 'demo-secret-identity' };

export interface ReferenceStack {
  platformUrl: string;
  mcpUrl: string;
  store: PlatformStore;
  stopPlatform(): Promise<void>;
  close(): Promise<void>;
}

export async function startReferenceStack(): Promise<ReferenceStack> {
  const platform = await startPlatform({ port: 0 });
  const server = await startUpstreamServer({ platformUrl: platform.url, port: 0 });
  let platformUp = true;
  const stopPlatform = async () => {
    if (platformUp) await platform.close();
    platformUp = false;
  };
  return {
    platformUrl: platform.url,
    mcpUrl: server.url,
    store: platform.store,
    stopPlatform,
    close: async () => {
      try {
        await server.close();
      } finally {
        await stopPlatform();
      }
    },
  };
}

/** The v1 SDK client (2025-era `initialize` handshake), headers sent on every request via requestInit. */
export async function connectLegacy(url: string, headers: Record<string, string>): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'upstream-tests-v1', version: '1.0.0' });
  await client.connect(new LegacyTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/**
 * The v2 client pinned to 2026-07-28. Headers go through a custom fetch: the per-request `headers`
 * option of the v2 transport drops `authorization`.
 */
export async function connectModern(url: string, headers: Record<string, string>): Promise<ModernClient> {
  const withHeaders: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
  const client = new ModernClient({ name: 'upstream-tests-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(url), { fetch: withHeaders }));
  return client;
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const [first] = ((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>;
  return first?.type === 'text' ? (first.text ?? '') : '';
}
