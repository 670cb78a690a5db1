/**
 * Nothing on the request path of an HTTP upstream enters an AsyncLocalStorage: one `run` or `enterWith`
 * anywhere turns on async hooks for every promise of the process, which measured 0.08-0.09 ms of CPU
 * per tools/call (docs/performance.md). The request's logger and the caller's credential travel
 * explicitly (obs/request-context.ts, upstream/forward-scope.ts); only SDK sends (stdio, in-process
 * transports) run in the forward scope. Spied from before the stack starts: the handshake and the
 * catalogue warm-up count too.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { messagesOf, post, rpc } from '../../helpers/raw-mcp.ts';

let stack: Stack;
const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
const enterWith = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
  vi.restoreAllMocks();
});

describe('the request path without async hooks', () => {
  it.each(['modern', 'legacy'] as const)(
    'serves tools/list, tools/call, search_tools and call_tool (%s) without entering any AsyncLocalStorage',
    async (era) => {
      const compact = `${stack.gatewayUrl}/mcp/compact`;
      const requests: [string, ReturnType<typeof rpc>][] = [
        [stack.mcpUrl, rpc(era, 1, 'tools/list')],
        [stack.mcpUrl, rpc(era, 2, 'tools/call', { name: 'list_accounts', arguments: { limit: 1 } })],
        [compact, rpc(era, 3, 'tools/call', { name: 'search_tools', arguments: { query: 'open orders' } })],
        [compact, rpc(era, 4, 'tools/call', { name: 'call_tool', arguments: { name: 'list_connections', arguments: { limit: 1 } } })],
        [stack.mcpUrl, rpc(era, 5, 'resources/list')],
      ];
      for (const [url, { body, headers }] of requests) {
        const [answer] = await messagesOf(await post(url, body, headers));
        expect(answer?.error, JSON.stringify(answer)).toBeUndefined();
        expect((answer?.result as { isError?: boolean }).isError ?? false).toBe(false);
      }
      expect(run).not.toHaveBeenCalled();
      expect(enterWith).not.toHaveBeenCalled();
    },
  );
});
