/**
 * A live reload's `limits` reach the upstreams whose connection it keeps: `limits.resultBytes` lowered
 * in the new file bounds the next answers of an unchanged upstream (plan decision `keep`), as it would a
 * new one's.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { loadConfig } from '../../../config/load.ts';
import { startGateway } from '../../../gateway/gateway.ts';
import { startFakeUpstream } from '../../fixtures/fake-upstream.ts';
import { connectV2 } from '../../helpers/clients.ts';

const echo: Tool = { name: 'echo', inputSchema: { type: 'object', properties: { size: { type: 'number' } } }, annotations: { readOnlyHint: true } };

describe('limits.resultBytes changed by a live reload', () => {
  it('bounds the next answers of an upstream whose connection the reload kept', async () => {
    const upstream = await startFakeUpstream({
      tools: [{ definition: echo, call: (args) => ({ content: [{ type: 'text', text: 'x'.repeat(Number((args as { size: number }).size)) }] }) }],
    });
    const configWith = (resultBytes: number) =>
      loadConfig({
        path: 'config/conformance.yaml',
        env: {},
        overrides: { listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, limits: { resultBytes }, upstreams: [{ url: upstream.url }] },
      });
    const gateway = await startGateway(configWith(4_194_304));
    const call = async () => {
      const client = await connectV2(`${gateway.url}/mcp`, { 'x-cpz-key': 'k', 'x-cpz-secret': 's' });
      try {
        return (await client.callTool({ name: 'echo', arguments: { size: 100_000 } })) as { isError?: boolean; content: { text?: string }[] };
      } finally {
        await client.close();
      }
    };
    try {
      expect((await call()).content[0]!.text).toHaveLength(100_000);
      const plan = await gateway.reload(configWith(65_536));
      expect(plan.upstreams).toEqual([{ name: 'fixture', decision: 'keep' }]);
      const bounded = await call();
      expect(bounded.isError).toBe(true);
      expect(bounded.content[0]!.text).toBe(
        'Tool "echo" answered more than 65536 bytes, more than this gateway passes on (limits.resultBytes): ask it for less (a narrower range, a smaller limit or page, fewer items).',
      );
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
