/**
 * Claude Code's `_meta["anthropic/alwaysLoad"]` on /mcp (issue 18, clientHints.alwaysLoad): a client that
 * defers tool loading keeps exactly the tools /mcp/compact advertises up front loaded (the state-changing
 * tools and the read anchors), and no other; off, no tool carries it. Reference stack, full key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV2, DEMO_KEYS } from '../helpers/clients.ts';
import { inProcessReferenceStack, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';

const KEY = 'anthropic/alwaysLoad';
let stack: Stack;
let off: Stack;
beforeAll(async () => {
  stack = await inProcessReferenceStack();
  off = await inProcessReferenceStack({ gateway: { clientHints: { alwaysLoad: false } } });
});
afterAll(async () => {
  await stack?.close();
  await off?.close();
});

async function tools(url: string | URL) {
  const client = await connectV2(url, DEMO_KEYS.full);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe('anthropic/alwaysLoad on /mcp', () => {
  it('marks exactly the catalogue tools /mcp/compact advertises', async () => {
    const full = await tools(stack.mcpUrl);
    const compact = (await tools(`${stack.gatewayUrl}/mcp/compact`)).map((t) => t.name).filter((n) => n !== 'search_tools' && n !== 'call_tool');
    const marked = full.filter((t) => t._meta?.[KEY] === true).map((t) => t.name);
    expect(marked.length).toBeGreaterThan(0);
    expect(marked.sort()).toEqual([...compact].sort());
    expect(full.filter((t) => !marked.includes(t.name)).every((t) => t._meta?.[KEY] === undefined)).toBe(true);
    // The rest of each definition is the upstream's own.
    expect(full.length).toBe(34);
  });

  it('marks nothing with clientHints.alwaysLoad off', async () => {
    expect((await tools(off.mcpUrl)).filter((t) => t._meta?.[KEY] !== undefined)).toEqual([]);
  });
});
