import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { DATA, FULL, IDENTITY, connectLegacy, connectModern, startReferenceStack, textOf, type ReferenceStack } from '../../helpers/reference-stack.ts';

let stack: ReferenceStack;

beforeAll(async () => {
  stack = await startReferenceStack();
});
afterAll(() => stack.close());

describe('refusals by the platform become isError results', () => {
  it("returns the platform's 403 for place_order with the data key, and no order is stored", async () => {
    const client = await connectModern(stack.mcpUrl, DATA);
    const before = stack.store.orders.length;
    const result = await client.callTool({
      name: 'place_order',
      arguments: { account_id: stack.store.accounts[0]!.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 10 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('HTTP 403 insufficient_scope');
    expect(textOf(result)).toContain('lacks the scope "trade" required by POST /v1/orders');
    expect(stack.store.orders.length).toBe(before);
    await client.close();
  });

  it("passes the platform's 401 through as an isError result, for no credential and for a wrong secret", async () => {
    for (const headers of [{}, { ...FULL, 'X-CPZ-Secret': 'not-the-secret-9f3' }]) {
      const client = await connectLegacy(stack.mcpUrl, headers);
      const result = await client.callTool({ name: 'get_profile', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('HTTP 401 unauthorized');
      expect(textOf(result)).not.toContain('not-the-secret-9f3');
      await client.close();
    }
  });

  it("returns the platform's 404 for an unknown id and 403 for the identity key on accounts", async () => {
    const client = await connectModern(stack.mcpUrl, FULL);
    const missing = await client.callTool({ name: 'get_order', arguments: { order_id: '00000000-0000-4000-8000-000000000000' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('(HTTP 404 not_found): No order with id 00000000-0000-4000-8000-000000000000');
    await client.close();
    const identity = await connectModern(stack.mcpUrl, IDENTITY);
    const denied = await identity.callTool({ name: 'list_accounts', arguments: {} });
    expect(textOf(denied)).toContain('"accounts:read"');
    await identity.close();
  });
});

describe('bad input is a JSON-RPC error and never reaches the platform', () => {
  it('answers an unknown tool with -32602 "Unknown tool" on both clients', async () => {
    for (const client of [await connectLegacy(stack.mcpUrl, FULL), await connectModern(stack.mcpUrl, FULL)]) {
      await expect(client.callTool({ name: 'list_dels', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool: list_dels'),
      });
      await client.close();
    }
  });

  it('answers invalid place_order arguments with an isError result naming the offending paths (the first 20)', async () => {
    const client = await connectModern(stack.mcpUrl, FULL);
    const before = stack.store.orders.length;
    const invalid = await client.callTool({
      name: 'place_order',
      arguments: { account_id: stack.store.accounts[0]!.id, symbol: 'AAPL', side: 'buy', type: 'limit', quantity: 0, qty: 5 },
    });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toContain('/quantity must be > 0');
    expect(textOf(invalid)).toContain('/price is required');
    expect((invalid._meta?.['ai.cpz/argument-errors'] as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(['/price', '/qty', '/quantity']);
    // Many offending arguments: the first 20 named, the rest counted (10,000 made a 1.7 MB answer: wire try-out).
    const flood = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const flooded = await client.callTool({ name: 'place_order', arguments: { ...flood, account_id: stack.store.accounts[0]!.id } });
    expect(flooded.isError).toBe(true);
    expect(flooded._meta?.['ai.cpz/argument-errors']).toHaveLength(20);
    expect(textOf(flooded)).toMatch(/; and \d+ more issues$/);
    const misplaced = await client.callTool({
      name: 'place_order',
      arguments: { account_id: stack.store.accounts[0]!.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1, price: '100' },
    });
    expect(misplaced.isError).toBe(true);
    expect(textOf(misplaced)).toContain('/price is only for limit and stop_limit orders');
    expect(stack.store.orders.length).toBe(before);
    await client.close();
  });

  it.each([
    ['an unknown objective', '/policy/objective', { policy: { objective: 'gamma', hedge_ratio: 1, tolerance_band: 0.1, benchmark_symbol: 'SPY' } }],
    ['hedge_ratio above 5', '/policy/hedge_ratio', { policy: { objective: 'dollar_neutral', hedge_ratio: 5.5, tolerance_band: 0.1 } }],
    ['a negative hedge_ratio', '/policy/hedge_ratio', { policy: { objective: 'dollar_neutral', hedge_ratio: -1, tolerance_band: 0.1 } }],
    ['tolerance_band 0', '/policy/tolerance_band', { policy: { objective: 'dollar_neutral', hedge_ratio: 1, tolerance_band: 0 } }],
    ['tolerance_band above 1', '/policy/tolerance_band', { policy: { objective: 'dollar_neutral', hedge_ratio: 1, tolerance_band: 1.5 } }],
    ['a beta overlay without benchmark', '/policy/benchmark_symbol', { policy: { objective: 'beta', hedge_ratio: 1, tolerance_band: 0.1 } }],
    ['no targets', '/targets', { targets: [] }],
    ['a self-target', '/targets/0/strategy_id', { targets: 'self' }],
    ['the same target twice', '/targets/1/strategy_id', { targets: 'twice' }],
    ['a weight of 0', '/targets/0/weight', { targets: 'weight:0' }],
    ['a weight above 10', '/targets/0/weight', { targets: 'weight:11' }],
    ['an environment other than paper or live', '/account_environment', { account_environment: 'staging' }],
    ['a misspelt field', '/hedge_ration', { hedge_ration: 1 }],
    ['a misspelt policy field', '/policy/benchmark', { policy: { objective: 'dollar_neutral', hedge_ratio: 1, tolerance_band: 0.1, benchmark: 'SPY' } }],
  ])('refuses configure_overlay with %s before any request (isError naming %s)', async (_case, path, change) => {
    const [overlay, other] = stack.store.strategies.filter((s) => s.role === 'standalone');
    const targetsFor: Record<string, unknown> = {
      self: [{ strategy_id: overlay!.id, weight: 1 }],
      twice: [
        { strategy_id: other!.id, weight: 1 },
        { strategy_id: other!.id, weight: 2 },
      ],
      'weight:0': [{ strategy_id: other!.id, weight: 0 }],
      'weight:11': [{ strategy_id: other!.id, weight: 11 }],
    };
    const changed = { ...change } as Record<string, unknown>;
    if (typeof changed.targets === 'string') changed.targets = targetsFor[changed.targets];
    const args = {
      strategy_id: overlay!.id,
      role: 'overlay',
      policy: { objective: 'beta', hedge_ratio: 1, tolerance_band: 0.05, benchmark_symbol: 'SPY' },
      targets: [{ strategy_id: other!.id, weight: 1 }],
      account_environment: 'paper',
      ...changed,
    };
    const version = overlay!.version;
    const client = await connectModern(stack.mcpUrl, FULL);
    const refused = await client.callTool({ name: 'configure_overlay', arguments: args });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(path);
    expect(overlay!.version).toBe(version);
    expect(overlay!.role).toBe('standalone');
    await client.close();
  });
});

describe('the HTTP edge of /mcp', () => {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('answers a body that is not JSON with 400 and JSON-RPC -32700', async () => {
    const response = await fetch(stack.mcpUrl, { method: 'POST', headers, body: '{"jsonrpc":' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('refuses a foreign Origin with 403 on a loopback bind (DNS rebinding)', async () => {
    const response = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(403);
  });

  it("echoes the caller's X-Request-Id on the response", async () => {
    const response = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { ...headers, 'x-request-id': 'abc-1', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.headers.get('x-request-id')).toBe('abc-1');
    await response.text();
  });
});

describe('legacy protocol revisions over raw HTTP', () => {
  it.each(['2024-10-07', '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])('serves initialize and tools/list at %s, statelessly', async (version) => {
    const post = async (body: unknown, extra: Record<string, string> = {}) => {
      const response = await fetch(stack.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...FULL, ...extra },
        body: JSON.stringify(body),
      });
      expect(response.headers.get('mcp-session-id')).toBeNull();
      const text = await response.text();
      // The stateless legacy leg may answer as JSON or as one SSE `message` event.
      const json = response.headers.get('content-type')?.startsWith('text/event-stream')
        ? text
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('')
        : text;
      return JSON.parse(json) as any;
    };
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(init.result.protocolVersion).toBe(version);
    expect(init.result.serverInfo.name).toBe('cpzai-mcp');
    expect(init.result.instructions).toContain('cents');
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': version });
    expect(list.result.tools).toHaveLength(34);
  });
});

describe('platform outages', () => {
  it('returns an isError result when the platform is stopped, and keeps serving', async () => {
    const local = await startReferenceStack();
    const client = await connectModern(local.mcpUrl, FULL);
    await local.stopPlatform();
    const read = await client.callTool({ name: 'list_accounts', arguments: {} });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toMatch(/platform API is unreachable \(ECONNREFUSED; after 3 attempts\)\. Nothing was changed/);
    const write = await client.callTool({ name: 'sync_portfolio', arguments: {} });
    expect(textOf(write)).toContain('writes are never retried');
    expect(textOf(write)).toContain('was not sent');
    expect((await client.listTools()).tools).toHaveLength(34);
    expect((await client.listResources()).resources).toHaveLength(3);
    expect((await client.callTool({ name: 'get_profile', arguments: {} })).isError).toBe(true);
    await client.close();
    await local.close();
  });

  describe('against a flaky platform', () => {
    let flaky: Server;
    let server: { url: string; close(): Promise<void> };
    const seen: Array<{ method: string; path: string; requestId: string | undefined; key: string | undefined }> = [];
    let failuresLeft = 0;

    beforeAll(async () => {
      flaky = createServer((req: IncomingMessage, res) => {
        seen.push({ method: req.method!, path: req.url!, requestId: req.headers['x-request-id'] as string, key: req.headers['x-cpz-key'] as string });
        if (failuresLeft-- > 0 || req.method !== 'GET') {
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'Try later' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [], count: 0 }));
      });
      flaky.listen(0, '127.0.0.1');
      await new Promise((resolve) => flaky.once('listening', resolve));
      server = await startUpstreamServer({ platformUrl: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`, port: 0 });
    });
    afterAll(async () => {
      await server.close();
      await new Promise((resolve) => flaky.close(resolve));
    });

    it("retries a GET through transient 503s, forwarding the caller's key and request id on every attempt", async () => {
      seen.length = 0;
      failuresLeft = 2;
      const client = await connectModern(server.url, { ...FULL, 'X-Request-Id': 'trace-123' });
      const result = await client.callTool({ name: 'list_webhooks', arguments: { active: true } });
      expect(result.isError).toBeFalsy();
      expect(seen.map((s) => s.path)).toEqual(['/v1/webhooks?active=true', '/v1/webhooks?active=true', '/v1/webhooks?active=true']);
      expect(seen.every((s) => s.requestId === 'trace-123' && s.key === 'cpz_demo_full')).toBe(true);
      await client.close();
    });

    it("never retries a write: one request, and the platform's message in the isError result", async () => {
      seen.length = 0;
      const client = await connectModern(server.url, FULL);
      const result = await client.callTool({ name: 'create_webhook', arguments: { url: 'https://example.com/h', events: ['order.filled'] } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('HTTP 503 unavailable): Try later');
      expect(seen).toHaveLength(1);
      expect(seen[0]!.requestId).toMatch(/^[0-9a-f-]{36}$/);
      await client.close();
    });
  });
});
