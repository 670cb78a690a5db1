import type { CallToolResult } from '@modelcontextprotocol/client';

/** The text of a tools/call result's text content, joined. */
export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

export type { CallToolResult };
