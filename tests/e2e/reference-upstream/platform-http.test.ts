import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type PlatformStore } from '../../../upstream/platform/index.ts';

const FULL = { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'demo-secret-full' };
const DATA = { 'x-cpz-key': 'cpz_demo_data', 'x-cpz-secret': 'demo-secret-data' };

let base: string;
let store: PlatformStore;
let close: () => Promise<void>;

beforeAll(async () => {
  const platform = await startPlatform({ port: 0 });
  ({ url: base, store, close } = platform);
});
afterAll(() => close());

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(base + path, {
    method: init.method ?? 'GET',
    headers: { ...(init.headers ?? FULL), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

describe('platform authentication', () => {
  it('answers 401 with a JSON error and a Bearer challenge when no credential is sent', async () => {
    const { status, headers, body } = await call('/v1/accounts', { headers: {} });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(body.error.code).toBe('unauthorized');
  });

  it.each([
    ['a wrong secret', { 'x-cpz-key': 'cpz_demo_full', 'x-cpz-secret': 'nope' }],
    ['an unknown key', { 'x-cpz-key': 'cpz_nobody', 'x-cpz-secret': 'demo-secret-full' }],
    ['a key without its secret', { 'x-cpz-key': 'cpz_demo_full' }],
    ['an unknown bearer token', { authorization: 'Bearer cpz_tok_guess' }],
    ['a Basic authorization', { authorization: 'Basic Y3B6OmRlbW8=' }],
  ])('answers 401 for %s, without echoing the secret', async (_case, headers) => {
    const { status, body } = await call('/v1/me', { headers });
    expect(status).toBe(401);
    expect(JSON.stringify(body)).not.toContain('demo-secret');
  });

  it("accepts the documented bearer tokens and reports each credential's expanded scopes on /v1/me", async () => {
    const full = await call('/v1/me', { headers: { authorization: 'Bearer cpz_tok_full_demo' } });
    expect(full.status).toBe(200);
    expect(full.body.scopes).toHaveLength(18);
    expect(full.body).toMatchObject({ key_id: 'cpz_demo_full', email: 'demo@cpz.ai', plan: 'pro' });
    const data = await call('/v1/me', { headers: DATA });
    expect([...data.body.scopes].sort()).toEqual(['accounts:read', 'backtests:read', 'files:read', 'market-data:read', 'orders:read', 'positions:read']);
    expect(data.body.email).toBeUndefined();
    const identity = await call('/v1/me', { headers: { authorization: 'Bearer cpz_tok_identity_demo' } });
    expect(identity.body.scopes).toEqual(['profile:read']);
  });

  it('answers 403 naming the missing scope and the route', async () => {
    const { status, body } = await call('/v1/orders', { method: 'POST', headers: DATA, body: {} });
    expect(status).toBe(403);
    expect(body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'trade' });
    expect(body.error.message).toContain('"trade"');
    expect(body.error.message).toContain('POST /v1/orders');
    const profile = await call('/v1/profile', { headers: DATA });
    expect(profile.body.error.required_scope).toBe('profile:read');
  });

  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const echoed = await fetch(`${base}/v1/me`, { headers: { ...FULL, 'x-request-id': 'req-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('req-42');
    const generated = await fetch(`${base}/v1/me`, { headers: FULL });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('platform list routes', () => {
  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['status=open', 'status'],
    ['strategy_id=not-a-uuid', 'strategy_id'],
    ['colour=blue', 'colour'],
    ['side=buy&side=sell', 'side'],
  ])('answers 400 naming the field for /v1/orders?%s', async (query, field) => {
    const { status, body } = await call(`/v1/orders?${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_query', field });
  });

  it('pages 250 orders with limit and offset, count being the page length, without overlap', async () => {
    const first = await call('/v1/orders');
    expect(first.body.count).toBe(50);
    const ids = new Set<string>();
    for (let offset = 0; ; offset += 100) {
      const { body } = await call(`/v1/orders?limit=100&offset=${offset}`);
      expect(body.count).toBe(body.data.length);
      body.data.forEach((order: { id: string }) => ids.add(order.id));
      if (body.count < 100) break;
    }
    expect(ids.size).toBe(store.orders.length);
    expect((await call('/v1/orders?offset=10000')).body).toEqual({ data: [], count: 0 });
  });

  it('defaults accounts to 100 per page and filters by tradable', async () => {
    expect((await call('/v1/accounts')).body.count).toBe(3);
    const tradable = await call('/v1/accounts?tradable=true');
    expect(tradable.body.data.every((a: { tradable: boolean }) => a.tradable)).toBe(true);
    expect(tradable.body.count).toBe(2);
  });

  it('splits 120 positions across 3 accounts and filters cash flows by unsettled', async () => {
    const accounts = (await call('/v1/accounts')).body.data as Array<{ id: string }>;
    for (const account of accounts) {
      expect((await call(`/v1/positions?account_id=${account.id}&limit=100`)).body.count).toBe(40);
    }
    const unsettled = (await call('/v1/middle-office/cash-flows?unsettled=true&limit=100')).body.data as Array<{ status: string }>;
    expect(unsettled.length).toBeGreaterThan(0);
    expect(unsettled.every((flow) => flow.status !== 'settled')).toBe(true);
  });

  it('answers 400 naming the field for bad market-data queries', async () => {
    expect((await call('/v1/market-data/bars?symbols=MSFT&limit=10001')).body.error.field).toBe('limit');
    expect((await call('/v1/market-data/bars?symbols=MSFT&timeframe=3Min')).body.error.field).toBe('timeframe');
    expect((await call('/v1/market-data/quotes')).body.error.field).toBe('symbols');
  });

  it('serves deterministic synthetic bars', async () => {
    const query = '/v1/market-data/bars?symbols=MSFT,AAPL&timeframe=1Hour&start=2026-10-05&end=2026-10-07&feed=sip';
    const first = (await call(query)).body;
    expect(first.data.MSFT.length).toBeGreaterThan(0);
    expect((await call(query)).body).toEqual(first);
  });
});

describe('platform writes', () => {
  it('really places an order, and refuses a malformed one with 400 naming the field', async () => {
    const account = store.accounts.find((a) => a.environment === 'paper')!;
    const before = store.orders.length;
    const bad = await call('/v1/orders', { method: 'POST', body: { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'limit', quantity: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('price');
    expect(store.orders.length).toBe(before);
    const placed = await call('/v1/orders', { method: 'POST', body: { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 3 } });
    expect(placed.status).toBe(201);
    expect(store.orders.length).toBe(before + 1);
    expect((await call(`/v1/orders/${placed.body.data.id}`)).body.data.status).toBe('filled');
  });

  it('places an order once per client_order_id: the same terms again answer it, other terms are 409 naming the field', async () => {
    const account = store.accounts.find((a) => a.environment === 'paper')!;
    const order = { account_id: account.id, symbol: 'MSFT', side: 'buy', type: 'market', quantity: 2, client_order_id: 'retry-safe-1' };
    const before = store.orders.length;
    const position = () => store.positions.find((p) => p.account_id === account.id && p.symbol === 'MSFT')?.quantity;
    const first = await call('/v1/orders', { method: 'POST', body: order });
    const held = position();
    const again = await call('/v1/orders', { method: 'POST', body: { ...order, symbol: 'msft' } });
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(store.orders.length).toBe(before + 1);
    expect(position()).toBe(held);
    const other = await call('/v1/orders', { method: 'POST', body: { ...order, quantity: 5 } });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'duplicate_client_order_id', field: 'client_order_id' });
    expect(store.orders.length).toBe(before + 1);
    // Another account's reference is its own.
    const elsewhere = store.accounts.find((a) => a.tradable && a.id !== account.id)!;
    expect((await call('/v1/orders', { method: 'POST', body: { ...order, account_id: elsewhere.id } })).status).toBe(201);
  });

  it('stores connection credentials encrypted and never returns them', async () => {
    const secret = 'sk-very-secret-value-123';
    const created = await call('/v1/connections', {
      method: 'POST',
      body: { name: 'Test provider', connection_type: 'data_provider', provider: 'polygon', credentials: { api_key: secret } },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.credential_fields).toEqual(['api_key']);
    const listed = await call('/v1/connections?limit=100');
    expect(JSON.stringify([created.body, listed.body])).not.toContain(secret);
    const stored = store.connections.find((c) => c.record.id === created.body.data.id)!;
    expect(JSON.stringify(stored.sealed)).not.toContain(secret);
    expect(JSON.parse(store.secretBox.open(stored.sealed, stored.record.id))).toEqual({ api_key: secret });
  });

  it('refuses a self-targeting overlay with 400 naming the target path', async () => {
    const strategy = store.strategies.find((s) => s.role === 'standalone' && s.account_id)!;
    const account = store.accounts.find((a) => a.id === strategy.account_id)!;
    const { status, body } = await call(`/cpz/overlays/${strategy.id}`, {
      method: 'PUT',
      body: {
        role: 'overlay',
        policy: { objective: 'dollar_neutral', hedge_ratio: 1, tolerance_band: 0.1 },
        targets: [{ strategy_id: strategy.id, weight: 1 }],
        account_environment: account.environment,
      },
    });
    expect(status).toBe(400);
    expect(body.error.field).toBe('targets.0.strategy_id');
    expect(strategy.role).toBe('standalone');
  });
});
