/**
 * The named failure mode (issue 13) for when the scope lookup itself fails (endpoint down, slower than
 * `scopes.timeoutMs`, 5xx, no scopes field): `closed` answers 503 with Retry-After and a JSON-RPC
 * error, within the budget, and forwards nothing; `open` serves a credential the scopes of its last good
 * answer (tests/in-process/fail-open.test.ts) and refuses one never seen valid with the same 503, logged
 * and counted in mcp_scope_lookups_total. An authoritative no (401/403) is a 401 in both modes.
 * Per-upstream overrides split one gateway between the two.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { ERAS, expectChallenge, rawRequest, rpcMessage, scopeLookups } from '../../helpers/enforcement.ts';
import { startFakeUpstream, type FakeTool, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { startScopeEndpoint, unreachableUrl, type ScopeEndpoint } from '../../fixtures/scope-endpoint.ts';

const KEY = { 'x-cpz-key': 'k_member', 'x-cpz-secret': 'member-secret' };
/** The lookup budget where a test is about a lookup failing; a slow machine only makes it fail sooner. */
const BUDGET_MS = 300;
/** The budget where a test is about what the endpoint answers: a loaded 2-core machine took over 300 ms to answer a 401. */
const ROOMY_BUDGET_MS = 30_000;

const tool = (name: string): FakeTool => ({
  definition: { name, description: `${name} (test tool)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } as Tool,
  call: () => ({ content: [{ type: 'text', text: `ran ${name}` }] }),
});

interface Rig {
  gateway: RunningGateway;
  logs: LogCapture;
  alpha: FakeUpstream;
  beta: FakeUpstream;
  close(): Promise<void>;
}

/** Two fake upstreams (alpha: public + `alpha_secret` needing scope a; beta: `beta_secret` needing b) behind one gateway. */
async function rig(
  scopeEndpoint: string,
  failureMode: 'open' | 'closed',
  alphaMode?: 'open' | 'closed',
  scopes: { ttlMs?: number; timeoutMs?: number } = {},
): Promise<Rig> {
  const alpha = await startFakeUpstream({ tools: [tool('alpha_public'), tool('alpha_secret'), tool('alpha_other')] });
  const beta = await startFakeUpstream({ tools: [tool('beta_secret')] });
  const logs = new LogCapture();
  const gateway = await startGatewayWith({
    logDestination: logs,
    overrides: {
      log: { level: 'info' },
      upstreams: [
        {
          name: 'alpha',
          url: alpha.url,
          anchors: [],
          scopeRules: { alpha_public: [], alpha_secret: ['a'], alpha_other: ['a'] },
          ...(alphaMode ? { scopes: { failureMode: alphaMode } } : {}),
        },
        { name: 'beta', url: beta.url, scopeRules: { beta_secret: ['b'] } },
      ],
      scopes: { endpoint: scopeEndpoint, timeoutMs: BUDGET_MS, failureMode, ...scopes },
    },
  });
  return {
    gateway,
    logs,
    alpha,
    beta,
    close: async () => {
      await gateway.close();
      await Promise.all([alpha.close(), beta.close()]);
    },
  };
}

const forwarded = (r: Rig) => [...r.alpha.received, ...r.beta.received].filter((m) => m.method === 'tools/call').length;
const CALLS = [
  { label: 'tools/list', path: '/mcp', method: 'tools/list', params: {} },
  { label: 'tools/call', path: '/mcp', method: 'tools/call', params: { name: 'alpha__alpha_public', arguments: {} } },
  { label: 'search_tools', path: '/mcp/compact', method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'secret' } } },
  { label: 'call_tool', path: '/mcp/compact', method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'alpha__alpha_secret', arguments: {} } } },
] as const;

async function expect503(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  const body = await rpcMessage(response);
  expect(body.error).toMatchObject({ code: expect.any(Number), data: { kind: 'scopes_unavailable' } });
  expect(body.error!.message).toMatch(/scope/i);
}

describe('failureMode closed', () => {
  let endpoint: ScopeEndpoint;
  let down: Rig;
  let slow: Rig;
  beforeAll(async () => {
    endpoint = await startScopeEndpoint({ k_member: ['a'] });
    down = await rig(await unreachableUrl(), 'closed');
    slow = await rig(endpoint.url, 'closed');
  });
  afterAll(async () => {
    await Promise.all([down?.close(), slow?.close()]);
    await endpoint?.close();
  });

  it('answers 503 with Retry-After on every method while the scope endpoint is down, and forwards nothing', async () => {
    const before = forwarded(down);
    for (const era of ERAS) for (const m of CALLS) await expect503(await rawRequest(down.gateway.url, m.path, era, m.method, m.params, KEY));
    await expect(connectV2(`${down.gateway.url}/mcp`, KEY)).rejects.toThrow(/503|scope/i);
    expect(forwarded(down)).toBe(before);
    expect(await scopeLookups(down.gateway.url, 'error')).toBeGreaterThan(0);
  });

  it("answers 503 within the budget when the endpoint is slower than scopes.timeoutMs (it never answers in this test's lifetime)", async () => {
    endpoint.delayMs = 120_000;
    try {
      const before = forwarded(slow);
      // Distinct credentials: each is a cold lookup that must time out on its own budget.
      for (const [i, m] of CALLS.entries()) {
        await expect503(await rawRequest(slow.gateway.url, m.path, 'modern', m.method, m.params, { ...KEY, 'x-cpz-secret': `slow-${i}` }));
      }
      expect(forwarded(slow)).toBe(before);
      expect(await scopeLookups(slow.gateway.url, 'timeout')).toBeGreaterThan(0);
    } finally {
      endpoint.delayMs = 0;
    }
  });

  it('answers 503 when the endpoint fails with 5xx or answers without a scopes field', async () => {
    for (const mode of ['error', 'no_field'] as const) {
      endpoint.mode = mode;
      try {
        const before = forwarded(slow);
        await expect503(
          await rawRequest(
            slow.gateway.url,
            '/mcp',
            'legacy',
            'tools/call',
            { name: 'alpha__alpha_public', arguments: {} },
            { ...KEY, 'x-cpz-secret': `mode-${mode}` },
          ),
        );
        expect(forwarded(slow)).toBe(before);
      } finally {
        endpoint.mode = 'ok';
      }
    }
  });
});

describe('failureMode open', () => {
  let down: Rig;
  beforeAll(async () => {
    down = await rig(await unreachableUrl(), 'open');
  });
  afterAll(async () => {
    await down?.close();
  });

  it('refuses a credential never seen valid with 503 on every method while the endpoint is down, forwards nothing, logged and counted', async () => {
    const errorsBefore = await scopeLookups(down.gateway.url, 'error');
    const before = forwarded(down);
    for (const era of ERAS) for (const m of CALLS) await expect503(await rawRequest(down.gateway.url, m.path, era, m.method, m.params, KEY));
    // Neither does any other string: a bearer no source ever answered for is not served either.
    await expect503(await rawRequest(down.gateway.url, '/mcp', 'modern', 'tools/list', {}, { authorization: 'Bearer garbage' }));
    expect(forwarded(down)).toBe(before);
    const logged = down.logs.records('caller scopes unknown');
    expect(logged.some((r) => r.reason === 'error' && r.failureMode === 'open')).toBe(true);
    expect(await scopeLookups(down.gateway.url, 'error')).toBeGreaterThan(errorsBefore);
  });
});

describe('an authoritative no from the scope endpoint (401 or 403)', () => {
  let endpoint: ScopeEndpoint;
  const rigs: Rig[] = [];
  beforeAll(async () => {
    endpoint = await startScopeEndpoint({ k_member: ['a'] });
    rigs.push(
      await rig(endpoint.url, 'open', undefined, { timeoutMs: ROOMY_BUDGET_MS }),
      await rig(endpoint.url, 'closed', undefined, { timeoutMs: ROOMY_BUDGET_MS }),
    );
  });
  afterAll(async () => {
    await Promise.all(rigs.map((r) => r.close()));
    await endpoint?.close();
  });

  for (const mode of ['unauthorized', 'forbidden'] as const) {
    it(`(${mode}) is a 401 with the challenge in both failure modes, on every method, and forwards nothing`, async () => {
      endpoint.mode = mode;
      try {
        for (const r of rigs) {
          const before = forwarded(r);
          for (const m of CALLS) await expectChallenge(await rawRequest(r.gateway.url, m.path, 'modern', m.method, m.params, KEY), r.gateway.url, m.path, KEY);
          expect(forwarded(r)).toBe(before);
        }
      } finally {
        endpoint.mode = 'ok';
      }
    });
  }
});

describe('a per-upstream override (deployment closed, alpha open)', () => {
  /** The scope entries' life: the test waits it out so that the next lookup meets the failing endpoint. */
  const TTL_MS = 1000;
  let endpoint: ScopeEndpoint;
  let split: Rig;
  beforeAll(async () => {
    endpoint = await startScopeEndpoint({ k_member: ['a'] });
    // A budget a loaded machine meets: the first lookup must succeed for the credential to be seen valid.
    split = await rig(endpoint.url, 'closed', 'open', { ttlMs: TTL_MS, timeoutMs: ROOMY_BUDGET_MS });
  });
  afterAll(async () => {
    await split?.close();
    await endpoint?.close();
  });

  it("serves alpha what the credential's last good answer held and refuses beta with 503 while the endpoint fails", async () => {
    // Seen valid (scope a), then its entry expires and the endpoint fails.
    expect((await rpcMessage(await rawRequest(split.gateway.url, '/mcp', 'modern', 'tools/list', {}, KEY))).result).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 100));
    endpoint.mode = 'error';
    const listed = await rpcMessage(await rawRequest(split.gateway.url, '/mcp', 'modern', 'tools/list', {}, KEY));
    expect(((listed.result?.tools ?? []) as { name: string }[]).map((t) => t.name).sort()).toEqual([
      'alpha__alpha_other',
      'alpha__alpha_public',
      'alpha__alpha_secret',
    ]);
    const before = split.beta.received.filter((m) => m.method === 'tools/call').length;
    await expect503(await rawRequest(split.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'beta__beta_secret', arguments: {} }, KEY));
    expect(split.beta.received.filter((m) => m.method === 'tools/call').length).toBe(before);
    const passed = await rpcMessage(await rawRequest(split.gateway.url, '/mcp', 'modern', 'tools/call', { name: 'alpha__alpha_secret', arguments: {} }, KEY));
    expect(passed.result?.isError).toBeFalsy();
    expect(split.alpha.received.filter((m) => m.method === 'tools/call').length).toBeGreaterThan(0);
  });
});
