/**
 * Output checks (issue 3, Output schemas) against a fake upstream built with the v2 SDK: drift fails
 * loudly as an isError naming the tool and the JSON Pointer paths; a state-changing tool's drift says the
 * call may have run (outcome unknown: its upstream answered); error results and conforming results pass
 * untouched; a schema that cannot compile degrades only its own tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectV1, connectV2 } from '../helpers/clients.ts';
import { structuredTool } from '../fixtures/fake-upstream.ts';
import { inProcessStack, routedFetch, type InProcessGateway as Stack } from '../helpers/in-process.ts';
import { LogCapture } from '../helpers/log-capture.ts';

const KEY = { 'x-cpz-key': 'any', 'x-cpz-secret': 'any-secret' };
const text = (t: string) => [{ type: 'text' as const, text: t }];

let stack: Stack;
let client: Client;
const audit = new LogCapture();
/** A state-changing tool whose upstream runs the call and answers out of contract. */
const placed: string[] = [];
const driftOrder = structuredTool('place_deal', () => {
  placed.push('place_deal');
  return { content: text('placed'), structuredContent: { order: { id: 'o1' } } };
});
(driftOrder.definition.annotations as { readOnlyHint?: boolean }).readOnlyHint = false;

beforeAll(async () => {
  stack = await inProcessStack({
    upstream: {
      tools: [
        structuredTool('get_deal', () => ({ content: text('ok'), structuredContent: { data: { id: 'd1', amount: '100' } } })),
        structuredTool('drift_deal', () => ({ content: text('drift'), structuredContent: { data: { amount: 100 } } })),
        structuredTool('bare_deal', () => ({ content: text('no structured content') })),
        structuredTool('failing_deal', () => ({ content: text('platform said no'), isError: true })),
        // A JSON Schema (clients compile it), but one the gateway cannot check: a dialect it has no engine for (a pattern
        // RE2 cannot run is left unchecked alone: lookahead_read). One that is no JSON Schema at all ("type":
        // "not-a-type") is left out of the catalogue (malformed-tool-definition.test.ts).
        structuredTool('broken_schema', () => ({ content: text('unchecked'), structuredContent: { anything: true } }), {
          $schema: 'http://json-schema.org/draft-04/schema#',
          type: 'object',
          properties: { x: { type: 'string' } },
        }),
        structuredTool('draft7_deal', () => ({ content: text('d7'), structuredContent: { deal: { id: 7 } } }), {
          $schema: 'http://json-schema.org/draft-07/schema#',
          definitions: { id: { type: 'string' } },
          type: 'object',
          properties: { deal: { type: 'object', properties: { id: { $ref: '#/definitions/id' } } } },
        }),
        { definition: { name: 'undeclared', inputSchema: { type: 'object' } }, call: () => ({ content: text('x'), structuredContent: { total: 'ten' } }) },
        driftOrder,
        // Patterns from an upstream are untrusted: `^(a+)+$` backtracks for hours at 40 characters on V8's engine.
        structuredTool('backtracking_read', () => ({ content: text('x'), structuredContent: { code: `${'a'.repeat(40)}!` } }), {
          type: 'object',
          properties: { code: { type: 'string', pattern: '^(a+)+$' } },
        }),
        {
          definition: {
            name: 'backtracking_input',
            inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } },
            annotations: { readOnlyHint: true },
          },
          call: () => ({ content: text('ran') }),
        },
        structuredTool('lookahead_read', () => ({ content: text('x'), structuredContent: { code: 'b' } }), {
          type: 'object',
          properties: { code: { type: 'string', pattern: '^(?=a)a$' } },
        }),
      ],
    },
    audit,
    gateway: { upstreams: [{ outputSchemas: { undeclared: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] } } }] },
  });
  client = await connectV2(stack.mcpUrl, KEY);
});
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

type Result = { isError?: boolean; content: { text?: string }[]; structuredContent?: unknown; _meta?: Record<string, unknown> };
/** tools/call without the client's own output validation, to see exactly what the gateway answered. */
const call = (name: string) => client.request({ method: 'tools/call', params: { name, arguments: {} } }) as Promise<Result>;

describe('output schema checks', () => {
  it('passes a conforming result through unchanged', async () => {
    const result = await call('get_deal');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ data: { id: 'd1', amount: '100' } });
  });

  it('turns structuredContent that breaks the outputSchema into an isError naming the tool and the JSON Pointer paths', async () => {
    const result = await call('drift_deal');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]!.text).toContain('Tool "drift_deal"');
    expect(result.content[0]!.text).toContain('/data/amount must be string');
    expect(result.content[0]!.text).toContain('/data/id');
    expect(result._meta?.['ai.cpz.gateway/paths']).toEqual(expect.arrayContaining(['/data/amount', '/data/id']));
  });

  it('says a state-changing tool whose result broke its outputSchema may have run: its upstream answered, the outcome is unknown', async () => {
    const result = await call('place_deal');
    expect(placed).toEqual(['place_deal']);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]!.text).toMatch(/^Tool "place_deal" may have run: upstream \S+ answered the call, but its result does not match/);
    expect(result.content[0]!.text).toContain("(/data must have required property 'data')");
    expect(result.content[0]!.text).toContain('Check its effect before calling it again');
    expect(result._meta).toMatchObject({
      'ai.cpz.gateway/error': 'output_schema_violation',
      'ai.cpz.gateway/outcome': 'unknown',
      'ai.cpz.gateway/paths': ['/data'],
    });
    expect(audit.records().find((line) => line.tool === 'place_deal')).toMatchObject({
      event: 'tool_decision',
      outcome: 'output_schema_violation',
      reason: 'output_schema_violation outcome_unknown',
    });
    // A read's drift did not change anything: no outcome to doubt.
    expect((await call('drift_deal'))._meta?.['ai.cpz.gateway/outcome']).toBeUndefined();
  });

  it('treats missing structuredContent on a tool with an outputSchema as a violation', async () => {
    const result = await call('bare_deal');
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/bare_deal.*structuredContent is missing/);
  });

  it('passes an isError result of a tool with an outputSchema through untouched', async () => {
    const result = await call('failing_deal');
    expect(result).toMatchObject({ isError: true, content: text('platform said no') });
    expect(result._meta?.['ai.cpz.gateway/error']).toBeUndefined();
  });

  it('serves a tool whose schema fails to compile unchecked, logs it once and counts it; other tools keep their checks', async () => {
    const v1 = await connectV1(stack.mcpUrl, KEY);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('broken_schema');
      expect((await call('broken_schema')).structuredContent).toEqual({ anything: true });
      expect((await call('broken_schema')).isError).toBeFalsy();
      expect((await call('drift_deal')).isError).toBe(true);
    } finally {
      await v1.close();
    }
    expect(stack.logs.records('outputSchema failed to compile').filter((r) => r.tool === 'broken_schema')).toHaveLength(1);
    const metrics = await (await routedFetch(`${stack.gatewayUrl}/metrics`)).text();
    expect(metrics).toMatch(/^mcp_output_schema_compile_failures_total\{tool="broken_schema"\} 1$/m);
    expect(metrics).toMatch(/^mcp_output_schema_violations_total\{tool="drift_deal"\} [1-9]/m);
  });

  it('runs schema patterns in linear time: a backtracking pattern neither holds the event loop nor passes a value it refuses', async () => {
    const result = await call('backtracking_read');
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('/code must match pattern "^(a+)+$"');
    // The input side: call_tool checks the arguments against the upstream's inputSchema before sending them.
    const compact = await connectV2(stack.compactUrl, KEY);
    try {
      const refused = (await compact.request({
        method: 'tools/call',
        params: { name: 'call_tool', arguments: { name: 'backtracking_input', arguments: { code: `${'a'.repeat(40)}!` } } },
      })) as Result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toContain('/code must match pattern "^(a+)+$"');
    } finally {
      await compact.close();
    }
    // A pattern RE2 cannot run (lookahead) is left unchecked, said so, and the rest of its schema checked.
    expect((await call('lookahead_read')).structuredContent).toEqual({ code: 'b' });
    expect(
      stack.logs.records('outputSchema has patterns the gateway cannot run; checking the rest of it').find((r) => r.tool === 'lookahead_read')?.err,
    ).toMatch(/^pattern "\^\(\?=a\)a\$" cannot be checked: .*no lookaround or backreferences/);
  });

  it('checks draft-07 schemas with the draft-07 engine ($ref to definitions)', async () => {
    const result = await call('draft7_deal');
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('/deal/id must be string');
  });

  it('checks an outputSchema declared in config for a tool whose upstream declares none, and advertises it', async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === 'undeclared');
    expect(tool?.outputSchema).toMatchObject({ required: ['total'] });
    const result = await call('undeclared');
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('/total must be number');
  });

  it('answers the v1 client the same isError for drift (legacy era)', async () => {
    const v1 = await connectV1(stack.mcpUrl, KEY);
    try {
      const result = (await v1.callTool({ name: 'drift_deal', arguments: {} })) as Result;
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toContain('/data/amount');
    } finally {
      await v1.close();
    }
  });
});
