/**
 * What a reload that adds, then removes, a second upstream does beside the names (reload-names.test.ts):
 * a listen stream opened before it hears every reload while its configuration retires (a second reload
 * in that window went unannounced), and the removed upstream's gauges go once its connection is closed.
 * A gateway of this file's own: its reloads change no other test's history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { loadConfig } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { followSse, openStream, rpc } from '../../helpers/raw-mcp.ts';
import { waitFor } from '../../helpers/wait.ts';

const CONFORMANCE_CONFIG = new URL('../../../config/conformance.yaml', import.meta.url).pathname;
const read = (name: string, text: string) => ({
  definition: { name, description: `${name} (read)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } as Tool,
  call: () => ({ content: [{ type: 'text' as const, text }] }),
});

let alpha: FakeUpstream;
let beta: FakeUpstream;
let gateway: RunningGateway;

function config(upstreams: FakeUpstream[]): GatewayConfig {
  return loadConfig({
    path: CONFORMANCE_CONFIG,
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: upstreams.map((u) => ({ name: u === alpha ? 'alpha' : 'beta', url: u.url, forwardCredentials: true })),
      log: { level: 'silent' },
    },
  });
}

beforeAll(async () => {
  alpha = await startFakeUpstream({ tools: [read('quote', 'alpha quote'), read('fx_rate', 'alpha fx')] });
  beta = await startFakeUpstream({ tools: [read('headline', 'beta headline'), read('quote', 'beta quote')] });
  gateway = await startGateway(config([alpha]));
});
afterAll(async () => {
  await gateway?.close();
  await alpha?.close();
  await beta?.close();
});

describe('a reload and what outlives it', () => {
  it('announces a second reload on a listen stream opened before the first, while its configuration retires', async () => {
    const { headers, body } = rpc('modern', 'listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const stream = await openStream(`${gateway.url}/mcp`, body, headers);
    expect(stream.statusCode).toBe(200);
    const messages = followSse(stream);
    const changed = (m: { method?: string }) => m.method === 'notifications/tools/list_changed';
    try {
      await messages.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
      await gateway.reload(config([alpha, beta]));
      await messages.waitFor(changed);
      await gateway.reload(config([alpha]));
      await waitFor('a second tools/list_changed on the same stream', () => messages.seen.filter(changed).length >= 2, { timeoutMs: 5000 });
    } finally {
      stream.destroy();
    }
  });

  it("drops a removed upstream's gauges once its connection is closed (a stale mcp_upstream_up would alert forever)", async () => {
    await gateway.reload(config([alpha, beta]));
    const metrics = async () => (await fetch(`${gateway.url}/metrics`)).text();
    await waitFor('beta to be counted', async () => (await metrics()).includes('mcp_upstream_up{upstream="beta"} 1'));
    await gateway.reload(config([alpha]));
    await waitFor('the gauges of beta to go', async () => !(await metrics()).includes('mcp_upstream_up{upstream="beta"}'), { timeoutMs: 15_000 });
    const text = await metrics();
    expect(text).toContain('mcp_upstream_up{upstream="alpha"} 1');
    for (const gauge of ['mcp_upstream_up', 'mcp_catalog_tools', 'mcp_tools_held', 'mcp_catalog_cache_bytes'])
      expect(text).not.toContain(`${gauge}{upstream="beta"}`);
    // Counters keep their history.
    expect(text).toMatch(/mcp_catalog_refreshes_total\{upstream="beta",outcome="ok"\} [1-9]/);
  });
});
