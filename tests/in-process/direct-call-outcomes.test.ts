/**
 * A direct tools/call is forwarded unchecked; when the upstream answers isError, the gateway names the outcome by
 * what it knows (surfaces/tool-call.ts `directFailureOutcome`): arguments that break the tool's inputSchema are
 * `invalid_arguments`, else `is_error`. `mcp_tool_calls_total` says what the audit line says, audit on or off
 * (SRE try-out: audited invalid_arguments, counted is_error; dashboards on the documented label saw none).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { inProcessGateway, type InProcessGateway } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

const tools = [
  {
    definition: {
      name: 'get_bars',
      description: 'price bars',
      inputSchema: { type: 'object', properties: { limit: { type: 'integer' } }, required: ['limit'] },
    } as Tool,
    call: () => ({ isError: true, content: [{ type: 'text' as const, text: 'invalid arguments' }] }),
  },
];

let gateway: InProcessGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function callCounted(args: Record<string, unknown>): Promise<string> {
  const { headers, body } = rpc('modern', 1, 'tools/call', { name: 'get_bars', arguments: args });
  const [answer] = await messagesOf(await gateway!.fetch(new Request(gateway!.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body) })));
  expect(answer?.result).toMatchObject({ isError: true });
  const text = await (await gateway!.fetch(new Request(`${gateway!.gatewayUrl}/metrics`))).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('mcp_tool_calls_total{') && line.includes('tool="get_bars"'))
    .join('\n');
}

describe('a direct call answered isError', () => {
  it('is counted invalid_arguments when its arguments break the inputSchema, else is_error (audit off)', async () => {
    gateway = inProcessGateway({ anonymous: true }, { fake: { tools } });
    expect(await callCounted({ limit: 'x' })).toBe('mcp_tool_calls_total{endpoint="full",tool="get_bars",via="direct",outcome="invalid_arguments"} 1');
    expect(await callCounted({ limit: 1 })).toContain('outcome="is_error"} 1');
  });

  it('is counted as its audit line says (audit on)', async () => {
    const audit = new LogCapture();
    gateway = inProcessGateway({ anonymous: true, audit: { digestKey: 'k'.repeat(32) } }, { fake: { tools }, audit });
    expect(await callCounted({ limit: 'x' })).toBe('mcp_tool_calls_total{endpoint="full",tool="get_bars",via="direct",outcome="invalid_arguments"} 1');
    await expect
      .poll(() =>
        audit
          .records()
          .filter((r) => r.event === 'tool_decision')
          .map((r) => r.outcome),
      )
      .toEqual(['invalid_arguments']);
  });
});
