/**
 * The audit trail through the real handler against the reference stack in process (issue 17, Done when): an allowed write, a
 * write refused through call_tool, an out-of-scope call and invalid arguments (through call_tool and
 * direct) each leave exactly one event with the right outcome in the audit file (found by the request
 * id the test sent), separate from the access log; no secret and no argument value in it. The file
 * lives in .tmp/, which .ci/run's secret grep covers.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialDigest } from '../../gateway/auth/credentials.ts';
import { DATA_KEY, FULL_KEY, IDENTITY_KEY, messagesOf, post, rpc } from '../helpers/raw-mcp.ts';
import { inProcessReferenceStack, type InProcessReferenceStack as Stack } from '../helpers/in-process.ts';
import { waitFor } from '../helpers/wait.ts';

const AUDIT_FILE = `.tmp/audit/audit-${process.pid}.log`;
const AUDIT_KEY = 'audit-test-digest-key-0123456789';
/** The gateway's credential digest key, known here so the test can look for the digest it makes. */
const DIGEST_KEY = 'audit-test-digest-key-0123456789abcdef';
const REQUEST_BUDGET = 15;

let stack: Stack;
beforeAll(async () => {
  mkdirSync('.tmp/audit', { recursive: true });
  rmSync(AUDIT_FILE, { force: true });
  // The request budget is far above what the other tests send with any one key; the identity key spends it.
  stack = await inProcessReferenceStack({
    gateway: {
      cache: { key: DIGEST_KEY },
      audit: { destination: AUDIT_FILE, digestKey: AUDIT_KEY },
      rateLimits: { requests: { points: REQUEST_BUDGET, durationMs: 60_000 } },
      credentials: { apiKeys: [{ name: 'ops-robot', key: 'ops-robot-key', secret: 'ops-robot-secret-0123', scopes: ['accounts:read'] }] },
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

/** One modern tools/call with its own X-Request-Id; returns the result and the audit events of that request. */
async function call(path: '/mcp' | '/mcp/compact', key: Record<string, string>, name: string, args: Record<string, unknown>) {
  const requestId = `audit-${randomUUID()}`;
  const { headers, body } = rpc('modern', 1, 'tools/call', { name, arguments: args });
  const response = await post(`${stack.gatewayUrl}${path}`, body, { ...headers, ...key, 'x-request-id': requestId });
  const [message] = await messagesOf(response);
  const events = await eventsOf(requestId);
  return { message: message!, events };
}

/**
 * The audit events of one request id. The file is written asynchronously: wait for the first line,
 * then 100 ms more, so that a second event of the same request (which the tests count as a defect)
 * would be there too; an absence cannot be waited for by a condition.
 */
async function eventsOf(requestId: string): Promise<Record<string, unknown>[]> {
  const ofRequest = () => readEvents().filter((e) => e.requestId === requestId);
  await waitFor(`an audit event of ${requestId}`, () => ofRequest().length > 0, { timeoutMs: 3000 }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 100));
  return ofRequest();
}

function readEvents(): Record<string, unknown>[] {
  let text = '';
  try {
    text = readFileSync(AUDIT_FILE, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function orderArgs() {
  const account = stack.platform!.store.accounts.find((a) => a.environment === 'paper') ?? stack.platform!.store.accounts[0]!;
  return { account_id: account.id, symbol: 'AAPL', side: 'buy', type: 'market', quantity: 1 };
}

describe('audit log', () => {
  it('records an allowed write (a direct place_order) once, as ok', async () => {
    const orders = stack.platform!.store.orders.length;
    const { message, events } = await call('/mcp', FULL_KEY, 'place_order', orderArgs());
    expect(message.result?.isError).toBeFalsy();
    expect(stack.platform!.store.orders.length).toBe(orders + 1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'tool_decision',
      surface: 'full',
      via: 'direct',
      upstream: 'cpzai',
      tool: 'place_order',
      readOnly: false,
      outcome: 'ok',
      client: 'compat-tests',
      clientVersion: '1.0.0',
    });
    expect(events[0]!.durationMs).toBeGreaterThan(0);
    expect(Date.parse(events[0]!.time as string)).not.toBeNaN();
  });

  it('records a write refused through call_tool once, as refused_write_via_call_tool', async () => {
    const { message, events } = await call('/mcp/compact', FULL_KEY, 'call_tool', { name: 'place_order', arguments: orderArgs() });
    expect(message.result?.isError).toBe(true);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      surface: 'compact',
      via: 'call_tool',
      upstream: 'cpzai',
      tool: 'place_order',
      readOnly: false,
      outcome: 'refused_write_via_call_tool',
      reason: 'call_directly',
    });
  });

  it('records an out-of-scope call once, as refused_scope, though the caller was told "unknown tool"', async () => {
    const { message, events } = await call('/mcp/compact', DATA_KEY, 'call_tool', { name: 'list_cash_flows', arguments: {} });
    expect(message.result?.isError).toBe(true);
    expect(JSON.stringify(message.result?.content)).toContain('Unknown tool: list_cash_flows');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ via: 'call_tool', tool: 'list_cash_flows', upstream: 'cpzai', outcome: 'refused_scope', reason: 'unknown_tool' });
  });

  it('names a configured key by its credentials.apiKeys[].name (SRE try-out), and no other credential', async () => {
    const robot = { 'x-cpz-key': 'ops-robot-key', 'x-cpz-secret': 'ops-robot-secret-0123' };
    const { events } = await call('/mcp', robot, 'place_order', orderArgs());
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ apiKey: 'ops-robot', tool: 'place_order', outcome: 'refused_scope' });
    expect(JSON.stringify(events[0])).not.toContain('ops-robot-key');
    const other = await call('/mcp', DATA_KEY, 'place_order', orderArgs());
    expect(other.events[0]).not.toHaveProperty('apiKey');
  });

  it('records a direct call outside the caller scopes once, as refused_scope (refused like an unknown tool; the platform never saw it)', async () => {
    // The data key's scopes are looked up (and cached) by its tools/list.
    const { headers, body } = rpc('modern', 1, 'tools/list');
    await messagesOf(await post(`${stack.gatewayUrl}/mcp`, body, { ...headers, ...DATA_KEY }));
    const orders = stack.platform!.store.orders.length;
    const { message, events } = await call('/mcp', DATA_KEY, 'place_order', orderArgs());
    expect(message.error?.code).toBe(-32602);
    expect(message.error?.message).toMatch(/^Unknown tool: place_order/);
    expect(stack.platform!.store.orders.length).toBe(orders);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ via: 'direct', tool: 'place_order', readOnly: false, outcome: 'refused_scope', reason: 'unknown_tool' });
  });

  it('records invalid arguments once, through call_tool and on a direct call', async () => {
    const viaCallTool = await call('/mcp/compact', FULL_KEY, 'call_tool', { name: 'list_deals', arguments: { limit: 0 } });
    expect(viaCallTool.message.result?.isError).toBe(true);
    expect(viaCallTool.events).toHaveLength(1);
    expect(viaCallTool.events[0]).toMatchObject({ via: 'call_tool', tool: 'list_deals', outcome: 'invalid_arguments' });
    const direct = await call('/mcp', FULL_KEY, 'place_order', { symbol: 'AAPL' });
    expect(direct.events).toHaveLength(1);
    expect(direct.events[0]).toMatchObject({ via: 'direct', tool: 'place_order', outcome: 'invalid_arguments' });
  });

  it("links a call to the search_tools answer of the same credential that returned the tool (foundBySearch), and no other credential's", async () => {
    const searchId = `audit-search-${randomUUID()}`;
    const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'search_tools', arguments: { query: 'unsettled cash flows', limit: 3 } });
    const [answer] = await messagesOf(await post(`${stack.gatewayUrl}/mcp/compact`, body, { ...headers, ...FULL_KEY, 'x-request-id': searchId }));
    const names = (answer!.result?.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toContain('list_cash_flows');
    // A search is a call of the surface's own tool: one line, as mcp_tool_calls_total counts it.
    expect(await eventsOf(searchId)).toEqual([
      expect.objectContaining({ event: 'tool_decision', surface: 'compact', via: 'direct', tool: 'search_tools', outcome: 'ok' }),
    ]);
    const blank = await call('/mcp/compact', FULL_KEY, 'search_tools', { query: '  ' });
    expect(blank.message.result?.isError).toBe(true);
    expect(blank.events).toEqual([expect.objectContaining({ tool: 'search_tools', outcome: 'invalid_arguments' })]);
    const { events } = await call('/mcp/compact', FULL_KEY, 'call_tool', { name: 'list_cash_flows', arguments: { limit: 1 } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      via: 'call_tool',
      tool: 'list_cash_flows',
      outcome: 'ok',
      foundBySearch: { requestId: searchId, rank: names.indexOf('list_cash_flows') + 1 },
    });
    expect((events[0]!.foundBySearch as { ageMs: number }).ageMs).toBeGreaterThanOrEqual(0);
    // The data key never searched for it: its (refused) call carries no link to the full key's search.
    const other = await call('/mcp/compact', DATA_KEY, 'call_tool', { name: 'list_cash_flows', arguments: {} });
    expect(other.events).toHaveLength(1);
    expect(other.events[0]!.foundBySearch).toBeUndefined();
  });

  it('records an unknown tool once', async () => {
    const { events } = await call('/mcp', FULL_KEY, 'no_such_tool', {});
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ via: 'direct', tool: 'no_such_tool', outcome: 'unknown_tool' });
  });

  it('records a tools/call refused at the edge for its request budget once, as rate_limited, though nothing was dispatched', async () => {
    for (let i = 0; i < REQUEST_BUDGET; i++) {
      const { headers, body } = rpc('modern', i, 'tools/list');
      expect((await post(`${stack.gatewayUrl}/mcp/compact`, body, { ...headers, ...IDENTITY_KEY })).status).toBe(200);
    }
    const requestId = `audit-${randomUUID()}`;
    const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'call_tool', arguments: { name: 'get_profile', arguments: {} } });
    const response = await post(`${stack.gatewayUrl}/mcp/compact`, body, { ...headers, ...IDENTITY_KEY, 'x-request-id': requestId });
    expect(response.status).toBe(429);
    const events = await eventsOf(requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      surface: 'compact',
      via: 'call_tool',
      tool: 'get_profile',
      outcome: 'rate_limited',
      reason: 'rate_limited',
      client: 'compat-tests',
    });
  });

  it('keys the credential digest, correlates one credential, and holds no secret or argument value; the access log holds no event', async () => {
    const events = readEvents();
    const full = events.filter((e) => e.outcome === 'ok' || e.outcome === 'refused_write_via_call_tool').map((e) => e.credential);
    expect(new Set(full).size).toBe(1);
    const data = events.find((e) => e.outcome === 'refused_scope')!.credential;
    expect(data).not.toBe(full[0]);
    const text = readFileSync(AUDIT_FILE, 'utf8');
    expect(text).not.toContain(credentialDigest(FULL_KEY, Buffer.from(DIGEST_KEY)));
    expect(text).not.toMatch(/demo-secret|cpz_tok_|AAPL/);
    for (const event of events) expect(event.arguments).toMatch(/^[0-9a-f]{64}$/);
    expect(stack.logs.records().some((r) => r.event === 'tool_decision')).toBe(false);
  });
});
