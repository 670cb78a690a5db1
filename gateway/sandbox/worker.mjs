// @ts-check
/**
 * The code sandbox's worker thread (gateway/sandbox/sandbox.ts starts it): QuickJS compiled to WebAssembly
 * (quickjs-emscripten 0.32, the release build its package ships), one fresh QuickJS runtime and context per
 * run, so nothing a script leaves behind reaches the next one. A script sees the language's own built-ins
 * (JSON, Math, Date, Promise...), `console` (captured, never printed) and `tools`, a Proxy whose every
 * property is an async function asking the host thread to call that tool: no host object, no module
 * loader, no timers. Plain JavaScript so that Node runs it in a worker without the TypeScript hooks.
 *
 * Messages in: {type:'run', code, limits}, {type:'answer', id, ok, json | message}.
 * Messages out: {type:'call', id, name, json}, {type:'done', outcome}. One run at a time per worker.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RELEASE_SYNC, newQuickJSWASMModule, newVariant } from 'quickjs-emscripten';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** WebAssembly page, bytes. */
const PAGE_BYTES = 65536;
/** The QuickJS module's declared minimum memory (16 MiB), pages. */
const MODULE_PAGES = 256;
/** What the module and a fresh runtime use before the script's first allocation (about 5-8 MiB, measured), bytes. */
const BASE_BYTES = 8 << 20;

/**
 * A QuickJS module whose WebAssembly memory cannot grow past {@link BASE_BYTES} + `memoryBytes`: the
 * memory limit that holds. QuickJS's own allocator limit (`setMemoryLimit`) counts a block's usable size,
 * which this build cannot read (malloc_usable_size is 0 under Emscripten): it stops one allocation larger
 * than the limit, never many smaller ones (400 strings of 1 MB each passed a 16 MiB limit).
 * @param {number} memoryBytes
 */
async function load(memoryBytes) {
  const maximum = Math.max(MODULE_PAGES, Math.ceil((BASE_BYTES + memoryBytes) / PAGE_BYTES));
  const wasmMemory = new WebAssembly.Memory({ initial: MODULE_PAGES, maximum });
  // Emscripten's allocator grows this memory through its own `grow` when it runs out of room: a refusal
  // there is the memory limit reached. Whether the memory is at its maximum says less: it never shrinks
  // (a reused worker stays at the last run's peak) and at memoryBytes <= 8 MiB it starts there.
  const grow = wasmMemory.grow.bind(wasmMemory);
  wasmMemory.grow = (/** @type {number} */ pages) => {
    try {
      return grow(pages);
    } catch (error) {
      memoryRefused = true;
      throw error;
    }
  };
  return { memoryBytes, wasmMemory, quickjs: await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory })) };
}

/** Whether the run in progress was refused memory at its cap (see load): its failures then read as the memory limit. */
let memoryRefused = false;

/** The module, sized for the memory limit of the runs it serves (the host spawns the worker with it). */
let loaded = await load(/** @type {{ memoryBytes?: number } | undefined} */ (workerData)?.memoryBytes ?? 16 << 20);

/** The wrapper's text before the script's first character: line 1 columns are shifted by its length. */
const PREFIX = '(async () => { "use strict"; ';
const FILE = 'script.js';
/** The stack QuickJS may use, bytes (deep recursion answers "stack overflow" instead of crashing the worker). */
const STACK_BYTES = 512 * 1024;
/**
 * Promise jobs that count as one instruction tick. QuickJS's interrupt handler barely ticks in a loop of
 * awaits (`for(;;){await null}`: about 0.5 ticks per ms of CPU against 7-37 for plain loops, measured),
 * so each job the run executes is charged too: at 100 jobs a tick such a loop spends its budget at least
 * as fast as `let i=0; while(true){i++}` does. The jobs run in batches of this size between checks.
 */
const JOBS_PER_TICK = 100;
/**
 * Jobs run back to back after which a queue that empties with the script still pending, after the run
 * was refused memory at its cap, reads as an endless `.then` chain that ran out of memory (see settle). Each link of
 * `const next = () => Promise.resolve().then(next)` stays pending on the next, so the chain grows until
 * QuickJS cannot queue its next job: it drops that job, frees the chain and leaves nothing to run,
 * after 43,000-72,000 jobs at 16 MiB of WebAssembly memory (measured). Memory use itself is not sampled:
 * QuickJS's usage walk visits every object and cost a loop of awaits over 50,000 objects 25-77%.
 */
const CHAIN_JOBS = 10_000;

// The `tools` binding, built inside the context from one captured host function that is never a global.
// The name crosses as JSON, like the arguments: the host reads a QuickJS string as a C string, which
// would end it at a NUL ("list_strategies\u0000place_order" called list_strategies). JSON.stringify and
// JSON.parse are taken before the script runs, which may replace them: the text crossing to the host is
// always the language's own JSON (a replaced stringify answering "not json{" made the host's parse throw).
// The prelude returns its stringify, with which the host converts the script's return value too.
// A failed call's details (argument errors, a rate limit's retryAfterMs and budget) cross the same way: JSON text
// on the ToolError under DETAILS (an array [errors, retryAfterMs, budget], null for each one absent, so no property
// is looked up on a prototype the script may have changed), which the wrapper parses onto the error and removes.
const DETAILS = '__toolErrorDetails';
const PRELUDE = `(function (call) {
  const { stringify, parse } = JSON;
  const { defineProperty } = Object;
  const detailed = (error) => {
    try {
      const text = error[${JSON.stringify(DETAILS)}];
      if (typeof text !== 'string') return error;
      delete error[${JSON.stringify(DETAILS)}];
      const details = parse(text);
      const keys = ['errors', 'retryAfterMs', 'budget'];
      for (let i = 0; i < 3; i++)
        if (details[i] !== null) defineProperty(error, keys[i], { value: details[i], writable: true, enumerable: true, configurable: true });
    } catch {}
    return error;
  };
  const tools = new Proxy(Object.freeze(Object.create(null)), {
    get(_, name) {
      // 'then': tools is no thenable; 'toJSON': \`return tools\` serialises it as {} without calling a tool named toJSON (try-out).
      if (typeof name !== 'string' || name === 'then' || name === 'toJSON') return undefined;
      return function (args) {
        return call(stringify(name), stringify(args === undefined ? {} : args)).then(
          (text) => parse(text),
          (error) => {
            throw detailed(error);
          },
        );
      };
    },
    set() { return false; },
    defineProperty() { return false; },
    setPrototypeOf() { return false; },
  });
  Object.defineProperty(globalThis, 'tools', { value: tools, writable: false, configurable: false, enumerable: false });
  return (value) => stringify(value);
})`;

port.on('message', async (message) => {
  if (message.type === 'answer') return current?.answer(message);
  if (message.type !== 'run') return;
  // A run under another memory limit (a reload changed it) gets a module sized for it.
  if (message.limits.memoryBytes !== loaded.memoryBytes) loaded = await load(message.limits.memoryBytes);
  run(message);
});
port.postMessage({ type: 'ready' });

/** @type {{ answer(message: any): void } | undefined} */
let current;

/**
 * Runs one script to its end and posts {type:'done', outcome}: {ok:true, json, logs} or {ok:false, kind, message,
 * limit?, line?, column?, logs}. `limits`: memoryBytes, instructions (interrupt-handler ticks allowed),
 * wallTimeMs, outputBytes, toolCalls.
 * @param {{ code: string, limits: { memoryBytes: number, instructions: number, wallTimeMs: number, outputBytes: number, toolCalls: number } }} message
 */
function run({ code, limits }) {
  memoryRefused = false;
  const runtime = loaded.quickjs.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  const context = runtime.newContext();
  const deadline = Date.now() + limits.wallTimeMs;
  /** @type {string[]} */
  const logs = [];
  let outputBytes = 0;
  let ticks = 0;
  /** promise jobs executed so far (see {@link JOBS_PER_TICK}) */
  let jobs = 0;
  let calls = 0;
  /** @type {string | undefined} the limit broken, once: the interrupt handler then stops the script for good */
  let breach;
  /** @type {Map<number, import('quickjs-emscripten').QuickJSDeferredPromise>} */
  const pending = new Map();
  let nextId = 0;
  let finished = false;
  /** @type {import('quickjs-emscripten').QuickJSHandle | undefined} the script's promise */
  let promise;

  /** Jobs run back to back since the queue was last empty, and how many ran so before it last emptied (see {@link CHAIN_JOBS}). */
  let streak = 0;
  let lastStreak = 0;
  /** Sets `breach` when the run has spent its instructions (ticks and jobs together) or its wall time. */
  const spent = () => {
    if (breach === undefined && ticks + jobs / JOBS_PER_TICK > limits.instructions) breach = 'instructions';
    if (breach === undefined && Date.now() > deadline) breach = 'wallTimeMs';
    return breach !== undefined;
  };
  runtime.setInterruptHandler(() => {
    ticks += 1;
    return spent();
  });
  /** Executes the queued jobs in batches, charging each, until none is left or a limit is broken; a job's uncaught error is returned. */
  const drain = () => {
    for (;;) {
      const executed = runtime.executePendingJobs(JOBS_PER_TICK);
      if (executed.error) return executed.error;
      jobs += executed.value;
      streak += executed.value;
      if (executed.value < JOBS_PER_TICK) [lastStreak, streak] = [streak, 0];
      if (spent() || executed.value < JOBS_PER_TICK) return undefined;
    }
  };

  /** The length of what a console argument shows at least: a string's own, an object's JSON (0 when JSON cannot write it). */
  const shownLength = (/** @type {import('quickjs-emscripten').QuickJSHandle} */ handle) => {
    const type = context.typeof(handle);
    if (type === 'string') return stringLength(context, handle);
    if (type !== 'object') return 0;
    const json = context.callFunction(stringify, context.undefined, handle);
    if (json.error) {
      // Out of memory writing it: more than any line holds (the object's own text came back '' from dump()).
      let problem;
      try {
        problem = context.dump(json.error);
      } catch {
        problem = undefined;
      }
      if (json.error.alive) json.error.dispose();
      return /out of memory/i.test(String(problem?.message ?? problem)) ? Number.POSITIVE_INFINITY : 0;
    }
    try {
      return context.typeof(json.value) === 'string' ? stringLength(context, json.value) : 0;
    } finally {
      json.value.dispose();
    }
  };
  const console = context.newObject();
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const fn = context.newFunction(level, (...args) => {
      if (breach !== undefined) return;
      // A string longer than the whole output may hold is over the limit as it stands: reading it first (a rope of
      // 16 M characters built by doubling) can fail for want of memory and came back empty, the line lost silently.
      // So is an object holding one ({s}, [s]): measured as the language's JSON writes it, whose text dump() read as '' (review).
      if (args.some((h) => shownLength(h) > limits.outputBytes)) {
        breach = 'outputBytes';
        return;
      }
      const line = (level === 'log' || level === 'info' ? '' : `${level}: `) + args.map((h) => show(context, h)).join(' ');
      outputBytes += Buffer.byteLength(line) + 1;
      if (outputBytes > limits.outputBytes) breach = 'outputBytes';
      else logs.push(line);
    });
    context.setProp(console, level, fn);
    fn.dispose();
  }
  context.setProp(context.global, 'console', console);
  console.dispose();

  /**
   * The tool calls the script makes while it is evaluated, sent once its value is known to be the wrapper's
   * promise: a script that ran outside its function (see below) has none of its calls dispatched (review).
   * @type {{ type: 'call', id: number, name: string, json: string }[] | undefined}
   */
  let held = [];
  /** Set once the script has failed: what its thrown value's getters call is not dispatched. */
  let ending = false;
  const call = context.newFunction('call', (nameHandle, jsonHandle) => {
    let name;
    try {
      name = JSON.parse(context.getString(nameHandle));
    } catch {
      return { error: context.newError('tools: the tool name did not arrive as JSON') };
    }
    const json = context.getString(jsonHandle);
    // Reading a failed script's thrown value runs its getters: a call from one is refused, never dispatched (review).
    if (ending) return { error: context.newError('tools: the script has ended') };
    calls += 1;
    if (calls > limits.toolCalls) {
      breach = 'toolCalls';
      return { error: context.newError(`limit exceeded: toolCalls (${limits.toolCalls})`) };
    }
    const deferred = context.newPromise();
    const id = nextId++;
    pending.set(id, deferred);
    if (held) held.push({ type: 'call', id, name, json });
    else port.postMessage({ type: 'call', id, name, json });
    return deferred.handle;
  });
  const prelude = context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js'));
  /** The language's JSON.stringify as it was before the script ran (see PRELUDE). */
  const stringify = context.unwrapResult(context.callFunction(prelude, context.undefined, call));
  prelude.dispose();
  call.dispose();

  const finish = (/** @type {Record<string, unknown>} */ outcome) => {
    if (finished) return;
    finished = true;
    current = undefined;
    port.postMessage({ type: 'done', outcome: { ...outcome, logs, calls: Math.min(calls, limits.toolCalls) } });
    for (const deferred of pending.values()) deferred.dispose();
    if (promise?.alive) promise.dispose();
    stringify.dispose();
    try {
      context.dispose();
      runtime.dispose();
    } catch {
      // A runtime that cannot be freed cleanly is not reused: the host starts a fresh worker.
      process.exit(1);
    }
  };

  /** What the script's failure (a handle to the thrown value) means: a broken limit, else a script error. */
  const failed = (/** @type {import('quickjs-emscripten').QuickJSHandle} */ handle) => {
    ending = true;
    let error;
    try {
      error = context.dump(handle);
    } catch {
      error = {};
    }
    // dump() disposes a promise's handle itself (a thrown Promise): a second dispose crashed the worker (review).
    if (handle.alive) handle.dispose();
    const message = typeof error === 'object' && error !== null ? String(error.message ?? '') : String(error);
    // Out of memory, QuickJS may fail to build its InternalError too and leave null as the exception (a Map
    // or Set growing its table): when the run was refused memory at its cap, that is the memory limit (a
    // script's own `throw null` after reaching the cap and catching it reads so too).
    const exhausted = /out of memory/i.test(message) || (error === null && memoryRefused);
    const limit = breach ?? (exhausted ? 'memoryBytes' : undefined);
    if (limit) return finish({ ok: false, kind: 'limit', limit });
    // Null without a refusal at the cap: a script's own `throw null`, or an allocation QuickJS refused inside
    // its own allocator limit (one block larger than memoryBytes); say both rather than "Error: null".
    if (error === null)
      return finish({
        ok: false,
        kind: 'script_error',
        name: 'Error',
        message: `the script failed with null, no error object: it threw null, or ran out of memory (memoryBytes ${limits.memoryBytes}) where QuickJS could not build one`,
      });
    // A thrown value that is no Error (`throw { code: 42 }`): shown as JSON, not as an empty message (try-out).
    // What QuickJS could not dump (a Proxy whose properties throw) comes back as ''.
    if (error === '')
      return finish({
        ok: false,
        kind: 'script_error',
        name: 'Error',
        message: 'the script threw a value that is no Error and shows as nothing: an empty string, or an object whose properties throw (a Proxy)',
      });
    if (typeof error === 'object' && error !== null && typeof error.message !== 'string')
      return finish({ ok: false, kind: 'script_error', name: 'Error', message: `the script threw a value that is no Error: ${thrownText(error)}` });
    const name = typeof error === 'object' && error !== null && typeof error.name === 'string' ? error.name : 'Error';
    const located = typeof error === 'object' && error !== null ? locate(String(error.stack ?? ''), code) : undefined;
    const stack = /stack overflow/i.test(message) ? ` (recursion or nesting deeper than the sandbox's ${STACK_BYTES / 1024} KiB stack holds)` : '';
    if (located?.pastEnd && name === 'SyntaxError') {
      // QuickJS names the token it met there, the wrapper's own `}`: say what the script left unfinished instead.
      return finish({
        ok: false,
        kind: 'script_error',
        name,
        message: 'unexpected end of the script: a bracket, brace, string or expression is not closed',
        line: located.line,
      });
    }
    const where = located && { line: located.line, ...(located.column === undefined ? {} : { column: located.column }) };
    // The error's own text is output too: bounded as console lines and the return value are (a 7 MB message was answered whole: try-out).
    const shownName = cut(name, NAME_BYTES);
    const toolError = name === 'ToolError' ? toolErrorOf(error) : undefined;
    return finish({
      ok: false,
      kind: 'script_error',
      name: shownName,
      message: cut(`${message}${stack}`, limits.outputBytes - Buffer.byteLength(shownName)),
      ...where,
      ...(toolError ? { toolError } : {}),
    });
  };

  // The script is spliced into the wrapper as text, so one that closes the wrapper's function (`})(); (function () {`)
  // runs on outside it and leaves something other than the wrapper's promise (try-out: its handle was freed twice,
  // and the worker's uncaught error ended the gateway). QuickJS's Function constructor splices its body the same
  // way; V8's parses a body on its own: a script that is no async function body there, while the wrapper compiles,
  // is refused before it runs, naming V8's reason. The two parsers read a raw U+2028/U+2029 apart (V8 starts a line
  // there, where an HTML-like `-->` comment may follow; QuickJS does not: review), so a script holding one is
  // refused first. Whatever else they might read apart is caught after the evaluation: a value that is not a
  // promise is refused, and no tool call the script made meanwhile is sent.
  const separator = /[\u2028\u2029]/.exec(code);
  if (separator)
    return finish({
      ok: false,
      kind: 'script_error',
      name: 'SyntaxError',
      message: `the script holds a raw U+${separator[0].codePointAt(0).toString(16).toUpperCase()} line separator, which parsers read apart: write it as an escape (\\u${separator[0].codePointAt(0).toString(16)}) in a string`,
    });
  const notBody = bodyProblem(code);
  if (notBody !== undefined) {
    const compiled = context.evalCode(`${PREFIX}${code}\n})()`, FILE, { type: 'global', compileOnly: true });
    if (compiled.error) return failed(compiled.error);
    compiled.value.dispose();
    return finish({ ok: false, kind: 'script_error', name: 'SyntaxError', message: `${NOT_A_BODY}: ${notBody}` });
  }
  const evaluated = context.evalCode(`${PREFIX}${code}\n})()`, FILE, { type: 'global' });
  if (evaluated.error) return failed(evaluated.error);
  promise = evaluated.value;
  const script = promise;
  // getPromiseState hands back the value's own handle for a value that is no promise (disposed once, by finish).
  const first = context.getPromiseState(script);
  if (first.notAPromise) return finish({ ok: false, kind: 'script_error', name: 'SyntaxError', message: RAN_OUTSIDE });
  // A settled promise's state holds a new handle to its value or error: freed here, settle reads it again.
  if (first.type === 'fulfilled') first.value.dispose();
  else if (first.type === 'rejected') first.error.dispose();
  for (const message of held) port.postMessage(message);
  held = undefined;

  /** Runs the jobs the last settlement queued, then finishes if the script's promise settled. */
  const settle = () => {
    const error = drain();
    if (error) return failed(error);
    if (breach !== undefined) return finish({ ok: false, kind: 'limit', limit: breach });
    const state = context.getPromiseState(script);
    if (state.type === 'pending') {
      if (pending.size === 0) {
        // An endless .then chain (`const next = () => Promise.resolve().then(next)`) keeps every link pending
        // on the next: memory runs out, QuickJS drops the job it has no memory to queue and frees the chain,
        // and the queue empties with nothing left to settle the script (CHAIN_JOBS). A script that runs 10,000
        // awaits in a row and then awaits what nothing settles reads so too, after being refused memory.
        if (lastStreak >= CHAIN_JOBS && memoryRefused) return finish({ ok: false, kind: 'limit', limit: 'memoryBytes' });
        return finish({
          ok: false,
          kind: 'script_error',
          name: 'Error',
          message: 'the script awaits a promise nothing can settle (there are no timers; await tools.* calls only)',
        });
      }
      return;
    }
    if (state.type === 'rejected') return failed(state.error);
    // A function or symbol has no JSON form (JSON.stringify gives undefined): said, not answered as null (review:
    // `return tools.list_accounts`, the call forgotten, answered null).
    const returned = context.typeof(state.value);
    if (returned === 'function' || returned === 'symbol') {
      state.value.dispose();
      return finish({
        ok: false,
        kind: 'script_error',
        name: 'TypeError',
        message: `the script returned a ${returned}, which has no JSON form: return data (call the function and await its result)`,
      });
    }
    const text = context.callFunction(stringify, context.undefined, state.value);
    state.value.dispose();
    if (text.error) return failed(text.error);
    const out = context.typeof(text.value) === 'string' ? context.getString(text.value) : 'null';
    text.value.dispose();
    if (breach !== undefined) return finish({ ok: false, kind: 'limit', limit: breach });
    // Refused memory at its cap and went on (the script caught the out-of-memory error): the limit was broken all the same (try-out).
    if (memoryRefused) return finish({ ok: false, kind: 'limit', limit: 'memoryBytes' });
    if (outputBytes + Buffer.byteLength(out) > limits.outputBytes) return finish({ ok: false, kind: 'limit', limit: 'outputBytes' });
    return finish({ ok: true, json: out });
  };

  current = {
    answer(
      /** @type {{ id: number, ok: boolean, json?: string, message?: string, kind?: string, errors?: unknown[], retryAfterMs?: number, budget?: string }} */ message,
    ) {
      const deferred = pending.get(message.id);
      if (!deferred || finished) return;
      pending.delete(message.id);
      if (message.ok) {
        const value = context.newString(message.json ?? 'null');
        deferred.resolve(value);
        value.dispose();
      } else {
        // QuickJS takes the text as a C string: a NUL (a name echoed in the refusal) is written as its escape instead of ending it.
        const text = (message.message ?? 'tool call failed').replaceAll('\0', '\\u0000');
        const error = context.newError({ name: 'ToolError', message: text });
        // The gateway's error kind (invalid_arguments, rate_limited, upstream_timeout, ...): a script branches on it.
        if (typeof message.kind === 'string') {
          const kind = context.newString(message.kind);
          context.setProp(error, 'kind', kind);
          kind.dispose();
        }
        // The offending arguments, a rate limit's retryAfterMs and budget: parsed onto the error by the prelude (see DETAILS).
        const details = [message.errors ?? null, message.retryAfterMs ?? null, message.budget ?? null];
        if (details.some((value) => value !== null)) {
          const text = context.newString(JSON.stringify(details));
          context.defineProp(error, DETAILS, { value: text, configurable: true });
          text.dispose();
        }
        deferred.reject(error);
        error.dispose();
      }
      deferred.dispose();
      settle();
    },
  };
  settle();
}

/** Why a script that is no async function body is refused (V8's reason follows). */
const NOT_A_BODY = 'the script is not the body of an async function (a `}` or `)` with no opening one in it closes the function it runs in), so it is not run';
/** Why a script that ran on outside its function is refused. */
const RAN_OUTSIDE = 'the script closes the async function it is the body of and ran outside it: none of its tool calls was sent';

const AsyncFunction = (async () => {}).constructor;

/**
 * Why `code` does not parse as the body of a strict async function on its own (V8's SyntaxError message), else
 * undefined. V8's Function constructor compiles it, never runs it, in the worker: no QuickJS memory or
 * instructions are spent. An error other than a SyntaxError (a stack overflow) decides nothing: QuickJS does.
 * @param {string} code
 */
function bodyProblem(code) {
  try {
    new AsyncFunction(`"use strict"; ${code}`);
    return undefined;
  } catch (error) {
    return error instanceof SyntaxError ? error.message : undefined;
  }
}

/** UTF-8 bytes of a thrown error's name a script error shows at most (its message has the rest of outputBytes). */
const NAME_BYTES = 256;

/**
 * `text` within `max` UTF-8 bytes: whole when it fits, else cut at a character boundary and ended with a
 * marker saying so and naming `codeMode.limits.outputBytes` (the marker counted in `max`).
 * @param {string} text
 * @param {number} max
 */
function cut(text, max) {
  if (text.length <= max / 3 || Buffer.byteLength(text) <= max) return text;
  const marker = `… (cut: longer than codeMode.limits.outputBytes allows, ${Buffer.byteLength(text)} bytes)`;
  const room = new Uint8Array(Math.max(0, max - Buffer.byteLength(marker)));
  // encodeInto writes whole characters only (a surrogate pair is never split) and stops at the room's end.
  const { read } = new TextEncoder().encodeInto(text, room);
  return `${text.slice(0, read)}${marker}`;
}

/** Argument errors an uncaught ToolError passes on at most (call_tool lists the first 20 too). */
const TOOL_ERROR_ERRORS = 20;

/**
 * What an uncaught error named ToolError carries (as dump() shows its own properties): `kind`, `errors` (the first
 * {@link TOOL_ERROR_ERRORS}), `retryAfterMs`, `budget`, each only of its type; undefined when none is. The script may
 * have thrown its own: run-code.ts checks every shape and bounds every string again before any reaches `_meta`.
 * @param {Record<string, unknown>} error
 */
function toolErrorOf(error) {
  /** @type {Record<string, unknown>} */
  const out = {};
  if (typeof error.kind === 'string') out.kind = error.kind.slice(0, 200);
  if (Array.isArray(error.errors)) out.errors = error.errors.slice(0, TOOL_ERROR_ERRORS);
  if (typeof error.retryAfterMs === 'number') out.retryAfterMs = error.retryAfterMs;
  if (typeof error.budget === 'string') out.budget = error.budget.slice(0, 200);
  return Object.keys(out).length ? out : undefined;
}

/** A thrown value that is no Error, as JSON (500 characters at most), or its String() when JSON cannot write it. */
function thrownText(value) {
  let text;
  try {
    text = JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/**
 * A console argument as a line shows it: strings as they are (a NUL inside too), a BigInt as `1n`, a
 * function as `[Function: name]`, a symbol as `Symbol(description)`, an Error by its name and message,
 * everything else as JSON, and what JSON cannot write (a cycle, a BigInt inside) as its String(), `[object Object]`:
 * never an exception, which would end the script for a log line (try-out: `console.log(1n)` did).
 * @param {import('quickjs-emscripten').QuickJSContext} context
 * @param {import('quickjs-emscripten').QuickJSHandle} handle
 */
function show(context, handle) {
  const type = context.typeof(handle);
  if (type === 'string') return readString(context, handle);
  if (type === 'function' || type === 'symbol') {
    const property = context.getProp(handle, type === 'function' ? 'name' : 'description');
    const name = context.typeof(property) === 'string' ? readString(context, property) : '';
    property.dispose();
    return type === 'function' ? `[Function${name ? `: ${name}` : ''}]` : `Symbol(${name})`;
  }
  let value;
  try {
    value = context.dump(handle);
  } catch {
    return `[${type}]`;
  }
  if (typeof value === 'bigint') return `${value}n`;
  if (value && typeof value === 'object' && 'message' in value && 'name' in value) return `${value.name}: ${value.message}`;
  // An object QuickJS's JSON could not write comes back as its String() ("[object Object]"): shown as it is, unquoted.
  if (typeof value === 'string') return value;
  try {
    return value === undefined ? 'undefined' : JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch {
    return String(value);
  }
}

/**
 * A QuickJS string's length (UTF-16 code units), read as its `length` property: `getLength` answers undefined for a
 * string QuickJS keeps as a rope (built by concatenation), and `getString` reads such a one as '' when flattening it fails.
 * @param {import('quickjs-emscripten').QuickJSContext} context
 * @param {import('quickjs-emscripten').QuickJSHandle} handle
 */
function stringLength(context, handle) {
  const length = context.getProp(handle, 'length');
  try {
    return context.getNumber(length);
  } finally {
    length.dispose();
  }
}

/**
 * A QuickJS string whole. The host reads a string as a C string, which ends at a NUL; one read short of
 * its length is read again through QuickJS's own JSON (which writes the NUL as `\u0000`), inside an array.
 * @param {import('quickjs-emscripten').QuickJSContext} context
 * @param {import('quickjs-emscripten').QuickJSHandle} handle
 */
function readString(context, handle) {
  const text = context.getString(handle);
  if (text.length === context.getLength(handle)) return text;
  const box = context.newArray();
  try {
    context.setProp(box, 0, handle);
    return /** @type {string[]} */ (context.dump(box))[0] ?? text;
  } finally {
    box.dispose();
  }
}

/**
 * The line and column of the script's own frame in a QuickJS stack (`script.js:L:C`), the wrapper's
 * prefix taken off line 1's column. Undefined when the stack names no script position.
 * @param {string} stack
 * @param {string} code
 */
function locate(stack, code) {
  const match = new RegExp(`${FILE.replace('.', '\\.')}:(\\d+):?(\\d+)?`).exec(stack);
  if (!match) return undefined;
  const line = Number(match[1]);
  const raw = match[2] === undefined ? undefined : Number(match[2]);
  const lines = code.split('\n').length;
  // Past the script: in the wrapper's closing `})()`, which the script left open.
  if (line > lines) return { line: lines, pastEnd: true };
  const column = raw === undefined ? undefined : line === 1 ? Math.max(1, raw - PREFIX.length) : raw;
  return column === undefined ? { line } : { line, column };
}
