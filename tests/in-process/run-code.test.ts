/**
 * run_code on /mcp/compact (issue 35), in process through the real handler with both SDK clients on both
 * eras: a script chaining read-only tools answers with only what it returns; every inner call goes
 * through call_tool's dispatch (writes, out-of-scope tools and wrong arguments refused with 0 upstream
 * calls, budgets spent per call, audited under the run id); every attack of the issue ends in a clear
 * refusal or a limit naming its key; a cancellation stops the script and the call in flight; the
 * gateway answers health in under a second while a runaway script is being stopped.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/server';
import type { FakeTool } from '../fixtures/fake-upstream.ts';
import { startScopeEndpoint, type ScopeEndpoint } from '../fixtures/scope-endpoint.ts';
import { ERAS, withClient, type ToolResult } from '../helpers/era-client.ts';
import { loadConfig } from '../../config/load.ts';
import { inProcessGateway, routedFetch, type InProcessGateway } from '../helpers/in-process.ts';
import { eventually, waitFor } from '../helpers/wait.ts';

const READER = { authorization: 'Bearer reader' };
const OTHER = { authorization: 'Bearer other' };
const AUDIT_FILE = `.tmp/audit/run-code-${process.pid}.log`;
const spans = new InMemorySpanExporter();

const readTool = (
  name: string,
  properties: Record<string, unknown>,
  outputSchema: Record<string, unknown>,
  call: FakeTool['call'],
  extra: Partial<Tool> = {},
): FakeTool => ({
  definition: {
    name,
    description: `${name} (test tool). Reads only.`,
    inputSchema: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
    outputSchema,
    annotations: { readOnlyHint: true },
    ...extra,
  } as Tool,
  call,
});
const structured = (value: Record<string, unknown>) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }], structuredContent: value });
const BALANCES: Record<string, number> = { a1: 100, a2: 250 };
let slowAborted = 0;

const tools: FakeTool[] = [
  readTool(
    'list_accounts',
    {},
    {
      type: 'object',
      properties: { accounts: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
      required: ['accounts'],
    },
    () => structured({ accounts: [{ id: 'a1' }, { id: 'a2' }] }),
  ),
  readTool(
    'get_balance',
    { account: { type: 'string' } },
    { type: 'object', properties: { account: { type: 'string' }, cash: { type: 'number' } }, required: ['account', 'cash'] },
    (args) => structured({ account: String(args.account), cash: BALANCES[String(args.account)] ?? 0 }),
  ),
  readTool(
    'get_positions',
    { account: { type: 'string' } },
    { type: 'object', properties: { positions: { type: 'array', items: { type: 'object' } } }, required: ['positions'] },
    (args) => structured({ positions: args.account === 'a2' ? [{ symbol: 'ACME', qty: 3 }] : [] }),
  ),
  readTool(
    'get_quote',
    { symbol: { type: 'string' } },
    { type: 'object', properties: { symbol: { type: 'string' }, price: { type: 'number' } }, required: ['symbol', 'price'] },
    (args) => structured({ symbol: String(args.symbol), price: 10 }),
  ),
  readTool('secret_report', {}, { type: 'object' }, () => structured({ secret: true }), { _meta: { 'ai.cpz/tool': { requiredScopes: ['reports:read'] } } }),
  readTool('slow_read', {}, { type: 'object' }, async (_args, context) => {
    const signal = context.mcpReq.signal;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20_000);
      signal.addEventListener('abort', () => (clearTimeout(timer), slowAborted++, resolve()), { once: true });
    });
    return structured({ late: true });
  }),
  { definition: { name: 'place_order', description: 'Places an order', inputSchema: { type: 'object' } } as Tool, call: () => structured({ placed: true }) },
];

const SCRIPT_4_STEPS = `
  const { accounts } = await tools.list_accounts();
  let total = 0;
  for (const { id } of accounts) total += (await tools.get_balance({ account: id })).cash;
  const { positions } = await tools.get_positions({ account: 'a2' });
  return { total, symbols: positions.map((p) => p.symbol) };
`;

/** A gateway in code mode over `tools`, auditing to `auditFile` (emptied first), its spans to `exporter` (closed with it). */
function codeModeGateway(auditFile: string, exporter: InMemorySpanExporter): InProcessGateway {
  mkdirSync('.tmp/audit', { recursive: true });
  rmSync(auditFile, { force: true });
  return inProcessGateway(
    {
      scopes: { endpoint: endpoint.url },
      upstreams: [{ anchors: ['list_accounts'] }],
      compact: { codeMode: { enabled: true, limits: { instructions: 2_000, wallTimeMs: 8_000, memoryBytes: 8 << 20, outputBytes: 4096, toolCalls: 6 } } },
      audit: { destination: auditFile, digestKey: 'run-code-audit-key-0123456' },
    },
    { fake: { tools }, spans: exporter },
  );
}

let endpoint: ScopeEndpoint;
let gateway: InProcessGateway;
let compact: URL;
beforeAll(async () => {
  endpoint = await startScopeEndpoint({ reader: ['accounts:read'], other: ['accounts:read'] });
  gateway = codeModeGateway(AUDIT_FILE, spans);
  compact = gateway.compactUrl;
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

const slowCalls = () => gateway.fake!.received.filter((r) => r.method === 'tools/call' && (r.params as { name?: string })?.name === 'slow_read').length;
const upstreamCalls = () => gateway.fake!.received.filter((r) => r.method === 'tools/call').length;
const text = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');
const run = (era: (typeof ERAS)[number], code: string, headers = READER) => withClient(era, compact, headers, (c) => c.callTool('run_code', { code }));

describe.each(ERAS)('run_code (%s era)', (era) => {
  it('is listed with the TypeScript declarations of the unlisted tools a script may call, none that changes state or is out of scope', async () => {
    const listed = await withClient(era, compact, READER, (c) => c.listTools());
    const runCode = listed.find((t) => t.name === 'run_code')!;
    expect(runCode.annotations?.readOnlyHint).toBe(true);
    expect(runCode.description).toContain('declare const tools: {');
    expect(runCode.description).toContain('get_balance(args: { account: string }): Promise<{ account: string; cash: number }>;');
    // The advertised read anchor (list_accounts) is callable but not declared again: its schemas are in the same listing.
    expect(runCode.description).toContain('The read-only tools listed here are callable too');
    expect(listed.map((t) => t.name)).toContain('list_accounts');
    expect(runCode.description).not.toMatch(/list_accounts\(/u);
    expect(runCode.description).not.toMatch(/place_order|secret_report/u);
  });

  it('chains four read-only calls in one run and answers only what the script returns', async () => {
    const before = upstreamCalls();
    const result = await run(era, `console.log('start');${SCRIPT_4_STEPS}`);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ result: { total: 350, symbols: ['ACME'] }, logs: ['start'], calls: 4 });
    expect(upstreamCalls()).toBe(before + 4);
    expect(result._meta?.['ai.cpz.gateway/runId']).toMatch(/^[0-9a-f-]{36}$/u);
  });

  it('refuses a write, an out-of-scope tool and wrong arguments inside the script, with 0 upstream calls; the script reads why', async () => {
    const before = upstreamCalls();
    const result = await run(
      era,
      `const out = [];
       for (const [name, args] of [['place_order', {}], ['secret_report', {}], ['get_balance', { acount: 'a1' }], ['no_such_tool', {}]]) {
         try { await tools[name](args); out.push('ran ' + name); } catch (e) { out.push(e.message); }
       }
       return out;`,
    );
    expect(result.isError).toBeFalsy();
    const [write, scope, args, unknown] = result.structuredContent!.result as string[];
    expect(write).toContain('place_order changes state, so run_code will not run it; call it directly');
    expect(scope).toContain('Unknown tool: secret_report');
    expect(args).toContain('Invalid arguments for get_balance');
    expect(unknown).toContain('Unknown tool: no_such_tool');
    expect(upstreamCalls()).toBe(before);
  });

  it("gives a caught ToolError the gateway's error kind, so a script branches on it without parsing the message", async () => {
    const result = await run(
      era,
      `const kinds = [];
       for (const [name, args] of [['place_order', {}], ['get_balance', { acount: 'a1' }], ['no_such_tool', {}]]) {
         try { await tools[name](args); kinds.push('ran'); } catch (e) { kinds.push(e.name + ' ' + e.kind); }
       }
       return kinds;`,
    );
    expect(result.structuredContent!.result).toEqual(['ToolError call_directly', 'ToolError invalid_arguments', 'ToolError unknown_tool']);
  });

  it("refuses the surface's own tools inside the script, saying what to do instead; call_tool refuses run_code as advertised", async () => {
    const result = await run(
      era,
      `const out = [];
       for (const name of ['search_tools', 'call_tool', 'run_code']) {
         try { await tools[name]({}); out.push('ran ' + name); } catch (e) { out.push(e.message); }
       }
       return out;`,
    );
    const [search, call, code] = result.structuredContent!.result as string[];
    expect(search).toContain('search_tools cannot be called from run_code: call search_tools before writing the script, then call the tools by name in it');
    expect(call).toContain('call_tool cannot be called from run_code: call the tools by name in it (await tools.<name>(arguments))');
    expect(code).toContain('run_code cannot be called from run_code');
    const viaCallTool = await withClient(era, compact, READER, (c) => c.callTool('call_tool', { name: 'run_code', arguments: { code: 'return 1' } }));
    expect(text(viaCallTool)).toBe('run_code is advertised: call it directly.');
  });

  it('answers a returned function or symbol as a script error, not as null (the call forgotten)', async () => {
    for (const [code, kind] of [
      ['return tools.list_accounts;', 'function'],
      ['return Symbol("x");', 'symbol'],
    ]) {
      const result = await run(era, code!);
      expect(result.isError, text(result)).toBe(true);
      expect(result._meta).toMatchObject({ 'ai.cpz.gateway/error': 'script_error' });
      expect(text(result)).toContain(`TypeError: the script returned a ${kind}, which has no JSON form`);
    }
    // Returning nothing stays a result: null.
    expect((await run(era, 'const x = 1;')).isError).toBeFalsy();
  });

  it('answers a script error with its line and column', async () => {
    const result = await run(era, 'const a = 1;\nconst b = a + 1;\n  undefinedThing.x();');
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ 'ai.cpz.gateway/error': 'script_error', 'ai.cpz.gateway/line': 3, 'ai.cpz.gateway/column': 3 });
    expect(text(result)).toMatch(/^Script error at line 3, column 3: ReferenceError: .*undefinedThing/u);
  });
});

describe('run_code attacks (modern era unless said)', () => {
  const limit = async (code: string, key: string) => {
    const before = upstreamCalls();
    const result = await run('modern', code);
    expect(result.isError).toBe(true);
    expect(result._meta?.['ai.cpz.gateway/limit'], text(result)).toBe(key);
    expect(text(result)).toContain(`limit compact.codeMode.limits.${key}`);
    expect(upstreamCalls()).toBe(before);
  };

  it('stops an infinite loop (instructions), a memory bomb (memoryBytes), a huge output (outputBytes) and too many calls (toolCalls)', async () => {
    await limit('while (true) {}', 'instructions');
    await limit('const a = []; for (;;) a.push({ a: [1, 2, 3] });', 'memoryBytes');
    await limit('return "x".repeat(5000);', 'outputBytes');
    await limit('for (;;) console.log("spam");', 'outputBytes');
    const before = upstreamCalls();
    const result = await run('modern', 'for (let i = 0; i < 10; i++) await tools.get_quote({ symbol: "A" });');
    expect(result._meta?.['ai.cpz.gateway/limit']).toBe('toolCalls');
    expect(upstreamCalls()).toBe(before + 6);
  });

  it('stops an endless .then chain on the limit it breaks, never as a promise nothing can settle', async () => {
    // Each link stays pending on the next: memory runs out long before 2,000,000 jobs (20,000 instructions).
    await limit('const next = () => Promise.resolve().then(next); next(); await new Promise(() => {});', 'memoryBytes');
    await limit('const next = () => Promise.resolve().then(next); await next();', 'memoryBytes');
    // Links that let go of each other only spend jobs, like an await loop.
    await limit('const loop = () => { Promise.resolve().then(loop); }; loop(); await new Promise(() => {});', 'instructions');
    await limit('for (;;) await null;', 'instructions');
    // What nothing can settle is still said so.
    const stuck = await run('modern', 'await new Promise(() => {});');
    expect(text(stuck)).toContain('awaits a promise nothing can settle');
  });

  it('answers {result, logs, calls} as its text whether or not the script logged (one shape; 2025-03-26 reads only the text)', async () => {
    const quiet = await run('modern', 'return 5;');
    expect(JSON.parse((quiet.content as { text: string }[])[0]!.text)).toEqual({ result: 5, logs: [], calls: 0 });
    const said = await run('modern', 'console.log("hi"); return null;');
    expect(JSON.parse((said.content as { text: string }[])[0]!.text)).toEqual({ result: null, logs: ['hi'], calls: 0 });
  });

  it("shows a failed run's last 20 console lines, not all of them, and says how many there were", async () => {
    const failed = await run('modern', 'for (let i = 0; i < 300; i++) console.log("line " + i); throw new Error("gave up");');
    expect(failed.isError).toBe(true);
    const said = text(failed);
    expect(said).toContain('Script error');
    expect(said).toContain('console (the last 20 of 300 lines):\nline 280\n');
    expect(said).toMatch(/line 299$/);
    expect(said).not.toContain('line 279\n');
    // Over outputBytes: the limit's answer is as short.
    const flooded = await run('modern', 'for (let i = 0; i < 20000; i++) console.log("line " + i); return 1;');
    expect(text(flooded)).toContain('compact.codeMode.limits.outputBytes');
    expect(text(flooded).length).toBeLessThan(3000);
  });

  it('logs a string with a NUL inside whole, the NUL escaped as JSON escapes it (it was cut there)', async () => {
    const result = await run('modern', 'console.log("before\\u0000after", "x\\u0000", { k: "a\\u0000b" }); console.warn("c\\u0000d"); return 1;');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ logs: ['before\u0000after x\u0000 {"k":"a\\u0000b"}', 'warn: c\u0000d'] });
    expect((result.content as { text: string }[])[0]!.text).toContain('"logs":["before\\u0000after x\\u0000');
  });

  it('refuses a tool name with a NUL inside as unknown, as call_tool does, never the name before the NUL', async () => {
    const before = upstreamCalls();
    const result = await run(
      'modern',
      `const out = [];
       for (const name of ['get_quote\\u0000list_accounts', 'get_quote\\u0000']) {
         try { await tools[name]({ symbol: 'A' }); out.push('ran'); } catch (e) { out.push(e.message); }
       }
       return out;`,
    );
    const [inside, after] = result.structuredContent!.result as string[];
    expect(inside).toMatch(/^tools\.get_quote\\u0000list_accounts: Unknown tool: get_quote\\u0000list_accounts\./);
    expect(after).toMatch(/^tools\.get_quote\\u0000: Unknown tool: get_quote\\u0000\./);
    const direct = await withClient('modern', compact, READER, (c) => c.callTool('call_tool', { name: 'get_quote\u0000', arguments: { symbol: 'A' } }));
    expect(text(direct)).toMatch(/^Unknown tool: get_quote\u0000\./);
    expect(upstreamCalls()).toBe(before);
  });

  it('gives a script no host: no process, require, timers or imports, Function tricks reach QuickJS only', async () => {
    const before = upstreamCalls();
    const result = await run(
      'modern',
      `const g = Function('return this')();
       const viaCtor = tools.constructor.constructor('return globalThis')();
       const viaProto = (async () => {}).constructor('return this')();
       let imported = 'no';
       try { await import('node:fs'); imported = 'yes'; } catch (e) { imported = e.name; }
       return [typeof process, typeof require, typeof setTimeout, typeof g.process, typeof viaCtor.process, typeof viaProto, imported,
               Object.getOwnPropertyNames(g).filter((n) => !/^[A-Z]/.test(n)).sort()];`,
    );
    expect(result.isError).toBeFalsy();
    const [proc, req, timer, gProc, ctorProc, , imported, globals] = result.structuredContent!.result as unknown[];
    expect([proc, req, timer, gProc, ctorProc]).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
    expect(imported).not.toBe('yes');
    // Lower-case globals only: the language's own functions, console and tools.
    expect(globals).toEqual(expect.arrayContaining(['console', 'tools']));
    expect(
      (globals as string[]).filter(
        (n) =>
          ![
            'console',
            'tools',
            'globalThis',
            'undefined',
            'decodeURI',
            'decodeURIComponent',
            'encodeURI',
            'encodeURIComponent',
            'escape',
            'eval',
            'isFinite',
            'isNaN',
            'parseFloat',
            'parseInt',
            'unescape',
          ].includes(n),
      ),
    ).toEqual([]);
    expect(upstreamCalls()).toBe(before);
  });

  it('shares nothing between runs: a polluted prototype and a global are gone in the next run, and the host never sees them', async () => {
    const before = upstreamCalls();
    const first = await run(
      'modern',
      'Object.prototype.polluted = "yes"; globalThis.leftover = 1; Array.prototype.map = () => "hijacked"; return ({}).polluted;',
    );
    expect(first.structuredContent?.result).toBe('yes');
    const second = await run('modern', 'return [({}).polluted ?? null, typeof leftover, [1].map((x) => x + 1)];');
    expect(second.structuredContent?.result).toEqual([null, 'undefined', [2]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(upstreamCalls()).toBe(before);
  });

  it('cannot smuggle arguments past the schema through a polluted prototype or a __proto__ key: refused, 0 upstream calls', async () => {
    const before = upstreamCalls();
    const result = await run(
      'modern',
      `Object.prototype.account = 'a2';
       const out = [];
       for (const args of [{}, JSON.parse('{"__proto__": {"account": "a2"}}'), JSON.parse('{"account": "a1", "__proto__": {"admin": true}}')]) {
         try { await tools.get_balance(args); out.push('ran'); } catch (e) { out.push(e.message); }
       }
       return out;`,
    );
    const answers = result.structuredContent?.result as string[];
    expect(answers).toHaveLength(3);
    for (const answer of answers) expect(answer).toContain('Invalid arguments for get_balance');
    expect(upstreamCalls()).toBe(before);
    expect(({} as Record<string, unknown>).account).toBeUndefined();
  });

  it('cannot replace tools or reach the host function behind it', async () => {
    const before = upstreamCalls();
    const result = await run(
      'modern',
      `let replaced = 'no'; try { tools = {}; } catch (e) { replaced = e.name; }
       let set = 'no'; try { tools.get_quote = 1; set = typeof tools.get_quote; } catch (e) { set = e.name; }
       return [replaced, set, typeof call, typeof tools.get_quote];`,
    );
    expect(result.structuredContent?.result).toEqual(['TypeError', 'TypeError', 'undefined', 'function']);
    expect(upstreamCalls()).toBe(before);
  });

  it("answers through the language's own JSON whatever the script put in its place: its tools and its return value work", async () => {
    // A replaced JSON.stringify answering "not json{" made the host's parse of the return value throw: -32603 and an error-level log.
    const result = await run(
      'modern',
      'JSON.stringify = () => "not json{"; JSON.parse = () => 0; const { accounts } = await tools.list_accounts({}); return accounts.length;',
    );
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ result: 2, calls: 1 });
  });

  it('answers a returned value nested deeper than an answer carries as a script error naming the nesting, counted as one', async () => {
    const before = await codeRuns('script_error');
    const result = await run('modern', 'let o = []; let c = o; for (let i = 0; i < 1100; i++) { const n = []; c.push(n); c = n; } return o;');
    expect(result.isError).toBe(true);
    expect(result._meta?.['ai.cpz.gateway/error']).toBe('script_error');
    expect(text(result)).toBe('Script error: Error: the returned value nests deeper than 1000 levels, the most an answer carries: return it flatter');
    expect(await codeRuns('script_error')).toBe(before + 1);
  });

  it('runs two credentials concurrently with nothing shared, and limits runs in progress per credential', async () => {
    // A gateway of its own whose wall time (3 s, the file's is 8 s) ends the two slow runs the test waits out.
    const short = inProcessGateway(
      { scopes: { endpoint: endpoint.url }, compact: { codeMode: { enabled: true, limits: { instructions: 2_000, wallTimeMs: 3_000, toolCalls: 6 } } } },
      { fake: { tools } },
    );
    const runOn = (code: string, headers = READER) => withClient('modern', short.compactUrl, headers, (c) => c.callTool('run_code', { code }));
    const slowOn = () => short.fake!.received.filter((r) => r.method === 'tools/call' && (r.params as { name?: string })?.name === 'slow_read').length;
    try {
      const [a, b] = await Promise.all([
        runOn('globalThis.mine = "reader"; const q = await tools.get_quote({ symbol: "R" }); return [mine, q.symbol];'),
        runOn('globalThis.mine = "other"; const q = await tools.get_quote({ symbol: "O" }); return [mine, q.symbol];', OTHER),
      ]);
      expect(a.structuredContent?.result).toEqual(['reader', 'R']);
      expect(b.structuredContent?.result).toEqual(['other', 'O']);
      // Two slow runs fill the reader's slots (default 2): a third is refused at once.
      const slow = [runOn('await tools.slow_read(); return 1;'), runOn('await tools.slow_read(); return 1;')];
      await waitFor('both runs to call slow_read', () => slowOn() >= 2, { timeoutMs: 15_000 });
      const third = await runOn('return 1;');
      expect(third._meta?.['ai.cpz.gateway/limit']).toBe('concurrentRunsPerCredential');
      // It never started: refused, not "stopped".
      expect(text(third)).toMatch(/^Run refused, not started: limit compact\.codeMode\.limits\.concurrentRunsPerCredential \(2\) exceeded/);
      const others = await runOn('return 2;', OTHER);
      expect(others.structuredContent?.result).toBe(2);
      const ended = await Promise.all(slow);
      expect(ended.every((r) => r._meta?.['ai.cpz.gateway/limit'] === 'wallTimeMs')).toBe(true);
    } finally {
      await short.close();
    }
  }, 30_000);

  it('counts runs in progress per account: a key pair and a bearer token of one account share its slots', async () => {
    const accounts = await startScopeEndpoint(
      { k_alice: ['accounts:read'], tok_alice: ['accounts:read'], k_bob: ['accounts:read'] },
      { accounts: { k_alice: 'alice', tok_alice: 'alice', k_bob: 'bob' } },
    );
    const short = inProcessGateway(
      {
        scopes: { endpoint: accounts.url, accountField: 'key_id', timeoutMs: 30_000 },
        compact: { codeMode: { enabled: true, limits: { wallTimeMs: 3_000 } } },
      },
      { fake: { tools } },
    );
    const PAIR = { 'x-cpz-key': 'k_alice', 'x-cpz-secret': 'alice-secret' };
    const TOKEN = { authorization: 'Bearer tok_alice' };
    const runOn = (code: string, headers: Record<string, string>) => withClient('modern', short.compactUrl, headers, (c) => c.callTool('run_code', { code }));
    const slowOn = () => short.fake!.received.filter((r) => r.method === 'tools/call' && (r.params as { name?: string })?.name === 'slow_read').length;
    try {
      // One slow run per form fills alice's two slots: a third run is refused whichever form (or both) it comes in.
      const slow = [runOn('await tools.slow_read(); return 1;', PAIR), runOn('await tools.slow_read(); return 1;', TOKEN)];
      await waitFor('both runs to call slow_read', () => slowOn() >= 2, { timeoutMs: 15_000 });
      for (const form of [PAIR, TOKEN, { ...PAIR, ...TOKEN }]) {
        const refused = await runOn('return 1;', form);
        expect(refused.isError).toBe(true);
        expect(refused._meta?.['ai.cpz.gateway/limit']).toBe('concurrentRunsPerCredential');
        expect(text(refused)).toMatch(/this account already has as many runs in progress/);
      }
      expect((await runOn('return 2;', { 'x-cpz-key': 'k_bob', 'x-cpz-secret': 'bob-secret' })).structuredContent?.result).toBe(2);
      await Promise.all(slow);
    } finally {
      await short.close();
      await accounts.close();
    }
  }, 30_000);

  it('keeps health under a second while a runaway script runs and is stopped', async () => {
    // A gateway of its own whose instruction budget a busy loop cannot spend before the wall-time limit stops it (3 s).
    const busy = inProcessGateway(
      { scopes: { endpoint: endpoint.url }, compact: { codeMode: { enabled: true, limits: { instructions: 1_000_000_000, wallTimeMs: 3_000 } } } },
      { fake: { tools } },
    );
    try {
      let settled = false;
      const runaway = withClient('modern', busy.compactUrl, READER, (c) => c.callTool('run_code', { code: 'let i = 0; for (;;) i++;' })).finally(() => {
        settled = true;
      });
      const timings: number[] = [];
      let whileRunning = 0;
      while (!settled) {
        const started = performance.now();
        const response = await routedFetch(`${busy.gatewayUrl}/healthz`);
        expect(response.status).toBe(200);
        timings.push(performance.now() - started);
        if (!settled) whileRunning += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await runaway)._meta?.['ai.cpz.gateway/limit']).toBe('wallTimeMs');
      // Health answered all along: many probes while the script spun, and none slow.
      expect(whileRunning).toBeGreaterThanOrEqual(5);
      expect(Math.max(...timings)).toBeLessThan(1000);
      expect(busy.fake!.received.filter((r) => r.method === 'tools/call')).toEqual([]);
    } finally {
      await busy.close();
    }
  }, 30_000);
});

describe.each(ERAS)('run_code cancellation (%s era)', (era) => {
  it('stops the script and aborts the inner call in flight', async () => {
    const aborted = slowAborted;
    const calledBefore = slowCalls();
    const controller = new AbortController();
    const client = era === 'modern' ? await modernClient() : undefined;
    // Were the script left running, the aborted call's answer would let it go on calling.
    const code = 'try { await tools.slow_read(); } catch {} for (;;) try { await tools.get_quote({ symbol: "AFTER" }); } catch {}';
    const cancelledBefore = await codeRuns('cancelled');
    const calling =
      client?.callTool({ name: 'run_code', arguments: { code } }, { signal: controller.signal }) ??
      (await import('../helpers/clients.ts')).connectV1(compact, READER).then(async (v1) => {
        try {
          return await v1.callTool({ name: 'run_code', arguments: { code } }, undefined, { signal: controller.signal });
        } finally {
          await v1.close();
        }
      });
    await waitFor('the run to call slow_read', () => slowCalls() > calledBefore, { timeoutMs: 15_000 });
    const started = performance.now();
    controller.abort('changed my mind');
    await expect(calling).rejects.toThrow();
    await waitFor('the inner call to be aborted', () => slowAborted === aborted + 1, { timeoutMs: 15_000 });
    expect(performance.now() - started).toBeLessThan(5000);
    // The run ended as cancelled (the worker stopped), not by a later limit of a script left running.
    expect(
      await eventually(
        () => codeRuns('cancelled'),
        (n) => n > cancelledBefore,
      ),
    ).toBe(cancelledBefore + 1);
    // Its audit line after its inner call's (config/README.md "Audit"), though the run ended first.
    const order = await waitFor('the cancelled run and its inner call in the audit file', () => {
      const lines = readFileSync(AUDIT_FILE, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const run = lines.findLastIndex((l) => l.tool === 'run_code' && l.reason === 'cancelled');
      const inner = run < 0 ? -1 : lines.findIndex((l) => l.via === 'run_code' && l.tool === 'slow_read' && l.runId === lines[run]!.runId);
      return inner >= 0 && { run, inner };
    });
    expect(order.inner).toBeLessThan(order.run);
    const upstreamNow = upstreamCalls();
    // An absence no condition can show: time for a script left running to call again (it would at once).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(upstreamCalls()).toBe(upstreamNow);
    expect(gateway.fake!.received.filter((r) => JSON.stringify(r.params).includes('AFTER'))).toEqual([]);
    await client?.close();
  }, 30_000);
});

describe('run_code argument bounds', () => {
  const auditLines = () =>
    readFileSync(AUDIT_FILE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("refuses arguments over a structural limit naming the script's own path, and audits them by the breach, never element by element", async () => {
    const before = upstreamCalls();
    const result = await run(
      'modern',
      `const a = Array(10001).fill(0);
       const out = [];
       for (const name of ['get_quote', 'no_such_tool', 'place_order']) {
         try { await tools[name]({ symbol: a }); out.push('ran'); } catch (e) { out.push(e.kind + ' ' + e.message); }
       }
       return out;`,
    );
    const [over, unknown, write] = result.structuredContent!.result as string[];
    expect(over).toBe('invalid_arguments tools.get_quote: Invalid arguments for get_quote: an array longer than limits.arrayLength (10000) at /symbol.');
    expect(unknown).toMatch(/^unknown_tool /u);
    expect(write).toMatch(/^call_directly /u);
    const viaCallTool = await withClient('modern', compact, READER, (c) =>
      c.callTool('call_tool', { name: 'get_quote', arguments: { symbol: Array(10001).fill(0) } }),
    );
    expect(text(viaCallTool)).toContain('an array longer than limits.arrayLength (10000) at /arguments/arguments/symbol');
    expect(upstreamCalls()).toBe(before);
    const runId = result._meta?.['ai.cpz.gateway/runId'];
    // Each refusal's line names the breach, whatever refused the call first: its arguments were never digested whole.
    const lines = await waitFor('the refusals in the audit file', () => {
      const all = auditLines();
      const inner = all.filter((l) => l.runId === runId && l.via === 'run_code');
      const direct = all.filter((l) => l.via === 'call_tool' && l.tool === 'get_quote' && l.argumentsOverLimit);
      return inner.length === 3 && direct.length > 0 && [...inner, direct.at(-1)!];
    });
    expect(lines.map((l) => [l.tool, l.outcome, l.argumentsOverLimit])).toEqual([
      ['get_quote', 'invalid_arguments', 'an array longer than limits.arrayLength (10000) at /symbol'],
      ['no_such_tool', 'unknown_tool', 'an array longer than limits.arrayLength (10000) at /symbol'],
      ['place_order', 'refused_write_via_call_tool', 'an array longer than limits.arrayLength (10000) at /symbol'],
      ['get_quote', 'invalid_arguments', 'an array longer than limits.arrayLength (10000) at /symbol'],
    ]);
    expect(lines.every((l) => /^[0-9a-f]{64}$/u.test(String(l.arguments)))).toBe(true);
  });

  it('gives a call whose arguments are no object a ToolError of kind invalid_arguments', async () => {
    const result = await run(
      'modern',
      `const kinds = [];
       for (const args of ['x', null, [], 5]) {
         try { await tools.list_accounts(args); kinds.push('ran'); } catch (e) { kinds.push(e.kind); }
       }
       return kinds;`,
    );
    expect(result.structuredContent!.result).toEqual(['invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'invalid_arguments']);
  });

  it("bounds a thrown error's name and message by outputBytes, cut with a marker naming it", async () => {
    const long = await run('modern', 'throw new Error("E".repeat(100000));');
    expect(long._meta?.['ai.cpz.gateway/error']).toBe('script_error');
    expect(text(long)).toMatch(
      /^Script error at line 1, column \d+: Error: E{1000,}… \(cut: longer than codeMode\.limits\.outputBytes allows, 100000 bytes\)$/u,
    );
    expect(Buffer.byteLength(text(long))).toBeLessThan(4096 + 200);
    const named = await run('modern', 'const e = new Error("short"); e.name = "N".repeat(100000); throw e;');
    expect(text(named)).toMatch(/: N{100,}… \(cut: longer than codeMode\.limits\.outputBytes allows, 100000 bytes\): short$/u);
    expect(Buffer.byteLength(text(named))).toBeLessThan(4096 + 200);
  });

  it("refuses a call whose arguments' JSON is over limits.bodyBytes before parsing it: payload_too_large naming the limit, nothing sent, audited", async () => {
    const auditFile = `.tmp/audit/run-code-body-${process.pid}.log`;
    const small = inProcessGateway(
      {
        scopes: { endpoint: endpoint.url },
        limits: { bodyBytes: 4096 },
        compact: { codeMode: { enabled: true, limits: { wallTimeMs: 8_000 } } },
        audit: { destination: auditFile, digestKey: 'run-code-audit-key-0123456' },
      },
      { fake: { tools } },
    );
    try {
      const received = () => small.fake!.received.filter((r) => r.method === 'tools/call').length;
      const result = await withClient('modern', small.compactUrl, READER, (c) =>
        c.callTool('run_code', {
          code: `const out = [];
                 for (const symbol of ['x'.repeat(5000), 'x'.repeat(3000)]) {
                   try { out.push((await tools.get_quote({ symbol })).price); } catch (e) { out.push(e.name + ' ' + e.kind + ' ' + e.message); }
                 }
                 return out;`,
        }),
      );
      expect(result.structuredContent!.result).toEqual([
        "ToolError payload_too_large tools.get_quote: the arguments' JSON is larger than limits.bodyBytes (4096 bytes), the most a request body may carry: pass fewer or shorter values",
        10,
      ]);
      expect(received()).toBe(1);
      const line = await waitFor('the refusal in the audit file', () =>
        readFileSync(auditFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.via === 'run_code' && l.reason === 'payload_too_large'),
      );
      expect(line).toMatchObject({ tool: 'get_quote', outcome: 'invalid_arguments' });
    } finally {
      await small.close();
    }
  });
});

describe('run_code ToolError details', () => {
  const ARGUMENT_ERRORS = 'ai.cpz/argument-errors';
  /** call_tool's own list of the offending arguments of get_balance({ acount: 'a1' }): what a script's call must give too. */
  const directErrors = async () => {
    const direct = await withClient('modern', compact, READER, (c) => c.callTool('call_tool', { name: 'get_balance', arguments: { acount: 'a1' } }));
    const errors = direct._meta?.[ARGUMENT_ERRORS] as { path: string; message: string }[];
    expect(errors.map((e) => e.path)).toEqual(expect.arrayContaining(['/account', '/acount']));
    return errors;
  };

  it('gives a caught ToolError the offending arguments as call_tool lists them, as objects the script reads, whatever it did to JSON', async () => {
    const errors = await directErrors();
    const result = await run(
      'modern',
      `JSON.parse = () => 'replaced'; Object.prototype.errors = 'polluted';
       try { await tools.get_balance({ acount: 'a1' }); return 'ran'; }
       catch (e) { return { name: e.name, kind: e.kind, errors: e.errors, paths: e.errors.map((x) => x.path), own: Object.keys(e).sort() }; }`,
    );
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent!.result).toEqual({
      name: 'ToolError',
      kind: 'invalid_arguments',
      errors,
      paths: errors.map((e) => e.path),
      // What crossed as JSON text on the way is gone: only the error's own fields are left.
      own: ['errors', 'kind', 'message', 'name'],
    });
  });

  it("puts an uncaught ToolError's offending arguments and kind in the run's _meta, beside script_error", async () => {
    const errors = await directErrors();
    const result = await run('modern', `await tools.get_balance({ acount: 'a1' });`);
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({
      'ai.cpz.gateway/error': 'script_error',
      'ai.cpz.gateway/tool_error': 'invalid_arguments',
      [ARGUMENT_ERRORS]: errors,
    });
    expect(result._meta).not.toHaveProperty('ai.cpz.gateway/retryAfterMs');
    expect(text(result)).toMatch(/^Script error: ToolError: tools\.get_balance: Invalid arguments for get_balance/u);
  });

  it("gives a rate-limited call's ToolError retryAfterMs and budget, caught or not", async () => {
    const limited = inProcessGateway(
      {
        scopes: { endpoint: endpoint.url },
        rateLimits: { reads: { points: 1, durationMs: 600_000 } },
        compact: { codeMode: { enabled: true, limits: { wallTimeMs: 8_000 } } },
      },
      { fake: { tools } },
    );
    try {
      const runHere = (code: string) => withClient('modern', limited.compactUrl, READER, (c) => c.callTool('run_code', { code }));
      const caught = await runHere(
        `await tools.get_quote({ symbol: 'A' });
         try { await tools.get_quote({ symbol: 'B' }); return 'ran'; } catch (e) { return [e.kind, e.retryAfterMs, e.budget, 'errors' in e]; }`,
      );
      const [kind, retryAfterMs, budget, errors] = caught.structuredContent!.result as [string, number, string, unknown];
      expect([kind, budget, errors]).toEqual(['rate_limited', 'reads', false]);
      expect(retryAfterMs).toBeGreaterThan(0);
      const uncaught = await runHere(`await tools.get_quote({ symbol: 'C' });`);
      expect(uncaught._meta).toMatchObject({
        'ai.cpz.gateway/error': 'script_error',
        'ai.cpz.gateway/tool_error': 'rate_limited',
        'ai.cpz.gateway/budget': 'reads',
        'ai.cpz.gateway/retryAfterMs': expect.any(Number),
      });
      expect(uncaught._meta).not.toHaveProperty(ARGUMENT_ERRORS);
    } finally {
      await limited.close();
    }
  });

  it('puts nothing malformed or unbounded in _meta from a ToolError the script made itself', async () => {
    const malformed = await run(
      'modern',
      `throw { name: 'ToolError', message: 'fake', errors: [1, null, { path: 2, message: 'm' }, { path: '/a' }, 'x'], retryAfterMs: -5, budget: { a: 1 } };`,
    );
    expect(malformed._meta?.['ai.cpz.gateway/error']).toBe('script_error');
    for (const key of [ARGUMENT_ERRORS, 'ai.cpz.gateway/retryAfterMs', 'ai.cpz.gateway/budget', 'ai.cpz.gateway/tool_error'])
      expect(malformed._meta, key).not.toHaveProperty(key);
    const notANumber = await run('modern', `const e = new Error('fake'); e.name = 'ToolError'; e.errors = 'all'; e.retryAfterMs = Infinity; throw e;`);
    expect(notANumber._meta).not.toHaveProperty(ARGUMENT_ERRORS);
    expect(notANumber._meta).not.toHaveProperty('ai.cpz.gateway/retryAfterMs');
    const huge = await run(
      'modern',
      `const p = 'p'.repeat(3000);
       const e = new Error('fake'); e.name = 'ToolError'; e.kind = 'k'.repeat(3000); e.budget = 'b'.repeat(3000);
       e.errors = Array.from({ length: 100 }, () => ({ path: p, message: 'm', extra: p }));
       throw e;`,
    );
    const errors = huge._meta?.[ARGUMENT_ERRORS] as { path: string; message: string }[];
    expect(errors).toHaveLength(20);
    expect(errors.every((e) => Object.keys(e).join() === 'path,message' && e.path.length <= 1024 && e.path.endsWith('…'))).toBe(true);
    expect(String(huge._meta?.['ai.cpz.gateway/tool_error']).length).toBeLessThanOrEqual(1024);
    expect(String(huge._meta?.['ai.cpz.gateway/budget']).length).toBeLessThanOrEqual(1024);
    // An error of any other name passes nothing on.
    const other = await run('modern', `const e = new Error('x'); e.kind = 'rate_limited'; e.errors = [{ path: '/a', message: 'm' }]; throw e;`);
    expect(other._meta).not.toHaveProperty(ARGUMENT_ERRORS);
    expect(other._meta).not.toHaveProperty('ai.cpz.gateway/tool_error');
  });
});

describe('search_tools in code mode', () => {
  it('answers TypeScript declarations with detail "typescript", and keeps its schema without code mode', async () => {
    const result = await withClient('modern', compact, READER, (c) => c.callTool('search_tools', { query: 'quote', detail: 'typescript', limit: 1 }));
    expect(result.structuredContent?.tools).toEqual([
      {
        name: 'get_quote',
        advertised: false,
        declaration: expect.stringContaining('get_quote(args: { symbol: string }): Promise<{ symbol: string; price: number }>;'),
      },
    ]);
    // Off unless a config turns it on: the schema's default (config/cpzai.yaml, the reference stack, turns it on).
    expect(loadConfig({ path: 'config/everything.yaml', env: {} }).compact.codeMode.enabled).toBe(false);
    expect(loadConfig({ env: {} }).compact.codeMode.enabled).toBe(true);
    const plain = inProcessGateway({ scopes: { endpoint: endpoint.url }, compact: { codeMode: { enabled: false } } }, { fake: { tools } });
    try {
      const listed = await withClient('modern', plain.compactUrl, READER, (c) => c.listTools());
      expect(listed.map((t) => t.name)).not.toContain('run_code');
      const search = listed.find((t) => t.name === 'search_tools')!;
      expect((search.inputSchema.properties as Record<string, { enum?: string[] }>).detail?.enum).toEqual(['brief', 'full']);
      const refused = await withClient('modern', plain.compactUrl, READER, (c) => c.callTool('run_code', { code: 'return 1' }).catch((e: Error) => e));
      expect(String(refused)).toContain('Unknown tool: run_code');
    } finally {
      await plain.close();
    }
  });
});

describe('run_code traces', () => {
  /** The spans of the one run_code request whose run id is `runId`: its request span, the run's span and everything under them. */
  const traceOf = (runId: unknown) => {
    const finished = spans.getFinishedSpans();
    const run = finished.find((s) => s.name === 'run_code' && s.attributes['ai.cpz.gateway.run_id'] === runId)!;
    const inTrace = finished.filter((s) => s.spanContext().traceId === run.spanContext().traceId);
    const childrenOf = (parent: ReadableSpan) => inTrace.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
    const request = inTrace.find((s) => s.spanContext().spanId === run.parentSpanContext?.spanId)!;
    return { request, run, childrenOf };
  };

  it('puts each inner call in its own span under the run, with its own outcome; the request span says the run outcome, once', async () => {
    spans.reset();
    const result = await run(
      'modern',
      `const q = await tools.get_quote({ symbol: 'A' });
       let refused = '';
       try { await tools.place_order({}); } catch (e) { refused = e.message; }
       return [q.price, refused.length > 0];`,
    );
    expect(result.structuredContent?.result).toEqual([10, true]);
    const { request, run: runSpan, childrenOf } = traceOf(result._meta?.['ai.cpz.gateway/runId']);
    expect(request.name).toBe('tools/call run_code');
    // The run's outcome, not its last inner call's (a refused place_order): one event, on the request span.
    expect(request.attributes).toMatchObject({ 'ai.cpz.gateway.outcome': 'ok', 'ai.cpz.gateway.run_id': runSpan.attributes['ai.cpz.gateway.run_id'] });
    expect(request.attributes['error.type']).toBeUndefined();
    expect(request.attributes['ai.cpz.gateway.target_tool']).toBeUndefined();
    const calls = childrenOf(runSpan).sort((a, b) => Number(a.attributes['ai.cpz.gateway.call']) - Number(b.attributes['ai.cpz.gateway.call']));
    expect(calls.map((s) => [s.name, s.attributes['ai.cpz.gateway.target_tool'], s.attributes['ai.cpz.gateway.outcome'], s.attributes['error.type']])).toEqual([
      ['run_code call', 'get_quote', 'ok', undefined],
      // The audit trail's name for the write rule call_tool and run_code share; the call's via is run_code.
      ['run_code call', 'place_order', 'refused_write_via_call_tool', 'refused_write_via_call_tool'],
    ]);
    // The forwarded call's upstream span is under its own call's span; the refused one reached no upstream.
    expect(childrenOf(calls[0]!).map((s) => s.name)).toContain('tools/call get_quote');
    expect(childrenOf(calls[1]!).map((s) => s.name)).not.toContain('tools/call place_order');
  });

  it('says a failed run on the request span even when its inner calls succeeded', async () => {
    spans.reset();
    const result = await run('modern', 'await tools.get_quote({ symbol: "A" });\nnope();');
    expect(result._meta?.['ai.cpz.gateway/error']).toBe('script_error');
    const { request, run: runSpan, childrenOf } = traceOf(result._meta?.['ai.cpz.gateway/runId']);
    expect(request.attributes).toMatchObject({ 'ai.cpz.gateway.outcome': 'script_error', 'error.type': 'script_error' });
    expect(childrenOf(runSpan).map((s) => s.attributes['ai.cpz.gateway.outcome'])).toEqual(['ok']);
  });
});

describe('run_code audit and metrics', () => {
  it('records each inner call once, via run_code under its run id, and the run itself once after them; counts runs and inner calls by outcome', async () => {
    // A gateway of its own (and span exporter, which its close shuts down): its audit trail is read once it is closed.
    const auditFile = `.tmp/audit/run-code-metrics-${process.pid}.log`;
    const gateway = codeModeGateway(auditFile, new InMemorySpanExporter());
    const run = (code: string) => withClient('modern', gateway.compactUrl, READER, (c) => c.callTool('run_code', { code }));
    expect((await run('while (true) {}'))._meta?.['ai.cpz.gateway/limit']).toBe('instructions');
    expect((await run('try { await tools.place_order({}); } catch { return 1; }')).structuredContent?.result).toBe(1);
    const result = await run(SCRIPT_4_STEPS);
    const runId = result._meta?.['ai.cpz.gateway/runId'];
    const metrics = await (await routedFetch(`${gateway.gatewayUrl}/metrics`)).text();
    expect(metrics).toMatch(/mcp_code_runs_total\{outcome="ok",limit="none"\} [1-9]/u);
    expect(metrics).toMatch(/mcp_code_runs_total\{outcome="limit",limit="instructions"\} [1-9]/u);
    expect(metrics).toMatch(/mcp_tool_calls_total\{endpoint="compact",tool="get_balance",via="run_code",outcome="ok"\} [1-9]/u);
    expect(metrics).toMatch(/mcp_tool_calls_total\{endpoint="compact",tool="place_order",via="run_code",outcome="refused"\} [1-9]/u);
    await gateway.close();
    const lines = readFileSync(auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const events = lines.filter((e) => e.runId === runId);
    expect(events.map((e) => [e.tool, e.via, e.outcome, e.surface])).toEqual([
      ['list_accounts', 'run_code', 'ok', 'compact'],
      ['get_balance', 'run_code', 'ok', 'compact'],
      ['get_balance', 'run_code', 'ok', 'compact'],
      ['get_positions', 'run_code', 'ok', 'compact'],
      ['run_code', 'direct', 'ok', 'compact'],
    ]);
    // One line per run, the run's own: called directly, with its outcome, the limit it stopped at and its calls.
    const runs = lines.filter((e) => e.tool === 'run_code');
    expect(runs.map((e) => [e.event, e.via, e.outcome, e.reason, e.limit, e.calls, e.readOnly])).toEqual([
      ['tool_decision', 'direct', 'error', 'limit', 'instructions', 0, true],
      ['tool_decision', 'direct', 'ok', undefined, undefined, 1, true],
      ['tool_decision', 'direct', 'ok', undefined, undefined, 4, true],
    ]);
    expect(runs[2]).toMatchObject({ runId, credential: events[0]!.credential, arguments: expect.stringMatching(/^[0-9a-f]{64}$/u) });
    expect(runs.every((e) => typeof e.runId === 'string' && typeof e.durationMs === 'number' && e.requestId)).toBe(true);
  });
});

/** mcp_code_runs_total{outcome} as the gateway's /metrics says it now. */
async function codeRuns(outcome: string): Promise<number> {
  const metrics = await (await routedFetch(`${gateway.gatewayUrl}/metrics`)).text();
  return Number(new RegExp(`^mcp_code_runs_total\\{outcome="${outcome}",limit="none"\\} (\\d+)`, 'mu').exec(metrics)?.[1] ?? 0);
}

async function modernClient(): Promise<Client> {
  const client = new Client({ name: 'run-code', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(compact, { fetch: gateway.fetchWith(READER) }));
  return client;
}
