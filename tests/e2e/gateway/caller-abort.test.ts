/**
 * One caller closing its HTTP connection mid-call cancels that call only: the other callers' calls in
 * flight on the same shared upstream client all complete, and the gateway does not take the abort for a
 * lost upstream (no reconnect). Real HTTP through the reference stack; a holding proxy between the
 * upstream server and the platform keeps every call in flight until the abort has been handled, so
 * "concurrent" is a fact, not a timing guess.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATA_KEY, FULL_KEY, messagesOf, rpc, type JsonRpcMessage } from '../../helpers/raw-mcp.ts';
import { ERAS, type Era } from '../../helpers/era-client.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ platformProxy: true });
});
afterAll(async () => {
  await stack?.close();
});

function request(era: Era, id: number, name: string, args: Record<string, unknown>, key: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  const { headers, body } = rpc(era, id, 'tools/call', { name, arguments: args });
  return fetch(stack.mcpUrl, { method: 'POST', headers: { ...headers, ...key }, body: JSON.stringify(body), signal });
}

async function call(era: Era, id: number, name: string, args: Record<string, unknown>): Promise<JsonRpcMessage> {
  const answer = (await messagesOf(await request(era, id, name, args, FULL_KEY))).find((m) => m.id === id);
  if (!answer) throw new Error(`no answer for request ${id}`);
  return answer;
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  return Number(text.match(pattern)?.[1] ?? 0);
}

const failed = (m: JsonRpcMessage) => m.error !== undefined || m.result?.isError === true;

describe.each(ERAS)('a caller aborting its tools/call (%s era)', (era) => {
  it('cancels only that call: the other callers get zero isError and every placed order is reported', async () => {
    const proxy = stack.platformProxy!;
    const store = stack.platform!.store;
    const account = store.accounts.find((a) => a.environment === 'paper') ?? store.accounts[0]!;
    const order = { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 };
    // Connected, scopes cached: from here every call goes straight to the upstream and the platform.
    expect(failed(await call(era, 0, 'list_orders', { limit: 1 }))).toBe(false);
    const ordersBefore = store.orders.length;
    const cancelledBefore = await metric(/^mcp_upstream_errors_total\{upstream="cpzai",kind="cancelled"\} (\d+)$/m);
    const cancelLogs = stack.logs.records('tools/call cancelled').length;
    const callErrors = new RegExp(`^mcp_requests_total\\{endpoint="full",era="${era}",method="tools/call",outcome="error"\\} (\\d+)$`, 'm');
    const callErrorsBefore = await metric(callErrors);

    proxy.hold();
    const others = [
      ...Array.from({ length: 10 }, (_, i) => call(era, 1 + i, 'place_order', order)),
      ...Array.from({ length: 30 }, (_, i) => call(era, 100 + i, 'list_orders', { limit: 20 })),
    ];
    const abort = new AbortController();
    const aborted = request(era, 999, 'list_orders', { limit: 20 }, DATA_KEY, abort.signal)
      .then((r) => r.text())
      .catch((error: Error) => error.name);
    try {
      await proxy.waiting(41); // all 41 calls have reached the platform and wait there
      abort.abort();
      expect(await aborted).toBe('AbortError');
      await vi.waitFor(() => expect(stack.logs.records('tools/call cancelled')).toHaveLength(cancelLogs + 1), { timeout: 10_000 });
    } finally {
      proxy.release();
    }
    const results = await Promise.all(others);

    expect(results.filter(failed).map((m) => JSON.stringify(m).slice(0, 300))).toEqual([]);
    const placed = results.slice(0, 10).filter((m) => !failed(m)).length;
    expect(placed).toBe(10);
    expect(store.orders.length - ordersBefore).toBe(placed);
    expect(stack.logs.records('upstream connection lost')).toEqual([]);
    expect(await metric(/^mcp_upstream_reconnects_total\{upstream="cpzai"\} (\d+)$/m)).toBe(0);
    expect(await metric(/^mcp_upstream_errors_total\{upstream="cpzai",kind="cancelled"\} (\d+)$/m)).toBe(cancelledBefore + 1);
    // The abandoned exchange got no answer: counted as an error, the 40 others as ok.
    expect(await metric(callErrors)).toBe(callErrorsBefore + 1);
  });
});

describe.each(ERAS)('a caller leaving its write in flight (%s era)', (era) => {
  it('is logged and audited with its outcome unknown: the upstream had it and may have run it', async () => {
    const proxy = stack.platformProxy!;
    const store = stack.platform!.store;
    const account = store.accounts.find((a) => a.environment === 'paper') ?? store.accounts[0]!;
    expect(failed(await call(era, 0, 'list_orders', { limit: 1 }))).toBe(false);
    const ordersBefore = store.orders.length;
    const seen = stack.logs.records('tools/call cancelled').length;
    proxy.hold();
    const abort = new AbortController();
    const order = { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 };
    const aborted = request(era, 5, 'place_order', order, FULL_KEY, abort.signal).catch((error: Error) => error.name);
    try {
      await proxy.waiting(1);
      abort.abort();
      expect(await aborted).toBe('AbortError');
      await vi.waitFor(() => expect(stack.logs.records('tools/call cancelled').length).toBe(seen + 1), { timeout: 10_000 });
    } finally {
      proxy.release();
    }
    expect(stack.logs.records('tools/call cancelled').at(-1)).toMatchObject({
      tool: 'place_order',
      outcomeUnknown: true,
      reason: 'the request was cancelled: the caller closed the connection',
    });
    // It had reached the platform: released, it was placed.
    await vi.waitFor(() => expect(store.orders.length).toBe(ordersBefore + 1), { timeout: 10_000 });
  });
});
