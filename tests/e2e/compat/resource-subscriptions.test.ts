/**
 * `resourceSubscriptions` on `subscriptions/listen` relayed (issue 18; spec 2026-07-28
 * basic/patterns/subscriptions): a 2026-07-28 caller's listen stream asks for a URI, the gateway
 * subscribes at the upstream that owns it (a 2025-era sessionful upstream: `resources/subscribe` on a
 * session of its own; a 2026-07-28 upstream: a `subscriptions/listen` of its own) and the upstream's
 * `notifications/resources/updated` reaches the caller's stream, and only a stream that asked for it.
 * A URI the caller may not read (its upstream's `scopes.required`) is dropped from the listen filter:
 * not acknowledged, not held upstream, never delivered, as one nobody owns.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { connectV2, fetchWithHeaders } from '../../helpers/clients.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { COUNTER_URI, startAskingUpstream } from '../../fixtures/fake-tools.ts';
import { FULL_KEY } from '../../helpers/raw-mcp.ts';
import { startGatewayOver } from '../../helpers/stack.ts';
import { waitFor } from '../../helpers/wait.ts';

const until = (check: () => boolean) => waitFor('the condition', check, { timeoutMs: 5000, intervalMs: 20 });

async function listening(gatewayMcpUrl: string, uris: string[], headers: Record<string, string> = FULL_KEY) {
  const updates: string[] = [];
  const client = new Client({ name: 'subscriber', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  await client.connect(new StreamableHTTPClientTransport(new URL(gatewayMcpUrl), { fetch: fetchWithHeaders(headers) }));
  const subscription = await client.listen({ resourceSubscriptions: uris });
  return { client, subscription, updates };
}

describe('behind a 2025-era sessionful upstream', () => {
  let upstream: Awaited<ReturnType<typeof startAskingUpstream>>;
  let gateway: RunningGateway;
  const mcp = () => `${gateway.url.replace(/\/mcp$/, '')}/mcp`;
  beforeAll(async () => {
    upstream = await startAskingUpstream();
    gateway = await startGatewayOver(upstream.url);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('offers resources.subscribe to 2026-07-28 callers', async () => {
    const client = await connectV2(mcp(), FULL_KEY);
    try {
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('delivers notifications/resources/updated to the stream that asked, and unsubscribes after it closes', async () => {
    const watcher = await listening(mcp(), [COUNTER_URI]);
    const bystander = await listening(mcp(), ['test://other']);
    try {
      expect(watcher.subscription.honoredFilter.resourceSubscriptions).toEqual([COUNTER_URI]);
      await until(() => (upstream.subscriptions.get(COUNTER_URI)?.size ?? 0) > 0);
      await upstream.resourceUpdated(COUNTER_URI);
      await until(() => watcher.updates.length > 0);
      expect(watcher.updates).toEqual([COUNTER_URI]);
      expect(bystander.updates).toEqual([]);
    } finally {
      await watcher.subscription.close();
      await bystander.subscription.close();
      await watcher.client.close();
      await bystander.client.close();
    }
    await until(() => (upstream.subscriptions.get(COUNTER_URI)?.size ?? 0) === 0);
  });
});

describe('behind a 2026-07-28 upstream', () => {
  const uri = 'test://modern-doc';
  let upstream: FakeUpstream;
  let gateway: RunningGateway;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ tools: [], resources: { [uri]: { name: 'doc', text: 'doc' } } });
    gateway = await startGatewayOver(upstream.url);
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it("relays the upstream listen stream's resource updates to the subscribed caller", async () => {
    const watcher = await listening(`${gateway.url.replace(/\/mcp$/, '')}/mcp`, [uri]);
    try {
      // The gateway's own upstream listen stream opens in the background; publish until it is there.
      await until(() => {
        void upstream.resourceUpdated(uri);
        return watcher.updates.length > 0;
      });
      expect(watcher.updates[0]).toBe(uri);
    } finally {
      await watcher.subscription.close();
      await watcher.client.close();
    }
  });
});

describe('a caller who may not read the resource', () => {
  const READER = { authorization: 'Bearer sub-reader-token' };
  const OUTSIDER = { authorization: 'Bearer sub-outsider-token' };
  let upstream: Awaited<ReturnType<typeof startAskingUpstream>>;
  let gateway: RunningGateway;
  beforeAll(async () => {
    upstream = await startAskingUpstream();
    gateway = await startGatewayOver(
      upstream.url,
      { scopes: { required: ['counter:read'] } },
      {
        env: { READER_TOKEN: 'sub-reader-token', OUTSIDER_TOKEN: 'sub-outsider-token' },
        overrides: {
          credentials: {
            apiKeys: [
              { name: 'reader', token: '${READER_TOKEN}', scopes: ['counter:read'] },
              { name: 'outsider', token: '${OUTSIDER_TOKEN}', scopes: ['other:read'] },
            ],
          },
        },
      },
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('drops the URI from its filter: not acknowledged, not held upstream, never delivered', async () => {
    const outsider = await listening(`${gateway.url}/mcp`, [COUNTER_URI], OUTSIDER);
    try {
      expect(outsider.subscription.honoredFilter.resourceSubscriptions).toBeUndefined();
      // Nothing was subscribed upstream for it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(upstream.subscriptions.get(COUNTER_URI)?.size ?? 0).toBe(0);
      // A reader's subscription makes the upstream send updates: still none reaches the outsider's stream.
      const reader = await listening(`${gateway.url}/mcp`, [COUNTER_URI], READER);
      try {
        expect(reader.subscription.honoredFilter.resourceSubscriptions).toEqual([COUNTER_URI]);
        await until(() => (upstream.subscriptions.get(COUNTER_URI)?.size ?? 0) > 0);
        await upstream.resourceUpdated(COUNTER_URI);
        await until(() => reader.updates.length > 0);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(outsider.updates).toEqual([]);
      } finally {
        await reader.subscription.close();
        await reader.client.close();
      }
    } finally {
      await outsider.subscription.close();
      await outsider.client.close();
    }
  });
});
