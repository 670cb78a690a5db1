/**
 * A direct tools/call of a name the catalogue does not have answers JSON-RPC -32602 "Unknown tool" on
 * both endpoints and in both eras, with the nearest names in the message and in `data.nearest`, but
 * only names the caller may see. Every request is authenticated first, so the caller's scopes are
 * always known (no tools/list needed), and a credential the platform does not know gets 401 instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_KEY_TOOLS, DEMO_KEYS, type Credentials } from '../../helpers/clients.ts';
import { ERAS, withClient, type Era } from '../../helpers/era-client.ts';
import { startStack, type Stack } from '../../helpers/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

interface RpcFailure {
  code: number;
  message: string;
  data?: { nearest?: string[] };
}

/** Lists tools (which caches the caller's scopes) when asked, then calls `name` and returns the JSON-RPC error. */
async function unknownCall(era: Era, url: string, key: Credentials, name: string, listFirst: boolean): Promise<RpcFailure> {
  return withClient(era, url, key, async (client) => {
    if (listFirst) await client.listTools();
    const error = await client.callTool(name, {}).then(
      () => undefined,
      (e: unknown) => e as RpcFailure,
    );
    if (!error) throw new Error(`${name} did not fail`);
    return error;
  });
}

const ENDPOINTS = [
  ['/mcp', ''],
  ['/mcp/compact', '/compact'],
] as const;

describe.each(ERAS)('a direct tools/call of an unknown name (%s era)', (era) => {
  it.each(ENDPOINTS)('suggests visible names on %s without a tools/list first; an unknown credential gets 401 instead', async (_path, suffix) => {
    const error = await unknownCall(era, `${stack.mcpUrl}${suffix}`, DEMO_KEYS.data, 'list_order', false);
    expect(error.code).toBe(-32602);
    expect(error.data?.nearest?.[0]).toBe('list_orders');
    const unseen = { 'x-cpz-key': `cpz_never_looked_up_${era}${suffix.replace('/', '_')}`, 'x-cpz-secret': 'whatever' };
    await expect(unknownCall(era, `${stack.mcpUrl}${suffix}`, unseen, 'list_order', false)).rejects.toThrow(/401|unauthori[sz]ed/i);
  });

  it.each(ENDPOINTS)('suggests the nearest visible names on %s once the caller scopes are cached', async (_path, suffix) => {
    const url = `${stack.mcpUrl}${suffix}`;
    const typo = await unknownCall(era, url, DEMO_KEYS.data, 'list_order', true);
    expect(typo.code).toBe(-32602);
    expect(typo.message).toMatch(/Unknown tool: list_order\. Nearest names: list_orders/);
    expect(typo.data?.nearest?.[0]).toBe('list_orders');
    expect(typo.message).toContain(typo.data!.nearest!.join(', '));

    // place_order is hidden from the data key: never suggested to it, suggested to the full key.
    const hidden = await unknownCall(era, url, DEMO_KEYS.data, 'place_ordr', true);
    expect(hidden.code).toBe(-32602);
    expect(hidden.data?.nearest?.length).toBeGreaterThan(0);
    for (const name of hidden.data!.nearest!) expect(DATA_KEY_TOOLS).toContain(name);
    expect(hidden.message).not.toContain('place_order');
    const full = await unknownCall(era, url, DEMO_KEYS.full, 'place_ordr', true);
    expect(full.data?.nearest).toContain('place_order');
  });
});

// README: a direct call is argument-checked by the upstream, whose offending arguments reach the caller under the
// same _meta key call_tool uses (protocol try-out: the gateway dropped the reference upstream's list).
describe.each(ERAS)('a direct tools/call with invalid arguments (%s era)', (era) => {
  it("relays the reference upstream's ai.cpz/argument-errors on /mcp", async () => {
    const result = await withClient(era, stack.mcpUrl, DEMO_KEYS.data, (client) => client.callTool('get_backtest_result', { id: 'nope' }));
    expect(result.isError).toBe(true);
    expect((result._meta?.['ai.cpz/argument-errors'] as { path: string }[]).map((e) => e.path)).toContain('/backtest_id');
  });
});
