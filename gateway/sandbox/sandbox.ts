import { AsyncResource } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';

/**
 * The code sandbox: runs a caller's script in QuickJS compiled to WebAssembly (quickjs-emscripten 0.32)
 * on a worker thread (worker.mjs), so a runaway script never holds the gateway's event loop (health and
 * every other request keep being answered while it is stopped). Each run gets a fresh QuickJS runtime
 * and context: nothing is shared between runs. The script is the body of an async function; it sees
 * the language's built-ins, `console` (captured) and `tools.<name>(args)`, which asks {@link RunRequest.call}
 * and resolves to the tool's result (or rejects with a ToolError the script may catch).
 *
 * Limits ({@link SandboxLimits}, `codeMode.limits` in the configuration), each breach a {@link RunOutcome}
 * naming it: memory (the WebAssembly memory QuickJS runs in, capped per worker), instructions (the interrupt handler's ticks, and the promise jobs the run executes), wall time (the
 * worker's own deadline for a busy script, and this thread's timer, which terminates the worker, for any
 * other), output bytes (console lines plus the return value's JSON), tool calls per run. Concurrency
 * is the caller's business ({@link RunSlots}). A worker whose run ended cleanly is kept for the next
 * run (a fresh QuickJS runtime each time); one that broke a limit, was cancelled or failed is
 * terminated.
 */

/** The limits of one run (see config/schema.json `codeMode.limits`). */
export interface SandboxLimits {
  /** QuickJS heap, bytes. */
  memoryBytes: number;
  /** Ticks allowed: QuickJS calls the interrupt handler about every 10,000 branches or calls; every 100 promise jobs count one tick too (worker.mjs). */
  instructions: number;
  /** Wall time of the whole run, tool calls included, ms. */
  wallTimeMs: number;
  /** Console lines plus the return value's JSON, UTF-8 bytes. */
  outputBytes: number;
  /** `tools.*` calls per run. */
  toolCalls: number;
}

/** The limit a run broke, by its key under `codeMode.limits`. */
export type LimitName = keyof SandboxLimits;

/**
 * What a failed `tools.*` call tells the script besides its message, each a property of the ToolError it throws:
 * `kind` the gateway's error kind (invalid_arguments, rate_limited, ...), `errors` the offending arguments as
 * call_tool's `_meta["ai.cpz/argument-errors"]` lists them (JSON Pointers into that tool's arguments), and for a
 * rate-limited call `retryAfterMs` and the `budget` that ran out (its `_meta["ai.cpz.gateway/..."]`).
 */
export interface ToolErrorDetails {
  kind?: string;
  errors?: { path: string; message: string }[];
  retryAfterMs?: number;
  budget?: string;
}

/** A tools.* call's answer to the script: the result's JSON, or the message and details of the ToolError it throws. */
export type CallAnswer = { ok: true; json: string } | ({ ok: false; message: string } & ToolErrorDetails);

export interface RunRequest {
  code: string;
  limits: SandboxLimits;
  /** One tool call of the script: `name` as written, `json` its arguments as JSON. Aborted when the run ends early. */
  call: (name: string, json: string, signal: AbortSignal) => Promise<CallAnswer>;
  /** Stops the run (terminating the worker) and aborts calls in flight: the outcome is `cancelled`. */
  signal?: AbortSignal;
}

/** How a run ended. `logs`: the captured console lines; `calls`: tools.* calls the script made. */
export type RunOutcome = { logs: string[]; calls: number } & (
  | { ok: true; json: string }
  // `toolError`: an uncaught error named ToolError, what its own properties say (worker.mjs; the script may have made it, so unchecked).
  | { ok: false; kind: 'script_error'; name: string; message: string; line?: number; column?: number; toolError?: Record<string, unknown> }
  | { ok: false; kind: 'limit'; limit: LimitName }
  | { ok: false; kind: 'cancelled' }
  | { ok: false; kind: 'crashed'; message: string }
);

const WORKER_URL = new URL('./worker.mjs', import.meta.url);

/** A worker ready for a run. */
interface Slot {
  worker: Worker;
  ready: Promise<void>;
}

export class CodeSandbox {
  /** Runs in progress per account and in total. */
  readonly slots = new RunSlots();
  private readonly idle: Slot[] = [];
  private closed = false;

  /** @param maxIdle - workers kept warm between runs. */
  constructor(private readonly maxIdle = 2) {}

  /** Runs one script to its outcome; never throws for anything the script does. */
  async run(request: RunRequest): Promise<RunOutcome> {
    if (request.signal?.aborted) return { ok: false, kind: 'cancelled', logs: [], calls: 0 };
    const slot = this.idle.pop() ?? this.spawn(request.limits.memoryBytes);
    const inflight = new AbortController();
    let calls = 0;
    let reusable = false;
    const outcome = await new Promise<RunOutcome>((resolve) => {
      let settled = false;
      const end = (result: RunOutcome, keep = false) => {
        if (settled) return;
        settled = true;
        reusable = keep;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        slot.worker.off('message', bound);
        slot.worker.off('error', onError);
        slot.worker.off('exit', onExit);
        resolve(result);
      };
      const onAbort = () => end({ ok: false, kind: 'cancelled', logs: [], calls });
      let timer: NodeJS.Timeout | undefined;
      const onError = (error: Error) => end({ ok: false, kind: 'crashed', message: error.message, logs: [], calls });
      const onExit = (code: number) => end({ ok: false, kind: 'crashed', message: `sandbox worker exited (${code})`, logs: [], calls });
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'done') return end(message.outcome, message.outcome.ok || message.outcome.kind === 'script_error');
        if (message.type !== 'call') return;
        calls += 1;
        request.call(message.name, message.json, inflight.signal).then(
          (answer) => !settled && slot.worker.postMessage({ type: 'answer', id: message.id, ...answer }),
          (error: unknown) => !settled && slot.worker.postMessage({ type: 'answer', id: message.id, ok: false, message: (error as Error).message }),
        );
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const bound = AsyncResource.bind(onMessage);
      slot.worker.on('message', bound);
      slot.worker.on('error', onError);
      slot.worker.on('exit', onExit);
      slot.ready.then(
        () => {
          if (settled) return;
          // The script may be awaiting tool calls, where its own deadline cannot fire: this timer stops it.
          timer = setTimeout(() => end({ ok: false, kind: 'limit', limit: 'wallTimeMs', logs: [], calls }), request.limits.wallTimeMs + 50);
          slot.worker.postMessage({ type: 'run', code: request.code, limits: request.limits });
        },
        (error: unknown) => end({ ok: false, kind: 'crashed', message: (error as Error).message, logs: [], calls }),
      );
    });
    inflight.abort(new Error('the run ended'));
    if (reusable && !this.closed && this.idle.length < this.maxIdle) this.idle.push(slot);
    else void slot.worker.terminate();
    return outcome;
  }

  /** Starts a worker ahead of the first run (loading QuickJS takes a moment), when none is idle; `memoryBytes`: the runs' limit. */
  warm(memoryBytes?: number): void {
    if (!this.closed && this.idle.length === 0) this.idle.push(this.spawn(memoryBytes));
  }

  /** Terminates every idle worker; runs in progress end with their own outcome. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((slot) => slot.worker.terminate()));
  }

  /** A worker whose QuickJS memory is sized for runs limited to `memoryBytes` (a run under another limit resizes it). */
  private spawn(memoryBytes?: number): Slot {
    // The worker's own JavaScript heap is a backstop only: the script's memory is QuickJS's WebAssembly
    // memory, which the worker caps at codeMode.limits.memoryBytes (plus the module's own). Its stack is
    // 16 MiB: QuickJS's own check (512 KiB of WebAssembly's stack, worker.mjs) must fire before the
    // thread's native stack, which the WebAssembly frames use too, runs out: at Node's default 4 MiB a
    // 100,000-deep value returned or passed to a tool killed the worker ("Maximum call stack size exceeded").
    // The pages are only mapped as they are touched.
    const worker = new Worker(WORKER_URL, {
      workerData: { memoryBytes },
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 16 },
    });
    worker.unref();
    // Always heard, whether a run is in progress or not: a worker failing between runs (after it reported its
    // outcome) emitted 'error' with no listener, which ended the gateway (try-out). A failed worker is never reused.
    const forget = () => {
      const at = this.idle.findIndex((slot) => slot.worker === worker);
      if (at >= 0) this.idle.splice(at, 1);
    };
    worker.on('error', forget);
    worker.on('exit', forget);
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        if (message.type !== 'ready') return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    ready.catch(() => {});
    return { worker, ready };
  }
}

type WorkerMessage = { type: 'ready' } | { type: 'call'; id: number; name: string; json: string } | { type: 'done'; outcome: RunOutcome };

/**
 * Counts runs in progress per account (the key given: auth/credentials.ts `account`, else the credential's
 * digest) and in total, so a caller cannot tie up the sandbox's workers: `acquire` answers the limit that
 * is full, else a release function.
 */
export class RunSlots {
  private readonly perAccount = new Map<string, number>();
  private total = 0;

  acquire(
    account: string,
    { concurrentRunsPerCredential, concurrentRuns }: { concurrentRunsPerCredential: number; concurrentRuns: number },
  ): { full: 'concurrentRunsPerCredential' | 'concurrentRuns' } | { release: () => void } {
    const mine = this.perAccount.get(account) ?? 0;
    if (mine >= concurrentRunsPerCredential) return { full: 'concurrentRunsPerCredential' };
    if (this.total >= concurrentRuns) return { full: 'concurrentRuns' };
    this.perAccount.set(account, mine + 1);
    this.total += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = (this.perAccount.get(account) ?? 1) - 1;
        if (left > 0) this.perAccount.set(account, left);
        else this.perAccount.delete(account);
      },
    };
  }
}
