/**
 * Strict, canonical routing (issue 18; RFC 9728 §3.3): each endpoint answers on exactly its configured
 * path; every other spelling (case, trailing or doubled slash) is 404 with a JSON-RPC body naming the
 * MCP endpoints, never served as a second name for the same resource. The 401 challenge and the
 * metadata document name the URL the client used (its Host, or `publicUrl` when set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';

const LEGACY = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const KEY = { 'x-cpz-key': 'route', 'x-cpz-secret': 'route-secret' };
const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

let stack: Stack;
let proxied: Stack;
beforeAll(async () => {
  // No health probe: a test below counts every message the upstream receives, and a probe's ping would be one.
  stack = await startStack({
    upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] },
    gateway: { upstreams: [{ health: { intervalMs: 0 } }] },
  });
  proxied = await startStack({
    upstream: { tools: [{ definition: { name: 'echo', inputSchema: { type: 'object' } } }] },
    gateway: { publicUrl: 'https://mcp.example.com' },
  });
});
afterAll(async () => {
  await stack?.close();
  await proxied?.close();
});

describe('strict routing', () => {
  it('answers /mcp and /mcp/compact on exactly those paths', async () => {
    for (const path of ['/mcp', '/mcp/compact']) {
      const response = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { ...LEGACY, ...KEY }, body: list });
      expect(response.status).toBe(200);
    }
  });

  it('answers every other spelling 404 with a JSON-RPC body naming the endpoints, and forwards nothing', async () => {
    // Counted by the caller's key: the gateway's own keep-warm listing reaches the upstream on its timer, in any test.
    const forwarded = () => stack.fake!.received.filter((m) => m.headers['x-cpz-key'] === KEY['x-cpz-key']).length;
    const before = forwarded();
    for (const path of ['/MCP', '/mcp/', '/Mcp/compact', '/mcp/compact/', '/mcp//compact', '//mcp', '/mcp/COMPACT']) {
      const response = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { ...LEGACY, ...KEY }, body: list });
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringContaining('/mcp, /mcp/compact') },
      });
    }
    for (const path of ['/.well-known/oauth-protected-resource/mcp/', '/.well-known/oauth-protected-resource/MCP', '/HEALTHZ', '/healthz/']) {
      expect((await fetch(`${stack.gatewayUrl}${path}`)).status, path).toBe(404);
    }
    expect(forwarded()).toBe(before);
  });

  it('answers a served path asked with another method 405 with Allow and a JSON-RPC body', async () => {
    for (const path of ['/healthz', '/readyz', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(response.status, path).toBe(405);
      expect(response.headers.get('allow'), path).toContain('GET');
      expect(await response.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringMatching(new RegExp(`^Method Not Allowed: ${path.replaceAll('.', '\\.')} answers .*GET.*, not POST$`)) },
      });
    }
    // A method nothing serves: 405 on a served path, and unknown paths stay 404 whatever the method.
    const unknownMethod = await fetch(`${stack.gatewayUrl}/healthz`, { method: 'PROPFIND' });
    expect(unknownMethod.status).toBe(405);
    expect(await unknownMethod.json()).toMatchObject({ error: { code: -32000, message: 'Method Not Allowed: /healthz answers HEAD, GET, not PROPFIND' } });
    for (const method of ['POST', 'PROPFIND']) {
      const response = await fetch(`${stack.gatewayUrl}/nowhere`, { method });
      expect(response.status, method).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining('is not an endpoint') } });
    }
  });

  it('names the URL the client used in the challenge and in the metadata, per surface', async () => {
    const host = new URL(stack.gatewayUrl).host.replace('127.0.0.1', 'localhost');
    for (const path of ['/mcp', '/mcp/compact']) {
      const response = await fetch(`http://${host}${path}`, { method: 'POST', headers: LEGACY, body: list });
      expect(response.status).toBe(401);
      const metadataUrl = `http://${host}/.well-known/oauth-protected-resource${path}`;
      expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
      expect(await (await fetch(metadataUrl)).json()).toMatchObject({ resource: `http://${host}${path}` });
    }
  });

  it('names publicUrl behind a proxy', async () => {
    const response = await fetch(`${proxied.gatewayUrl}/mcp/compact`, { method: 'POST', headers: LEGACY, body: list });
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp/compact"',
    );
    expect(await (await fetch(`${proxied.gatewayUrl}/.well-known/oauth-protected-resource/mcp/compact`)).json()).toMatchObject({
      resource: 'https://mcp.example.com/mcp/compact',
    });
  });
});
