/**
 * Kubelet probes and Prometheus scrapes address a pod by its IP (`Host: 10.1.2.3:3000`), which no
 * `security.allowedHosts` list names: `/healthz`, `/readyz` and `/metrics` answer any Host, while every
 * other route keeps the Host check, and a browser (Origin or Sec-Fetch-Site, as a DNS-rebinding page
 * sends them) gets the Host check on the probes too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { waitFor } from '../helpers/wait.ts';

const POD_IP_HOST = '10.1.2.3:3000';
let gateway: InProcessGateway;

beforeAll(async () => {
  gateway = inProcessGateway(
    { security: { allowedHosts: ['mcp.example.com'] }, upstreams: [{ health: { intervalMs: 0 } }] },
    { fake: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } as Tool }] } },
  );
  gateway.runtime.warm();
  await waitFor('the gateway to be ready', async () => (await get('/readyz', { host: 'mcp.example.com' })).status === 200);
});
afterAll(async () => {
  await gateway?.close();
});

function get(path: string, headers: Record<string, string>, method = 'GET'): Promise<Response> {
  return gateway.fetch(new Request(`${gateway.gatewayUrl}${path}`, { method, headers }));
}

describe('probe routes with security.allowedHosts set', () => {
  it('answer a pod-IP Host: /healthz, /readyz and /metrics 200', async () => {
    const health = await get('/healthz', { host: POD_IP_HOST });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await get('/readyz', { host: POD_IP_HOST });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    const metrics = await get('/metrics', { host: POD_IP_HOST });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE mcp_requests_total counter');
    expect((await get('/healthz', { host: POD_IP_HOST }, 'HEAD')).status).toBe(200);
  });

  it('every other route keeps the Host check: MCP, RFC 9728 metadata and a probe path asked with POST are 403', async () => {
    const mcp = await gateway.fetch(
      new Request(`${gateway.gatewayUrl}/mcp`, {
        method: 'POST',
        headers: { host: POD_IP_HOST, 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer x' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
    );
    expect(mcp.status).toBe(403);
    expect(((await mcp.json()) as { error: { data: { kind: string } } }).error.data.kind).toBe('forbidden_host');
    expect((await get('/.well-known/oauth-protected-resource/mcp', { host: POD_IP_HOST })).status).toBe(403);
    expect((await get('/healthz', { host: POD_IP_HOST }, 'POST')).status).toBe(403);
    expect((await get('/healthz/', { host: POD_IP_HOST })).status).toBe(403);
  });

  it('a browser gets the Host check on the probes: a DNS-rebinding page (Sec-Fetch-Site, or Origin) is 403', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const sameOrigin = await get(path, { host: 'rebind.example:3000', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' });
      expect(sameOrigin.status, path).toBe(403);
      const crossOrigin = await get(path, { host: 'rebind.example:3000', origin: 'http://rebind.example:3000' });
      expect(crossOrigin.status, path).toBe(403);
    }
    // The allowed public name still serves a browser.
    expect((await get('/readyz', { host: 'mcp.example.com', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });
});
