/**
 * Tool arguments over an input limit (issue 18): the call answers an isError "invalid arguments" result
 * naming the limit, counted as invalid_arguments in mcp_tool_calls_total, and nothing reaches the
 * upstream (it used to be sent, fail there, and be reported as "upstream unreachable"). Direct calls on
 * /mcp and call_tool on /mcp/compact alike, both eras.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../helpers/stack.ts';
import { rpc, messagesOf } from '../../helpers/raw-mcp.ts';

let stack: Stack;
const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

beforeAll(async () => {
  stack = await startStack({
    upstream: {
      tools: [
        { definition: { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } } },
        // Every unknown member one schema error: the work the limit bounds on call_tool and run_code, which check schemas themselves.
        { definition: { name: 'strict', inputSchema: { type: 'object', additionalProperties: false }, annotations: { readOnlyHint: true } } },
      ],
    },
    gateway: { limits: { jsonDepth: 16, objectMembers: 100 }, compact: { codeMode: { enabled: true } } },
  });
});
afterAll(async () => {
  await stack?.close();
});

async function call(path: string, era: 'modern' | 'legacy', name: string, args: Record<string, unknown>) {
  const { headers, body } = rpc(era, 1, 'tools/call', { name, arguments: args });
  const response = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return (await messagesOf(response)).at(-1)!.result as { isError?: boolean; content: { text: string }[]; _meta?: Record<string, unknown> };
}

const invalidCount = async () => {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('mcp_tool_calls_total') && l.includes('outcome="invalid_arguments"') && l.includes('tool="echo"'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
};

describe.each(['modern', 'legacy'] as const)('tool arguments over limits.jsonDepth, %s caller', (era) => {
  it('answers isError invalid_arguments on a direct call and through call_tool, sending nothing', async () => {
    const sent = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = { sent: sent(), counted: await invalidCount() };
    const direct = await call('/mcp', era, 'echo', { deep: nested(40) });
    expect(direct.isError).toBe(true);
    expect(direct._meta?.['ai.cpz.gateway/error']).toBe('invalid_arguments');
    expect(direct.content[0]!.text).toMatch(/^Invalid arguments for echo: JSON nesting deeper than limits\.jsonDepth \(16\) at \/arguments\/deep\/a/);
    const dispatched = await call('/mcp/compact', era, 'call_tool', { name: 'echo', arguments: { deep: nested(40) } });
    expect(dispatched.isError).toBe(true);
    expect(dispatched.content[0]!.text).toContain('limits.jsonDepth');
    expect(sent()).toBe(before.sent);
    expect(await invalidCount()).toBe(before.counted + 2);
    // Within the limit the same call goes through.
    expect((await call('/mcp', era, 'echo', { deep: nested(8) })).isError).toBeFalsy();
  });
});

describe.each(['modern', 'legacy'] as const)('tool arguments with an object over limits.objectMembers, %s caller', (era) => {
  // 120,000 unknown arguments in a 1 MiB body cost 350-430 ms of the event loop (one schema error each) before this limit.
  it('answers isError invalid_arguments naming the object, directly and through call_tool, sending nothing', async () => {
    const sent = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = sent();
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    const direct = await call('/mcp', era, 'echo', { many });
    expect(direct.isError).toBe(true);
    expect(direct.content[0]!.text).toBe('Invalid arguments for echo: an object with more members than limits.objectMembers (100) at /arguments/many.');
    const dispatched = await call('/mcp/compact', era, 'call_tool', { name: 'echo', arguments: many });
    expect(dispatched.isError).toBe(true);
    expect(dispatched.content[0]!.text).toContain('an object with more members than limits.objectMembers (100) at /arguments/arguments');
    expect(sent()).toBe(before);
    delete many.k100;
    expect((await call('/mcp', era, 'echo', { many })).isError).toBeFalsy();
  });

  it('refuses the arguments object itself with too many members at the edge, and inner ones before any schema check reads them', async () => {
    const sent = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = sent();
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    for (const name of ['strict', 'call_tool', 'search_tools']) {
      const { headers, body } = rpc(era, 1, 'tools/call', { name, arguments: { query: 'x', ...many } });
      const response = await fetch(`${stack.gatewayUrl}/mcp/compact`, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(response.status, name).toBe(400);
      expect(((await response.json()) as { error: { code: number; message: string } }).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('an object with more members than limits.objectMembers (100) at /params/arguments'),
      });
    }
    const dispatched = await call('/mcp/compact', era, 'call_tool', { name: 'strict', arguments: many });
    expect(dispatched.content[0]!.text).toBe(
      'Invalid arguments for strict: an object with more members than limits.objectMembers (100) at /arguments/arguments.',
    );
    const script = 'const o = {}; for (let i = 0; i < 101; i++) o[`k${i}`] = i; return await tools.strict(o);';
    const ran = await call('/mcp/compact', era, 'run_code', { code: script });
    expect(ran.isError).toBe(true);
    expect(ran.content[0]!.text).toContain('an object with more members than limits.objectMembers (100)');
    expect(sent()).toBe(before);
  });
});

describe.each(['modern', 'legacy'] as const)('tool arguments nested deeper than any step could handle, %s caller', (era) => {
  // 4,500 levels fit in a 9 KB body and overflowed the recursive JSON.stringify behind the 2025-era edge (a 500).
  it('are refused at the edge: 400 with -32602 naming the configured limit and the path, sending nothing', async () => {
    const sent = () => stack.fake!.received.filter((r) => r.method === 'tools/call').length;
    const before = sent();
    // Written as text: JSON.stringify itself cannot write it.
    const deep = `${'{"a":'.repeat(4500)}"leaf"${'}'.repeat(4500)}`;
    for (const [path, name, args, at] of [
      ['/mcp', 'echo', { deep: 'DEEP' }, '/params/arguments/deep/a'],
      ['/mcp/compact', 'call_tool', { name: 'echo', arguments: { deep: 'DEEP' } }, '/params/arguments/arguments/deep'],
    ] as const) {
      const { headers, body } = rpc(era, 1, 'tools/call', { name, arguments: args });
      const text = JSON.stringify(body).replace('"DEEP"', deep);
      const response = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers, body: text });
      expect(response.status, path).toBe(400);
      const { error } = (await response.json()) as { error: { code: number; message: string } };
      expect(error.code).toBe(-32602);
      expect(error.message).toContain('limits.jsonDepth (16)');
      expect(error.message).toContain(at);
    }
    expect(sent()).toBe(before);
    // At the ceiling's edge (arguments within 1000 levels) the call answers as any over-limit call does.
    expect((await call('/mcp', era, 'echo', { deep: nested(990) })).isError).toBe(true);
  });
});

describe('a request id over limits.stringLength', () => {
  it('is refused 400 -32600 naming /id, and not echoed back (the answer carries id null)', async () => {
    const { headers, body } = rpc('modern', 1, 'tools/list', {});
    const id = 'i'.repeat(600_000);
    const response = await fetch(`${stack.gatewayUrl}/mcp`, { method: 'POST', headers, body: JSON.stringify({ ...body, id }) });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text.length).toBeLessThan(2_000);
    expect(JSON.parse(text)).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('limits.stringLength (524288) at /id') } });
    // Refused for something else first (jsonrpc 1.0; params over a limit before the id; a __proto__ key and an
    // inexact number, refused before the request is classified): not echoed either.
    for (const other of [
      `{"jsonrpc":"1.0","id":"${id}","method":"tools/list"}`,
      `{"jsonrpc":"2.0","id":"${id}","method":"tools/list","params":{"__proto__":{}}}`,
      `{"jsonrpc":"2.0","id":"${id}","method":"tools/list","params":{"n":1.0000000000000001}}`,
      `{"jsonrpc":"2.0","params":{"deep":${'['.repeat(100)}${']'.repeat(100)}},"id":"${id}","method":"tools/list"}`,
    ]) {
      const refused = await fetch(`${stack.gatewayUrl}/mcp`, { method: 'POST', headers, body: other });
      expect(refused.status).toBe(400);
      expect((await refused.text()).length).toBeLessThan(2_000);
    }
  });
});
