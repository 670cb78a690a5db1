/**
 * The states a pin's review shows (gateway/catalog/pin-guard.ts `report`, what `pins list` and the console
 * print): a pin of a configured upstream this process has not fetched yet is `unseen` ("pinned, not seen
 * yet"); a pin of an upstream the configuration no longer names (removed, or renamed without its pins
 * carried) is `unconfigured`, not a tool still to come (an operator try-out read the first for the second).
 */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.ts';
import { PinGuard } from '../../gateway/catalog/pin-guard.ts';
import { createAuditLog } from '../../gateway/obs/audit.ts';
import { createMetrics } from '../../gateway/obs/metrics.ts';
import { memoryPinStore } from '../../gateway/store/pin-store.ts';

describe('PinGuard.report', () => {
  it('names a pin of an upstream no longer configured unconfigured, and one of a configured upstream not fetched yet unseen', async () => {
    const config = loadConfig({ env: {}, overrides: { upstreams: [{ name: 'kept', url: 'http://127.0.0.1:9/mcp' }] } });
    const store = memoryPinStore();
    const record = {
      digest: 'sha256:x',
      definition: { name: 'echo', inputSchema: { type: 'object' as const } },
      pinnedAt: new Date(0).toISOString(),
      by: 'first_sight' as const,
    };
    await store.pinAllIfAbsent('kept', [['echo', record]]);
    await store.pinAllIfAbsent('gone', [['echo', record]]);
    const guard = new PinGuard(config.pinning, store, {
      metrics: createMetrics(),
      audit: createAuditLog({ ...config.audit, destination: 'off' }),
      log: pino({ level: 'silent' }),
      upstreams: ['kept'],
    });
    const states = (await guard.report(['kept'])).map(({ upstream, name, state }) => ({ upstream, name, state }));
    expect(states).toEqual([
      { upstream: 'kept', name: 'echo', state: 'unseen' },
      { upstream: 'gone', name: 'echo', state: 'unconfigured' },
    ]);
  });
});
