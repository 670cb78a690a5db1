/**
 * `/mcp/compact` exists to cost less context than `/mcp`: for the reference catalogue and the full demo key,
 * its tools/list `result` is at most 45% of `/mcp`'s bytes, code mode on (issue 8's target; `npm run surfaces`
 * prints the same figures for every key and era). A wording change to the gateway's own tool descriptions
 * took it 1 byte over without any check noticing (twenty-sixth session).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessReferenceStack, type InProcessReferenceStack } from '../helpers/in-process.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

const TARGET_RATIO = 0.45;
let stack: InProcessReferenceStack;

beforeAll(async () => {
  stack = await inProcessReferenceStack({ gateway: { compact: { codeMode: { enabled: true } } } });
});
afterAll(() => stack?.close());

async function resultBytes(url: URL): Promise<number> {
  const { headers, body } = rpc('modern', 1, 'tools/list');
  const [message] = await messagesOf(await stack.fetch(new Request(url, { method: 'POST', headers, body: JSON.stringify(body) })));
  expect(message?.result).toBeDefined();
  return Buffer.byteLength(JSON.stringify(message!.result));
}

describe('the compact surface’s size', () => {
  it('is at most 45% of /mcp’s tools/list bytes for the full key (2026-07-28, code mode on)', async () => {
    const full = await resultBytes(stack.mcpUrl);
    const compact = await resultBytes(stack.compactUrl);
    expect(full).toBeGreaterThan(50_000);
    expect(compact / full).toBeLessThanOrEqual(TARGET_RATIO);
  });
});
