import type { Tool } from '@modelcontextprotocol/client';
import { connectV1, connectV2, type Credentials } from './clients.ts';

/** The protocol era a test client speaks: the v2 client pinned to 2026-07-28, or the v1 SDK (2025-11-25). */
export type Era = 'modern' | 'legacy';
export const ERAS: readonly Era[] = ['modern', 'legacy'];

/** A tools/call result as both clients hand it back. */
export interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** The part of an MCP client the compact tests drive, the same for both eras. */
export interface EraClient {
  listTools(): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

/**
 * A real MCP client for `era` connected to `url` with `headers` (v2 pinned to 2026-07-28, or v1 with
 * the legacy initialize handshake). Both clients check structuredContent against the outputSchemas
 * of tools they have listed.
 */
export async function connectEra(era: Era, url: string | URL, headers: Credentials): Promise<EraClient> {
  if (era === 'modern') {
    const client = await connectV2(url, headers);
    return {
      listTools: async () => (await client.listTools()).tools,
      callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
      close: () => client.close(),
    };
  }
  const client = await connectV1(url, headers);
  return {
    listTools: async () => (await client.listTools()).tools as Tool[],
    callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

/** Runs `fn` with a connected client and always closes it. */
export async function withClient<T>(era: Era, url: string | URL, headers: Credentials, fn: (client: EraClient) => Promise<T>): Promise<T> {
  const client = await connectEra(era, url, headers);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
