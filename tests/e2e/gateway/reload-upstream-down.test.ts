/**
 * A lone upstream that goes down after a live reload: its last tools stay listed (the catalogue's stale
 * copy) and a call answers isError upstream_unavailable, as without the reload (README, Readiness).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { startGateway, type RunningGateway } from '../../../gateway/gateway.ts';
import { loadConfig } from '../../../config/load.ts';
import type { GatewayConfig } from '../../../config/types.ts';
import { startFakeUpstream, type FakeUpstream } from '../../fixtures/fake-upstream.ts';
import { connectV2 } from '../../helpers/clients.ts';
import { LogCapture } from '../../helpers/log-capture.ts';
import { eventually } from '../../helpers/wait.ts';

const tool: Tool = { name: 'ping', description: 'ping (test tool)', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } };

/** config/conformance.yaml in front of `url`, on a free port; a lost upstream is retried only after a minute. */
function configOver(url: string, level: 'silent' | 'info' = 'silent'): GatewayConfig {
  return loadConfig({
    path: 'config/conformance.yaml',
    env: {},
    overrides: {
      listen: { host: '127.0.0.1', port: 0 },
      log: { level },
      upstreams: [{ url, restart: { minDelayMs: 60_000, maxDelayMs: 60_000 } }],
    },
  });
}

const CREDENTIAL = { 'x-cpz-key': 'k', 'x-cpz-secret': 's' };

/** A fake upstream serving `ping`, a gateway over it, and the gateway's tools listed once (its catalogue at hand). */
async function servingGateway(logs?: LogCapture): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; config: GatewayConfig }> {
  const upstream = await startFakeUpstream({ tools: [{ definition: tool, call: () => ({ content: [{ type: 'text', text: 'pong' }] }) }] });
  const config = configOver(upstream.url, logs ? 'info' : 'silent');
  const gateway = await startGateway(config, logs ? { logDestination: logs } : {});
  const before = await connectV2(`${gateway.url}/mcp`, CREDENTIAL);
  expect((await before.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
  await before.close();
  return { upstream, gateway, config };
}

/** Lists and calls `ping` through `gateway`: the tool listed, and the call's result. */
async function listAndCall(gateway: RunningGateway): Promise<{ isError?: boolean; text: string }> {
  const client = await connectV2(`${gateway.url}/mcp`, CREDENTIAL);
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
    const result = (await client.callTool({ name: 'ping', arguments: {} })) as { isError?: boolean; content: { text?: string }[] };
    return { isError: result.isError, text: result.content.map((c) => c.text).join('\n') };
  } finally {
    await client.close();
  }
}

/** Waits until `/readyz` says the upstream is down (the probe saw it go). */
async function untilNotReady(gateway: RunningGateway): Promise<void> {
  for (let tries = 0; (await fetch(`${gateway.url}/readyz`)).status === 200 && tries < 200; tries++) await new Promise((r) => setTimeout(r, 50));
}

let upstream: FakeUpstream;
let gateway: RunningGateway;
let config: GatewayConfig;
beforeAll(async () => {
  upstream = await startFakeUpstream({ tools: [{ definition: tool, call: () => ({ content: [{ type: 'text', text: 'pong' }] }) }] });
  config = configOver(upstream.url);
  gateway = await startGateway(config);
});
afterAll(async () => {
  await gateway?.close();
});

const session = async () => connectV2(`${gateway.url}/mcp`, { 'x-cpz-key': 'k', 'x-cpz-secret': 's' });

describe('a lone upstream down after a reload', () => {
  it('keeps its last tools listed, and a call answers isError upstream_unavailable', async () => {
    const before = await session();
    expect((await before.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
    await before.close();
    await gateway.reload(config);
    await upstream.close();
    const down = await listAndCall(gateway);
    expect(down.isError).toBe(true);
    expect(down.text).toMatch(/unavailable|unreachable/);
  });
});

describe('resources and prompts of a lone upstream that is down', () => {
  it('stay advertised and answer upstream unavailable, not Method not found', async () => {
    const withResources = await startFakeUpstream({ tools: [{ definition: tool }], resources: { 'notes://guide': 'read me' } });
    const own = await startGateway(configOver(withResources.url));
    try {
      const up = await connectV2(`${own.url}/mcp`, { 'x-cpz-key': 'k', 'x-cpz-secret': 's' });
      expect((await up.listResources()).resources.map((r) => r.uri)).toEqual(['notes://guide']);
      await up.close();
      await withResources.close();
      const client = await connectV2(`${own.url}/mcp`, { 'x-cpz-key': 'k', 'x-cpz-secret': 's' });
      try {
        // The list: its last copy (the catalogue cache's), the read: the upstream's to answer, so unavailable.
        expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['notes://guide']);
        const error = (await client.readResource({ uri: 'notes://guide' }).then(
          () => undefined,
          (e: unknown) => e,
        )) as { code?: number; message?: string } | undefined;
        expect(error, 'an error while the upstream is down').toBeDefined();
        expect(error!.code).not.toBe(-32601);
        expect(error!.message).toMatch(/unavailable|unreachable/);
        expect(client.getServerCapabilities()?.resources, 'resources still advertised').toBeDefined();
      } finally {
        await client.close();
      }
    } finally {
      await own.close();
    }
  });
});

describe('a reload that moves a serving upstream to a URL nothing answers', () => {
  it('is refused, naming the upstream and the URL, and the running configuration keeps serving', async () => {
    const logs = new LogCapture();
    const { upstream: serving, gateway: own } = await servingGateway(logs);
    try {
      // A mistyped port: one nothing listens on (taken, then given back), so connections are refused.
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const closedPort = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      const mistyped = configOver(`http://127.0.0.1:${closedPort}/mcp`, 'info');
      const refusal = await own.reload({ ...mistyped, upstreams: mistyped.upstreams.map((u) => ({ ...u, timeoutMs: 1000 })) }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(refusal?.name).toBe('ReloadRefused');
      expect(refusal?.message).toBe(
        `configuration not reloaded: upstreams[0]: its new connection (http://127.0.0.1:${closedPort}/mcp) could not be reached (upstream fixture is unreachable (connecting)), while the one it replaces serves; the running configuration keeps serving`,
      );
      expect(await listAndCall(own)).toEqual({ isError: undefined, text: 'pong' });
      // The trial connection's failures are the refusal's to say: none counted against the serving upstream of that name,
      // no "retrying" that nothing does, no failed list fetch (SRE try-out).
      const metrics = await (await fetch(`${own.url}/metrics`)).text();
      expect(metrics).not.toMatch(/^mcp_upstream_errors_total\{upstream="fixture"/m);
      expect(metrics).not.toMatch(/^mcp_catalog_refreshes_total\{upstream="fixture",outcome="error"\}/m);
      expect(logs.records().filter((r) => /retrying with backoff|list fetch failed/.test(String(r.msg)))).toEqual([]);
      // The same URL change once the old upstream is down too is applied: nothing that works is lost.
      await serving.close();
      await untilNotReady(own);
      await expect(own.reload({ ...mistyped, upstreams: mistyped.upstreams.map((u) => ({ ...u, timeoutMs: 1000 })) })).resolves.toBeDefined();
      // Applied, its connection down: said once it serves.
      const retrying = logs
        .records()
        .filter((r) => String(r.msg).includes(`at http://127.0.0.1:${closedPort}/mcp`) && /retrying with backoff/.test(String(r.msg)));
      expect(retrying).toHaveLength(1);
    } finally {
      await own.close();
      await serving.close().catch(() => {});
    }
  });
});

describe('a reload that changes a lone upstream settings in place while it is down', () => {
  it('keeps its last tools listed, and a call answers isError upstream_unavailable (not -32603)', async () => {
    const { upstream: down, gateway: own, config: running } = await servingGateway();
    try {
      await down.close();
      await untilNotReady(own);
      // timeoutMs and scopeRules apply in place (plan decision `repolicy`): the connection is kept, the catalogue cache is new.
      const plan = await own.reload({ ...running, upstreams: running.upstreams.map((u) => ({ ...u, timeoutMs: u.timeoutMs - 500 })) });
      expect(plan.upstreams).toEqual([{ name: running.upstreams[0]!.name, decision: 'repolicy' }]);
      const after = await listAndCall(own);
      expect(after.isError).toBe(true);
      expect(after.text).toMatch(/unavailable|unreachable/);
    } finally {
      await own.close();
    }
  });
});

describe('a refused reload leaves what serves as it was', () => {
  it("keeps the other upstreams' settings (a timeoutMs it would have changed) and mcp_upstream_up of the serving upstream", async () => {
    const slow: Tool = { name: 'slow', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } };
    const a = await startFakeUpstream({
      tools: [{ definition: slow, call: async () => (await new Promise((r) => setTimeout(r, 600)), { content: [{ type: 'text', text: 'done' }] }) }],
    });
    const b = await startFakeUpstream({ tools: [{ definition: tool, call: () => ({ content: [{ type: 'text', text: 'pong' }] }) }] });
    const two = (bUrl: string, aTimeoutMs: number) =>
      loadConfig({
        path: 'config/conformance.yaml',
        env: {},
        overrides: {
          listen: { host: '127.0.0.1', port: 0 },
          log: { level: 'silent' },
          upstreams: [
            { name: 'a', url: a.url, timeoutMs: aTimeoutMs },
            { name: 'b', url: bUrl, timeoutMs: 1000 },
          ],
        },
      });
    const own = await startGateway(two(b.url, 5000));
    try {
      const client = await connectV2(`${own.url}/mcp`, CREDENTIAL);
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['a__slow', 'b__ping']);
      await client.close();
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const closedPort = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      // b moved to a dead port (refused), a's timeoutMs lowered below its tool's 600 ms in the same file.
      await expect(own.reload(two(`http://127.0.0.1:${closedPort}/mcp`, 300))).rejects.toThrow(/^configuration not reloaded: upstreams\[1\]: /);
      const after = await connectV2(`${own.url}/mcp`, CREDENTIAL);
      try {
        const result = (await after.callTool({ name: 'a__slow', arguments: {} })) as { isError?: boolean; content: { text?: string }[] };
        expect(result.content[0]!.text, 'a keeps its 5 s timeoutMs').toBe('done');
      } finally {
        await after.close();
      }
      const metrics = await (await fetch(`${own.url}/metrics`)).text();
      expect(metrics).toMatch(/^mcp_upstream_up\{upstream="b"\} 1$/m);
      expect(metrics).toMatch(/^mcp_upstream_up\{upstream="a"\} 1$/m);
    } finally {
      await own.close();
      await a.close();
      await b.close();
    }
  });
});

describe('a refused reload of one upstream of two', () => {
  it('logs no exclusion from the merged catalogue for the configuration that never served (operator try-out)', async () => {
    const pong = () => ({ content: [{ type: 'text' as const, text: 'pong' }] });
    const a = await startFakeUpstream({ tools: [{ definition: tool, call: pong }] });
    const b = await startFakeUpstream({ tools: [{ definition: { ...tool, name: 'pong' }, call: pong }] });
    const logs = new LogCapture();
    const two = (urlOfB: string): GatewayConfig =>
      loadConfig({
        path: 'config/conformance.yaml',
        env: {},
        overrides: {
          listen: { host: '127.0.0.1', port: 0 },
          log: { level: 'info' },
          upstreams: [
            { name: 'a', url: a.url, restart: { minDelayMs: 60_000, maxDelayMs: 60_000 } },
            { name: 'b', url: urlOfB, timeoutMs: 1000, restart: { minDelayMs: 60_000, maxDelayMs: 60_000 } },
          ],
        },
      });
    const own = await startGateway(two(b.url), { logDestination: logs });
    try {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const closedPort = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      await expect(own.reload(two(`http://127.0.0.1:${closedPort}/mcp`))).rejects.toMatchObject({ name: 'ReloadRefused' });
      expect(logs.records('upstream left out of the merged catalogue')).toEqual([]);
      // The serving configuration still notes an exclusion of its own.
      await b.close();
      const client = await connectV2(`${own.url}/mcp`, CREDENTIAL);
      try {
        // Degraded (200), naming b: the serving configuration has found it down.
        await eventually(
          async () => (await (await fetch(`${own.url}/readyz`)).json()) as { status: string; reasons?: string[] },
          (body) => body.status === 'degraded' && (body.reasons ?? []).some((r) => r.startsWith('upstream b:')),
        );
        await client.listTools();
      } finally {
        await client.close();
      }
      expect(logs.records('upstream left out of the merged catalogue').map((r) => r.upstream)).toEqual(['b']);
    } finally {
      await own.close();
      await a.close();
      await b.close().catch(() => {});
    }
  });
});
