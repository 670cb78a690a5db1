/**
 * A state-changing tools/call whose request reached the upstream and got no answer (the connection cut
 * after the request was read, no answer before the timeout, a 502) may have run there: the isError answer
 * says so ("may have run", `_meta["ai.cpz.gateway/outcome"]: "unknown"`, audit reason `... outcome_unknown`)
 * instead of "could not be executed", which would invite a second order. A read-only tool failing the same
 * way, and a write that never left the gateway (the upstream refusing connections), still say "could not be
 * executed". Both eras' forwarding paths, over a real loopback socket; the gateway runs in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { fakeUpstream, startInterceptedUpstream, type InterceptedUpstream } from '../fixtures/fake-upstream.ts';
import { loadConfig } from '../../config/load.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc } from '../helpers/raw-mcp.ts';
import { LogCapture } from '../helpers/log-capture.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;
const schema = { type: 'object', properties: {} } as Tool['inputSchema'];
const tools = [
  {
    definition: { name: 'place', inputSchema: schema, annotations: { readOnlyHint: false } } as Tool,
    call: () => ({ content: [{ type: 'text' as const, text: 'placed' }] }),
  },
  {
    definition: { name: 'quote', inputSchema: schema, annotations: { readOnlyHint: true } } as Tool,
    call: () => ({ content: [{ type: 'text' as const, text: 'quoted' }] }),
  },
];

/** What the server in front of the fake upstream does to a tools/call it has read. */
type Misbehaviour = 'cut' | 'stall' | 'bad-gateway';

for (const era of ['modern', 'legacy'] as const) {
  describe(`a ${era === 'modern' ? '2026-07-28' : '2025-11-25'} upstream that takes a tools/call and gives no answer`, () => {
    const audit = new LogCapture();
    let upstream: InterceptedUpstream;
    let gateway: InProcessGateway;
    let misbehaviour: Misbehaviour | undefined;
    /** The tools/call requests the upstream's server read, by tool name. */
    const received: string[] = [];

    beforeAll(async () => {
      upstream = await startInterceptedUpstream(fakeUpstream({ era, tools }), (body, req, res) => {
        const call = /"method":"tools\/call".*?"name":"(\w+)"/.exec(body)?.[1];
        if (call) received.push(call);
        if (!call || misbehaviour === undefined) return false;
        if (misbehaviour === 'cut') req.socket.destroy();
        if (misbehaviour === 'bad-gateway') res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        // 'stall': never answered.
        return true;
      });
      const { url } = upstream;
      gateway = inProcessGateway(
        loadConfig({
          path: CONFORMANCE_CONFIG,
          env: {},
          overrides: {
            listen: { host: '127.0.0.1', port: 0 },
            upstreams: [{ url, timeoutMs: 400 }],
            log: { level: 'silent' },
          },
        }),
        { audit },
      );
    });
    afterAll(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    const call = async (name: string, id: number) => {
      const { headers, body } = rpc('modern', id, 'tools/call', { name, arguments: {} });
      const [message] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, { ...headers, 'x-request-id': `outcome-${era}-${id}` }));
      return message!.result as { isError?: boolean; content: { text: string }[]; _meta?: Record<string, unknown> };
    };
    const auditLine = (id: number) => audit.records().find((line) => line.requestId === `outcome-${era}-${id}`);

    it('answers both tools normally first', async () => {
      misbehaviour = undefined;
      expect((await call('place', 1)).content[0]!.text).toBe('placed');
      expect((await call('quote', 2)).content[0]!.text).toBe('quoted');
    });

    const cases: [Misbehaviour, RegExp, string][] = [
      ['cut', /then the connection closed before the answer/, 'upstream_unavailable'],
      ['stall', /then it did not answer in time/, 'upstream_timeout'],
      ['bad-gateway', /then its answer said nothing of the outcome \(upstream fixture failed with HTTP 502\)/, 'upstream_error'],
    ];
    for (const [index, [how, says, kind]] of cases.entries()) {
      it(`a write the upstream read and then ${how === 'cut' ? 'cut the connection on' : how === 'stall' ? 'never answered' : 'answered 502 to'}: "may have run", outcome unknown`, async () => {
        const id = 10 + index * 2;
        // A cut connection marks the upstream lost until a probe finds it again: wait until it answers.
        misbehaviour = undefined;
        for (let tries = 0; (await call('quote', 100 + id)).isError && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
        misbehaviour = how;
        const before = received.length;
        const result = await call('place', id);
        expect(received.slice(before)).toEqual(['place']);
        expect(result.isError).toBe(true);
        expect(result.content[0]!.text).toMatch(/^Tool "place" may have run: the call was sent to upstream fixture, then /);
        expect(result.content[0]!.text).toMatch(says);
        expect(result.content[0]!.text).toContain('Check its effect before calling it again');
        expect(result._meta).toMatchObject({ 'ai.cpz.gateway/error': kind, 'ai.cpz.gateway/outcome': 'unknown' });
        // A read the same upstream fails the same way: nothing to double, so it could not be executed.
        const read = await call('quote', id + 1);
        expect(read.content[0]!.text).toMatch(/^Tool "quote" could not be executed: /);
        expect(read._meta?.['ai.cpz.gateway/outcome']).toBeUndefined();
        expect(auditLine(id)).toMatchObject({ event: 'tool_decision', tool: 'place', outcome: 'error', reason: `${kind} outcome_unknown` });
        expect(auditLine(id + 1)).toMatchObject({ tool: 'quote', reason: kind });
      });
    }

    it('a write that never reached the upstream (connections refused) could not be executed', async () => {
      misbehaviour = undefined;
      upstream.server.closeAllConnections();
      await new Promise((resolve) => upstream.server.close(resolve));
      // Until the gateway's idle keep-alive sockets see the close, a write could still go out on one (and be
      // reset after it was written: that one may have run, as far as the gateway can tell).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const before = received.length;
      const result = await call('place', 30);
      expect(received.length).toBe(before);
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text, result.content[0]!.text).toMatch(/^Tool "place" could not be executed: /);
      expect(result._meta?.['ai.cpz.gateway/outcome']).toBeUndefined();
    });
  });
}
