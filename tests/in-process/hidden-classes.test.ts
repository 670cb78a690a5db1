/**
 * None of the project's Ajv instances runs its code optimiser (gateway/checks/schema-compiler.ts). The optimiser
 * counts the generated code's variable names (`err12`, `data3`, ...) in objects that start empty, a new first
 * key each, thousands per schema; V8 (Node 20) links at most 1,536 first keys to the empty object's hidden
 * class, and once they were used up every object the gateway built from empty on a request got a class of its
 * own (measured 3 to 53 new classes per forwarded call, `BENCH_MAPS=1 npx tsx bench/profile-call.ts`). Whether
 * V8 runs out depends on when its collector clears the dead ones, so the test watches the cause: every
 * compilation's call of `CodeGen.optimize`, while the modules are evaluated afresh and the reference stack runs
 * in this process as `npm start` runs it (configuration, gateway, upstream and platform schemas), every tool
 * called once. Not covered: the copy of Ajv the MCP SDK bundles (its elicitation schemas), which compiles little.
 */
import { CodeGen } from 'ajv/dist/compile/codegen/index.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { InProcessReferenceStack } from '../helpers/in-process.ts';
import { DEMO_KEYS } from '../helpers/clients.ts';
import { messagesOf, rpc } from '../helpers/raw-mcp.ts';

let stack: InProcessReferenceStack | undefined;
afterAll(async () => {
  await stack?.close();
  vi.restoreAllMocks();
});

describe("Ajv's code optimiser", () => {
  it('runs for no schema compiled in the process: configuration, tools (input and output), platform bodies', async () => {
    const optimize = vi.spyOn(CodeGen.prototype, 'optimize');
    // The configuration's validator is compiled as its module is evaluated: evaluated again here, under the spy.
    vi.resetModules();
    const { loadConfig } = await import('../../config/load.ts');
    const { inProcessReferenceStack } = await import('../helpers/in-process.ts');
    loadConfig({ env: {} });
    stack = await inProcessReferenceStack();
    const post = async (method: string, params: Record<string, unknown>) => {
      const { headers, body } = rpc('modern', 1, method, params);
      const init = { method: 'POST', headers: { ...headers, ...DEMO_KEYS.full }, body: JSON.stringify(body) };
      return (await messagesOf(await stack!.fetch(new Request(stack!.mcpUrl, init))))[0]!;
    };
    const tools = ((await post('tools/list', {})).result as { tools: { name: string }[] }).tools;
    expect(tools.length).toBeGreaterThan(30);
    // Refused arguments compile the schema as well; answered calls compile the output schema.
    for (const tool of tools) await post('tools/call', { name: tool.name, arguments: {} });
    for (const name of ['list_accounts', 'list_connections', 'list_strategies']) await post('tools/call', { name, arguments: { limit: 1 } });
    expect(optimize.mock.calls.length).toBeGreaterThan(tools.length);
    expect(optimize.mock.calls.filter(([passes]) => Number(passes ?? 1) > 0)).toEqual([]);
  });
});
