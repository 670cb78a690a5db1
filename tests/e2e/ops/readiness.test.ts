/**
 * Readiness that notices (issue 17): with the reference stack, the upstream MCP server is stopped and
 * started again on the same port. /readyz and mcp_upstream_up follow within a few seconds either way
 * (the health probe, no request needed), and a call made one second after the upstream's return
 * succeeds (a request to a down upstream reconnects at once) even after an outage long enough for the
 * reconnect backoff to have grown to several seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { startGatewayWith } from '../../helpers/stack.ts';
import { startPlatform } from '../../../upstream/platform/index.ts';
import { startUpstreamServer } from '../../../upstream/server/index.ts';
import { connectV2, DEMO_KEYS } from '../../helpers/clients.ts';
import { freePort } from '../../helpers/free-port.ts';
import { waitFor } from '../../helpers/wait.ts';

type Service = { url: string; close(): Promise<void> };

let platform: Service;
let upstream: Service | undefined;
let upstreamPort: number;
let gateway: RunningGateway;

const startUpstream = async () => {
  upstream = await startUpstreamServer({ port: upstreamPort, platformUrl: platform.url });
};
const stopUpstream = async () => {
  await upstream!.close();
  upstream = undefined;
};

beforeAll(async () => {
  platform = await startPlatform({ port: 0 });
  upstreamPort = await freePort();
  await startUpstream();
  gateway = await startGatewayWith({ overrides: { upstreams: [{ url: upstream!.url }], scopes: { endpoint: `${platform.url}/v1/me` } } });
  await waitFor('/readyz 200', async () => (await readyz()) === 200);
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await platform?.close();
});

async function readyz(): Promise<number> {
  return (await fetch(`${gateway.url}/readyz`)).status;
}

async function upstreamUp(): Promise<string | undefined> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  return /^mcp_upstream_up\{upstream="cpzai"\} (\d)$/m.exec(text)?.[1];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('readiness follows the upstream', () => {
  it('/readyz turns 503 within 5 s of the upstream going away and 200 within 5 s of its return, without any request', async () => {
    expect(await upstreamUp()).toBe('1');
    await stopUpstream();
    await waitFor('/readyz 503 within 5 s', async () => (await readyz()) === 503, { timeoutMs: 5000, intervalMs: 100 });
    expect(await upstreamUp()).toBe('0');
    const body = (await (await fetch(`${gateway.url}/readyz`)).json()) as { status: string; reasons: string[] };
    expect(body).toMatchObject({ status: 'not_ready', reasons: [expect.stringContaining('upstream cpzai: down since')] });
    // Long enough for several failed attempts: the backoff alone would now wait seconds.
    await sleep(6000);
    await startUpstream();
    await waitFor('/readyz 200 within 5 s', async () => (await readyz()) === 200, { timeoutMs: 5000, intervalMs: 100 });
    expect(await upstreamUp()).toBe('1');
  });

  it('a call made 1 s after the upstream returns from a 10 s outage succeeds', async () => {
    await stopUpstream();
    await waitFor('/readyz 503', async () => (await readyz()) === 503, { timeoutMs: 5000 });
    await sleep(10_000);
    await startUpstream();
    await sleep(1000);
    const client = await connectV2(`${gateway.url}/mcp`, DEMO_KEYS.data);
    try {
      const result = await client.callTool({ name: 'list_accounts', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain('"count":3');
    } finally {
      await client.close();
    }
  }, 40_000);
});
