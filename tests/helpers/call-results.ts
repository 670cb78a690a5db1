import type { CallToolResult } from '@modelcontextprotocol/client';

/** The text of a tools/call result's text content, joined. */
export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/**
 * Calls `attempt` until `done` accepts its answer, for what the gateway does in the background
 * (reconnecting after an upstream restart). Fails after `deadlineMs` with the last answer; asserts
 * nothing about how long it took.
 */
export async function eventually<T>(attempt: () => Promise<T>, done: (value: T) => boolean, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not done after ${deadlineMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export type { CallToolResult };
