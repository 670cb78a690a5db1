/**
 * The code sandbox (gateway/sandbox/): QuickJS in WebAssembly on a worker thread, one fresh context per
 * run, each limit's breach named, tool calls handed back to the host, cancellation and wall time
 * stopping a script whatever it is doing. The declarations run_code's description carries.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CodeSandbox, RunSlots, type CallAnswer, type RunRequest, type SandboxLimits } from '../../gateway/sandbox/sandbox.ts';
import { schemaType, toolsDeclaration } from '../../gateway/surfaces/code-declarations.ts';

const LIMITS: SandboxLimits = { memoryBytes: 8 << 20, instructions: 2_000, wallTimeMs: 5_000, outputBytes: 4096, toolCalls: 3 };
const sandbox = new CodeSandbox();
afterAll(() => sandbox.close());

const echo = async (name: string, json: string): Promise<CallAnswer> =>
  name === 'fails' ? { ok: false, message: 'it failed' } : { ok: true, json: JSON.stringify({ name, args: JSON.parse(json) }) };
const run = (code: string, limits: Partial<SandboxLimits> = {}, call: RunRequest['call'] = echo, signal?: AbortSignal) =>
  sandbox.run({ code, limits: { ...LIMITS, ...limits }, call, ...(signal ? { signal } : {}) });

describe('the code sandbox', () => {
  it('returns the JSON of what the script returns, its console lines and its calls', async () => {
    const outcome = await run('console.log("a", 1, {b: 2}); console.warn("w"); const r = await Promise.all([tools.x({q: 1}), tools["y-z"]()]); return r;');
    expect(outcome).toEqual({
      ok: true,
      json: JSON.stringify([
        { name: 'x', args: { q: 1 } },
        { name: 'y-z', args: {} },
      ]),
      logs: ['a 1 {"b":2}', 'warn: w'],
      calls: 2,
    });
    expect(await run('return undefined')).toMatchObject({ ok: true, json: 'null' });
    // A script that catches its own out-of-memory error still broke the memory limit (try-out: it answered ok).
    expect(
      await run('try { const a = []; while (true) a.push(new Array(1e5).fill(1)); } catch (e) { return String(e); }', { instructions: 1e9 }),
    ).toMatchObject({
      ok: false,
      kind: 'limit',
      limit: 'memoryBytes',
    });
    // The tools object itself is no call (try-out: returning it called a tool named toJSON).
    expect(await run('return tools')).toMatchObject({ ok: true, json: '{}', calls: 0 });
  });

  it('refuses a script that closes the function it is the body of, and keeps serving runs (try-out: the worker failed after its outcome, and the gateway with it)', async () => {
    for (const code of ['})(); (function () {', 'return 1; })(); 99; (function () {', '})(); ({then(){}}); (function () {', '})(); (async () => {']) {
      expect(await run(code), code).toMatchObject({
        ok: false,
        kind: 'script_error',
        name: 'SyntaxError',
        message: expect.stringMatching(/^the script is not the body of an async function .*, so it is not run: /),
      });
    }
    // What V8 and QuickJS read apart (review): a raw line separator before an HTML-like comment. Refused before it runs.
    const calls: string[] = [];
    const record: RunRequest['call'] = async (name, json) => {
      calls.push(name);
      return echo(name, json);
    };
    for (const separator of ['\u2028', '\u2029']) {
      const code = `var x = 1; x // c${separator}-->y })(); tools.escaped({a: 1}); console.log("ran outside"); 42; (function(){`;
      expect(await run(code, {}, record)).toMatchObject({ ok: false, kind: 'script_error', message: expect.stringMatching(/raw U\+202[89] line separator/) });
    }
    expect(calls).toEqual([]);
    // A script that does not compile at all is told as before (where, and what).
    expect(await run('return (1;')).toMatchObject({ ok: false, kind: 'script_error', name: 'SyntaxError', line: 1 });
    // The workers that ran them are fine, and so is this process (an unheard worker 'error' would have ended it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await run('return 41 + 1')).toMatchObject({ ok: true, json: '42' });
  });

  it('stops a console line longer than outputBytes as that limit, however the string was built (try-out: a doubled string was logged empty)', async () => {
    for (const shown of ['s', '[s]', '{ s }']) {
      expect(await run(`let s = "x"; for (let i = 0; i < 24; i++) s += s; console.log(${shown}); return 1`, { memoryBytes: 16 << 20 }), shown).toMatchObject({
        ok: false,
        kind: 'limit',
        limit: 'outputBytes',
      });
    }
  });

  it("names V8's reason when it does not take a script QuickJS would (review: it was told the script closed its function)", async () => {
    expect(await run('return /(?<a>x)|(?<a>y)/.source')).toMatchObject({
      ok: false,
      kind: 'script_error',
      message: expect.stringContaining('Duplicate capture group name'),
    });
  });

  it('writes every value to the console without ending the script (try-out: a BigInt threw, a cycle and a function came out quoted)', async () => {
    const outcome = await run(
      'const a = { b: 1 }; a.a = a; console.log(1n); console.log(a); console.log(() => 1); console.log(function named() {}); console.log(Symbol("q")); console.log({ n: 2n }); return "after";',
    );
    expect(outcome).toMatchObject({
      ok: true,
      json: '"after"',
      logs: ['1n', '[object Object]', '[Function]', '[Function: named]', 'Symbol(q)', '[object Object]'],
    });
  });

  it('names a thrown value that is no Error by its JSON (try-out: throw { code: 42 } gave an empty message)', async () => {
    expect(await run('throw { code: 42, reason: "nope" }')).toMatchObject({
      ok: false,
      kind: 'script_error',
      name: 'Error',
      message: 'the script threw a value that is no Error: {"code":42,"reason":"nope"}',
    });
  });

  it('answers a thrown Promise or Proxy as a script error, and keeps serving (review: a Promise crashed the worker)', async () => {
    for (const code of ['throw Promise.resolve(1)', 'throw Promise.reject(new Error("x"))', 'throw new Proxy({}, { get() { throw new Error("no"); } })'])
      expect(await run(code), code).toMatchObject({
        ok: false,
        kind: 'script_error',
        message: expect.stringMatching(/^the script threw a value that is no Error/),
      });
    expect(await run('return 1')).toMatchObject({ ok: true, json: '1' });
  });

  it('dispatches no tool call made while its thrown value is read (review: a getter on it ran tools.delete_everything)', async () => {
    const called: string[] = [];
    const outcome = await run('throw { get x() { tools.delete_everything({}); return 1; } }', {}, async (name, json) => {
      called.push(name);
      return echo(name, json);
    });
    expect(outcome).toMatchObject({ ok: false, kind: 'script_error' });
    expect(called).toEqual([]);
  });

  it('hands a tool name over whole, a NUL inside it included', async () => {
    expect(await run('return (await tools["list_strategies\\u0000place_order"]()).name')).toMatchObject({
      ok: true,
      json: '"list_strategies\\u0000place_order"',
    });
  });

  it('rejects a failed call with a ToolError the script may catch', async () => {
    expect(await run('try { await tools.fails(); } catch (e) { return [e.name, e.message]; }')).toMatchObject({ ok: true, json: '["ToolError","it failed"]' });
  });

  it("gives a ToolError the failed call's argument errors, retryAfterMs and budget, whatever the script did to JSON and the prototypes", async () => {
    const details: RunRequest['call'] = async () => ({
      ok: false,
      message: 'refused',
      kind: 'invalid_arguments',
      errors: [{ path: '/a\u0000b', message: 'is required' }],
      retryAfterMs: 1500,
      budget: 'reads',
    });
    const caught = await run(
      `JSON.parse = () => 'replaced'; Object.prototype.errors = 'polluted'; Error.prototype.budget = 'polluted';
       try { await tools.x(); } catch (e) { return [e.kind, e.errors, e.retryAfterMs, e.budget, Object.keys(e).sort()]; }`,
      {},
      details,
    );
    expect(caught).toMatchObject({ ok: true });
    expect(JSON.parse((caught as { json: string }).json)).toEqual([
      'invalid_arguments',
      [{ path: '/a\u0000b', message: 'is required' }],
      1500,
      'reads',
      ['budget', 'errors', 'kind', 'message', 'name', 'retryAfterMs'],
    ]);
    // Absent details are absent, not null.
    expect(await run("try { await tools.fails(); } catch (e) { return ['errors' in e, 'retryAfterMs' in e, 'budget' in e]; }")).toMatchObject({
      json: '[false,false,false]',
    });
    // Uncaught, the outcome carries them for run_code's _meta.
    expect(await run('await tools.x();', {}, details)).toMatchObject({
      ok: false,
      kind: 'script_error',
      name: 'ToolError',
      toolError: { kind: 'invalid_arguments', errors: [{ path: '/a\u0000b', message: 'is required' }], retryAfterMs: 1500, budget: 'reads' },
    });
  });

  it('names the line and column of a script error, line 1 included', async () => {
    expect(await run('\n\n   nope();')).toMatchObject({ ok: false, kind: 'script_error', name: 'ReferenceError', line: 3, column: 4 });
    expect(await run('throw new TypeError("bad")')).toMatchObject({ ok: false, kind: 'script_error', name: 'TypeError', message: 'bad', line: 1, column: 20 });
    expect(await run('return (')).toMatchObject({ ok: false, kind: 'script_error', name: 'SyntaxError' });
    // Left open, the script ends in the wrapper's `})()`: the message names no token the script does not hold.
    const open = await run('return ((');
    expect(open).toMatchObject({ ok: false, kind: 'script_error', name: 'SyntaxError', line: 1 });
    expect((open as { message: string }).message).toMatch(/^unexpected end of the script/);
    expect((open as { message: string }).message).not.toContain('}');
  });

  it('names each limit a script breaks', async () => {
    expect(await run('for (;;) {}')).toMatchObject({ ok: false, kind: 'limit', limit: 'instructions' });
    expect(await run('for (;;) {}', { instructions: 1e9, wallTimeMs: 300 })).toMatchObject({ ok: false, kind: 'limit', limit: 'wallTimeMs' });
    // A backtracking regular expression ticks the interrupt handler too (less often than a loop: README, Code mode).
    expect(await run('return /^(a+)+$/.test("a".repeat(60) + "b")', { instructions: 200, wallTimeMs: 60_000 })).toMatchObject({
      ok: false,
      kind: 'limit',
      limit: 'instructions',
    });
    expect(await run('const a = []; for (;;) a.push({ a: [1, 2, 3] });')).toMatchObject({ ok: false, kind: 'limit', limit: 'memoryBytes' });
    // 50,000 queued promise reactions, and a Map or Set growing its table, at the default memory (16 MiB):
    // QuickJS fails without an error object (null), and frees what it held; the memory was refused at its cap.
    const queued = 'let s = 0; for (let i = 0; i < 50000; i++) Promise.resolve(i).then((x) => { s += x }); return s;';
    for (const code of [queued, 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });', 'const m = new Set(); for (let i = 0; ; i++) m.add({ i });'])
      expect(await run(code, { instructions: 1e9, memoryBytes: 16 << 20 }), code).toMatchObject({ ok: false, kind: 'limit', limit: 'memoryBytes' });
    // A script's own `throw null` is its error, at a limit where the memory starts at its maximum (<= 8 MiB) too.
    for (const memoryBytes of [4 << 20, 16 << 20])
      expect(await run('throw null', { memoryBytes })).toMatchObject({ ok: false, kind: 'script_error', message: expect.stringContaining('threw null') });
    expect(await run('return "x".repeat(10000)')).toMatchObject({ ok: false, kind: 'limit', limit: 'outputBytes' });
    expect(await run('for (;;) console.log("x".repeat(100))')).toMatchObject({ ok: false, kind: 'limit', limit: 'outputBytes' });
    expect(await run('for (;;) { try { await tools.x(); } catch {} }')).toMatchObject({ ok: false, kind: 'limit', limit: 'toolCalls', calls: 3 });
  });

  it('counts the promise jobs of a run against its instructions: a loop of awaits ends there, not at its wall time', async () => {
    const limits = { instructions: 100, wallTimeMs: 600_000 };
    // 100,000 awaits are about 55 of QuickJS's own ticks and 1,000 jobs' worth (100 jobs a tick).
    expect(await run('for (let i = 0; i < 100000; i++) await null; return 1', limits)).toMatchObject({ ok: false, kind: 'limit', limit: 'instructions' });
    expect(await run('for (;;) await null', limits)).toMatchObject({ ok: false, kind: 'limit', limit: 'instructions' });
    expect(await run('const p = Promise.resolve(); for (;;) await p.then(() => {})', limits)).toMatchObject({
      ok: false,
      kind: 'limit',
      limit: 'instructions',
    });
    expect(await run('for (let i = 0; i < 1000; i++) await null; return 1', limits)).toMatchObject({ ok: true, json: '1' });
  });

  it('counts strings against memoryBytes: many strings under the limit each, beyond it together', async () => {
    // QuickJS's allocator limit alone let 400 strings of 1 MB through an 8 MiB limit (it cannot see a block's size under Emscripten).
    const strings = (count: number, size: number) => `const a = []; for (let i = 0; i < ${count}; i++) a.push("y".repeat(${size}) + i); return a.length;`;
    expect(await run(strings(400, 1e6), { instructions: 1e9 })).toMatchObject({ ok: false, kind: 'limit', limit: 'memoryBytes' });
    expect(await run(strings(5, 4e6), { instructions: 1e9 })).toMatchObject({ ok: false, kind: 'limit', limit: 'memoryBytes' });
    // Within it, the same script runs, in a worker sized for each run's limit.
    expect(await run(strings(4, 1e6), { instructions: 1e9 })).toMatchObject({ ok: true, json: '4' });
    expect(await run(strings(40, 1e6), { instructions: 1e9, memoryBytes: 64 << 20 })).toMatchObject({ ok: true, json: '40' });
    expect(await run(strings(40, 1e6), { instructions: 1e9 })).toMatchObject({ ok: false, kind: 'limit', limit: 'memoryBytes' });
  });

  it("converts what crosses to the host with the language's own JSON, whatever the script put in its place", async () => {
    const replaced = 'JSON.stringify = () => "not json{"; JSON.parse = () => 0;';
    expect(await run(`${replaced} return await tools.x({ q: 1 });`)).toMatchObject({ ok: true, json: '{"name":"x","args":{"q":1}}', calls: 1 });
    expect(await run(`${replaced} return [1];`)).toMatchObject({ ok: true, json: '[1]' });
    expect(await run('JSON.stringify = () => 42; return "a";')).toMatchObject({ ok: true, json: '"a"' });
    // console lines are written by QuickJS's own JSON, never the script's.
    expect(await run(`${replaced} console.log({ a: 1 }, [2]); return 1;`)).toMatchObject({ ok: true, json: '1', logs: ['{"a":1} [2]'] });
  });

  it("ends nesting past QuickJS's stack as a script error naming that stack, never a dead worker", async () => {
    // QuickJS's recursive parsers overflowed the worker thread's own stack before QuickJS's check fired
    // (a 3,000-deep literal did); a 40,000-deep value returned or passed to a tool did too, in QuickJS's
    // JSON.stringify, which takes seconds at that depth (its cycle check is quadratic), so it is not run here.
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    expect(await run(`return ${deep};`, { instructions: 1e9 })).toMatchObject({
      ok: false,
      kind: 'script_error',
      message: expect.stringMatching(/stack overflow.* \(recursion or nesting deeper than the sandbox's 512 KiB stack holds\)$/u),
    });
  });

  it('ends a deep recursion as a script error and a promise nothing settles at once', async () => {
    expect(await run('function f() { return f() + 1; } f();', { instructions: 1e9 })).toMatchObject({
      ok: false,
      kind: 'script_error',
      message: expect.stringContaining('stack overflow'),
    });
    expect(await run('await new Promise(() => {})')).toMatchObject({ ok: false, kind: 'script_error', message: expect.stringContaining('no timers') });
  });

  it('stops a run waiting on a tool call at its wall time, and on cancellation, aborting the call', async () => {
    let aborted = 0;
    let called: () => void = () => {};
    const hanging = (_n: string, _j: string, signal: AbortSignal) => {
      called();
      return new Promise<CallAnswer>((resolve) => signal.addEventListener('abort', () => (aborted++, resolve({ ok: false, message: 'aborted' }))));
    };
    expect(await run('await tools.x(); return 1;', { wallTimeMs: 300 }, hanging)).toMatchObject({ ok: false, kind: 'limit', limit: 'wallTimeMs' });
    const controller = new AbortController();
    const inCall = new Promise<void>((resolve) => (called = resolve));
    const cancelled = run('await tools.x(); return 1;', {}, hanging, controller.signal);
    await inCall;
    controller.abort();
    expect(await cancelled).toMatchObject({ ok: false, kind: 'cancelled' });
    expect(aborted).toBe(2);
  });

  it('gives every run a fresh context and nothing of the host', async () => {
    await run('Object.prototype.p = 1; globalThis.g = 2; JSON.parse = () => 3;');
    expect(await run('return [({}).p ?? null, typeof g, JSON.parse("4")]')).toMatchObject({ ok: true, json: '[null,"undefined",4]' });
    const host = await run(
      'return [typeof process, typeof require, typeof setTimeout, typeof Function("return this")().process, tools.constructor.constructor("return typeof process")()]',
    );
    expect(host).toMatchObject({ ok: true, json: '["undefined","undefined","undefined","undefined","undefined"]' });
  });
});

describe('run slots', () => {
  it('limits runs per credential and in total, and a release frees its slot once', () => {
    const slots = new RunSlots();
    const limits = { concurrentRunsPerCredential: 1, concurrentRuns: 2 };
    const a = slots.acquire('a', limits);
    expect(slots.acquire('a', limits)).toEqual({ full: 'concurrentRunsPerCredential' });
    const b = slots.acquire('b', limits);
    expect(slots.acquire('c', limits)).toEqual({ full: 'concurrentRuns' });
    if (!('release' in a) || !('release' in b)) throw new Error('expected slots');
    a.release();
    a.release();
    expect('release' in slots.acquire('a', limits)).toBe(true);
    expect(slots.acquire('c', limits)).toEqual({ full: 'concurrentRuns' });
  });
});

describe('tool declarations', () => {
  it('maps JSON Schema to TypeScript types', () => {
    expect(schemaType({ type: 'object', properties: { a: { type: 'string' }, 'b-c': { type: 'array', items: { enum: ['x', 1] } } }, required: ['a'] })).toBe(
      '{ a: string; "b-c"?: ("x" | 1)[] }',
    );
    expect(schemaType({ anyOf: [{ type: 'integer' }, { type: 'null' }] })).toBe('number | null');
    expect(schemaType({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaType({ type: 'object', additionalProperties: { type: 'number' } })).toBe('{ [key: string]: number }');
    expect(schemaType({ $ref: '#/x' })).toBe('unknown');
  });

  it('keeps within the byte budget: the names of the tools it does not declare first, then declarations that fit', () => {
    const tools = Array.from({ length: 30 }, (_, i) => ({ name: `tool_${i}`, description: `Tool ${i}. More text.`, inputSchema: { type: 'object' as const } }));
    const text = toolsDeclaration(tools, 600);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(600);
    expect(text).toContain('  /** Tool 0. */\n  tool_0(args?: Record<string, unknown>): Promise<unknown>;');
    const declared = [...text.matchAll(/^ {2}(tool_\d+)\(/gmu)].map((m) => m[1]);
    const named = /\/\/ Also ([\w, ]+?)(?: and (\d+) more)?: search_tools with detail "typescript" declares them\./u.exec(text)!;
    // Every tool is declared, named or counted, once.
    expect(declared.length + named[1]!.split(', ').length + Number(named[2] ?? 0)).toBe(30);
    expect(new Set([...declared, ...named[1]!.split(', ')]).size).toBe(declared.length + named[1]!.split(', ').length);
    // Too small for any name: only the count, which a budget above 0 always gets.
    expect(toolsDeclaration(tools, 60)).toMatch(/^ {2}\/\/ 30 more read-only tools: search_tools with detail "typescript" declares them\.$/mu);
    expect(toolsDeclaration(tools, 0)).toBe('');
  });

  it('skips a declaration too large for the budget and declares the smaller ones after it', () => {
    const big = {
      name: 'big',
      description: 'Big.',
      inputSchema: { type: 'object' as const, properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field_${i}`, { type: 'string' }])) },
    };
    const small = { name: 'small', description: 'Small.', inputSchema: { type: 'object' as const } };
    const text = toolsDeclaration([big, small], 300);
    expect(text).toContain('  small(args?: Record<string, unknown>): Promise<unknown>;');
    expect(text).toContain('// Also big: search_tools');
    expect(text).not.toContain('big(args');
  });
});
