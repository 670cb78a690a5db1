/**
 * `limits.resultBytes` bounds what an HTTP upstream may answer one forwarded request: a tools/call answer
 * past it (a JSON body, or one SSE event) is an isError `upstream_error` naming the key, whatever the
 * upstream sends after it is not read, and the next call on the same upstream is served. An answer under
 * it is relayed whole; the catalogue's own lists are not bound by it. Both eras' forwarding paths over a
 * real loopback socket (2026-07-28 answers JSON, the 2025-11-25 fake an SSE stream); the gateway runs in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { fakeUpstream, startInterceptedUpstream, type InterceptedUpstream } from '../fixtures/fake-upstream.ts';
import { loadConfig } from '../../config/load.ts';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { messagesOf, post, rpc } from '../helpers/raw-mcp.ts';

const CONFORMANCE_CONFIG = new URL('../../config/conformance.yaml', import.meta.url).pathname;
const LIMIT = 65_536;
/** A description long enough that the tools/list page alone is past the limit. */
const longDescription = 'a tool whose description is long. '.repeat(3000);

for (const era of ['modern', 'legacy'] as const) {
  describe(`limits.resultBytes in front of a ${era === 'modern' ? '2026-07-28' : '2025-11-25'} upstream`, () => {
    let upstream: InterceptedUpstream;
    let gateway: InProcessGateway;

    beforeAll(async () => {
      const core = fakeUpstream({
        era,
        tools: [
          {
            definition: {
              name: 'echo',
              description: longDescription,
              inputSchema: { type: 'object', properties: { size: { type: 'number' } } },
              annotations: { readOnlyHint: true },
            } as Tool,
            call: (args) => ({ content: [{ type: 'text', text: 'x'.repeat(Number((args as { size: number }).size)) }] }),
          },
        ],
      });
      upstream = await startInterceptedUpstream(core, () => false);
      const { url } = upstream;
      gateway = inProcessGateway(
        loadConfig({
          path: CONFORMANCE_CONFIG,
          env: {},
          overrides: { listen: { host: '127.0.0.1', port: 0 }, upstreams: [{ url }], log: { level: 'silent' }, limits: { resultBytes: LIMIT } },
        }),
      );
    });
    afterAll(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    const send = async (method: string, params: Record<string, unknown>, id: number) => {
      const { headers, body } = rpc('modern', id, method, params);
      const [message] = await messagesOf(await post(`${gateway.gatewayUrl}/mcp`, body, headers));
      return message!;
    };
    const echo = async (size: number, id: number) =>
      (await send('tools/call', { name: 'echo', arguments: { size } }, id)).result as {
        isError?: boolean;
        content: { text: string }[];
        _meta?: Record<string, unknown>;
      };

    it('lists a catalogue whose page is past the limit (the lists are not bound by it)', async () => {
      const listed = (await send('tools/list', {}, 1)).result as { tools: { name: string; description: string }[] };
      expect(listed.tools.map((t) => t.name)).toEqual(['echo']);
      expect(listed.tools[0]!.description.length).toBeGreaterThan(LIMIT);
    });

    it('relays an answer under the limit whole', async () => {
      const result = await echo(LIMIT / 2, 2);
      expect(result.isError).toBeFalsy();
      expect(result.content[0]!.text).toHaveLength(LIMIT / 2);
    });

    it('answers isError upstream_error naming limits.resultBytes past it, and what the caller can do (ask for less: the tool ran), and serves the next call', async () => {
      const result = await echo(LIMIT * 4, 3);
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toBe(
        `Tool "echo" answered more than ${LIMIT} bytes, more than this gateway passes on (limits.resultBytes): ask it for less (a narrower range, a smaller limit or page, fewer items).`,
      );
      expect(result._meta).toMatchObject({ 'ai.cpz.gateway/error': 'upstream_error' });
      const next = await echo(10, 4);
      expect(next.content[0]!.text).toBe('x'.repeat(10));
    });
  });
}
