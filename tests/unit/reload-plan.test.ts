/**
 * planReload (gateway/reload/plan.ts) on the keys the Node listeners were created with: `server.*`
 * and `limits.headerBytes` (http/node-server.ts) cannot change on a running socket, so a reload that
 * changes one is refused naming it; the structural limits, read per request, reload freely.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load.ts';
import { ReloadRefused, planReload } from '../../gateway/reload/plan.ts';

const base = () => loadConfig({ env: {} });

describe('planReload: listener options', () => {
  it.each([
    ['server.headersTimeoutMs', { server: { headersTimeoutMs: 5000 } }],
    ['server.requestTimeoutMs', { server: { requestTimeoutMs: 60000 } }],
    ['server.keepAliveTimeoutMs', { server: { keepAliveTimeoutMs: 1000 } }],
    ['server.sendTimeoutMs', { server: { sendTimeoutMs: 5000 } }],
    ['limits.headerBytes', { limits: { headerBytes: 32768 } }],
  ])('refuses a change of %s, naming it', (key, overrides) => {
    const next = loadConfig({ env: {}, overrides });
    let refused: unknown;
    try {
      planReload(base(), next);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ReloadRefused);
    expect((refused as ReloadRefused).keyPath).toBe(key);
    expect((refused as Error).message).toMatch(/which needs a restart/);
  });

  it('reloads a change of the structural input limits (read per request)', () => {
    const plan = planReload(base(), loadConfig({ env: {}, overrides: { limits: { jsonDepth: 32, stringLength: 4096, arrayLength: 100 } } }));
    expect(plan.changed).toEqual(['limits']);
  });
});

describe('planReload: upstream keys', () => {
  const withUpstream = (upstream: Record<string, unknown>) => loadConfig({ env: {}, overrides: { upstreams: [upstream] } });
  it.each([
    ['timeoutMs', { timeoutMs: 1234 }],
    ['scopes.required', { scopes: { required: ['files:read'] } }],
    ['scopeRules', { scopeRules: { get_bars: ['trade'] } }],
    ['maxAnchors', { maxAnchors: 9 }],
    ['tools', { tools: { get_bars: { keywords: ['candles'] } } }],
    ['rateLimits', { rateLimits: { reads: { points: 5, durationMs: 1000 } } }],
  ])('keeps the connection when only %s changed (applied in place)', (_key, change) => {
    expect(planReload(base(), withUpstream(change)).upstreams).toEqual([{ name: 'cpzai', decision: 'repolicy' }]);
  });
  it.each([
    ['headers', { headers: { 'x-team': 'a' } }],
    ['forwardCredentials', { forwardCredentials: false }],
    ['health', { health: { intervalMs: 0 } }],
  ])('opens a new connection when %s changed', (_key, change) => {
    expect(planReload(base(), withUpstream(change)).upstreams).toEqual([{ name: 'cpzai', decision: 'replace' }]);
  });
});
