/**
 * An upstream that answers a tools/call with something that is not an MCP response (a 200 whose JSON
 * body does not parse, a 200 in text/html) answered: the caller gets an isError result that says what
 * was wrong without echoing the upstream's body, `mcp_upstream_errors_total` counts it as
 * `upstream_error` (it answered, wrongly; not `upstream_unavailable`), and the log line says why. Both
 * eras' forwarding paths: the undici hop (a 2026-07-28 upstream over a real loopback socket) and the
 * SDK client (a 2025-11-25 upstream). The gateway runs in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { fakeUpstream, startInterceptedUpstream, type FakeUpstreamCore, type InterceptedUpstream } from '../fixtures/fake-upstream.ts';
import { loadConfig } from '../../config/load.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc } from '../helpers/raw-mcp.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;
const tool = { name: 'quote', description: 'A quote', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } as Tool;
const garbage: Record<string, { type: string; body: string; says: RegExp }> = {
  'invalid JSON': { type: 'application/json', body: '<html>token=sk-secret-123</html>', says: /answered invalid JSON/ },
  'an HTML page': { type: 'text/html', body: '<html>token=sk-secret-123</html>', says: /answered HTTP 200 with text\/html/ },
};

for (const era of ['modern', 'legacy'] as const) {
  describe(`a ${era === 'modern' ? '2026-07-28' : '2025-11-25'} upstream answering tools/call with garbage`, () => {
    let core: FakeUpstreamCore;
    let upstream: InterceptedUpstream;
    let gateway: InProcessGateway;
    let answer: { type: string; body: string } | undefined;

    beforeAll(async () => {
      core = fakeUpstream({ era, tools: [{ definition: tool, call: () => ({ content: [{ type: 'text', text: 'fine' }] }) }] });
      upstream = await startInterceptedUpstream(core, (body, _req, res) => {
        if (!answer || !body.includes('"tools/call"')) return false;
        res.writeHead(200, { 'content-type': answer.type });
        res.end(answer.body);
        return true;
      });
      const { url } = upstream;
      // As inProcessGatewayOver, with the log captured (its level is silent).
      gateway = inProcessGateway(
        loadConfig({ path: CONFORMANCE_CONFIG, env: {}, overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ url }], log: { level: 'info' } } }),
      );
    });
    afterAll(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    const call = async () => {
      const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'quote', arguments: {} });
      const [message] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, headers));
      return message!;
    };

    it('answers normally first', async () => {
      const message = await call();
      expect((message.result as { content: { text: string }[] }).content[0]!.text).toBe('fine');
    });

    for (const [what, { type, body, says }] of Object.entries(garbage))
      it(`says the upstream answered ${what}, counts it as upstream_error, logs why, and echoes nothing of the body`, async () => {
        const metric = async () => {
          const text = await (await gateway.fetch(new Request(`${gateway.gatewayUrl}/metrics`))).text();
          return Number(/mcp_upstream_errors_total\{upstream="fixture",kind="upstream_error"\} (\d+)/.exec(text)?.[1] ?? 0);
        };
        const before = await metric();
        answer = { type, body };
        try {
          const message = await call();
          const result = message.result as { isError?: boolean; content: { text: string }[]; _meta?: Record<string, unknown> };
          expect(result.isError).toBe(true);
          expect(result._meta?.['ai.cpz.gateway/error']).toBe('upstream_error');
          expect(result.content[0]!.text).toMatch(says);
          expect(JSON.stringify(message)).not.toContain('sk-secret-123');
        } finally {
          answer = undefined;
        }
        expect(await metric()).toBe(before + 1);
        const logged = JSON.stringify(gateway.logs.records().filter((r) => JSON.stringify(r).match(says)));
        expect(logged).not.toBe('[]');
        expect(JSON.stringify(gateway.logs.records())).not.toContain('sk-secret-123');
        // The upstream is not taken for gone: the next call is answered.
        expect(((await call()).result as { content: { text: string }[] }).content[0]!.text).toBe('fine');
      });
  });
}
