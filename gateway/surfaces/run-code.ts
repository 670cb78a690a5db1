import { setTimeout as delay } from 'node:timers/promises';
import { ARGUMENT_ERRORS_META_KEY, argumentErrorsMeta, isArgumentError } from '../checks/input-check.ts';
import { JSON_DEPTH_CEILING, findLimitBreach } from '../checks/input-limits.ts';
import { randomUUID } from 'node:crypto';
import { abortSignalOf } from '../wire/cancellation.ts';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { CodeModeConfig } from '../../config/types.ts';
import { ERROR_META_KEY, toolErrorResult } from '../errors.ts';
import type { DispatchContext } from '../ports.ts';
import type { RequestView } from '../wire/requests.ts';
import type { VisibleCatalog } from '../policy/caller.ts';
import { RUN_CODE, resolveTool } from '../policy/tool-resolution.ts';
import type { CallAnswer, LimitName, RunOutcome, ToolErrorDetails } from '../sandbox/sandbox.ts';
import { inSpan } from '../obs/tracing.ts';
import type { CodeRunOutcome } from '../obs/outcomes.ts';
import { callThroughDispatcher, refuseScriptCall } from './call-tool.ts';
import { toolsDeclaration } from './code-declarations.ts';
import { BUDGET_META_KEY, RETRY_AFTER_META_KEY, requesterOf } from './tool-decision.ts';

/**
 * run_code on `/mcp/compact` (`compact.codeMode`): the caller's script runs in the sandbox
 * (gateway/sandbox/) and each of its `tools.<name>(args)` calls is dispatched by call_tool's own function
 * (`callThroughDispatcher`, `via: 'run_code'`): one resolveTool, read-only tools only, the caller's
 * scopes, arguments against the real schema, the output check, rate budgets spent per call, pins
 * honoured, one audit event per call carrying the run id. Nothing else reaches an upstream from a script.
 */

/** What `codeMode.limits` a breach names, in words the model can act on. */
const LIMIT_TEXT: Record<LimitName | 'concurrentRunsPerCredential' | 'concurrentRuns', string> = {
  memoryBytes: 'the script used more memory than a run may',
  instructions: 'the script ran more instructions than a run may (a loop that does not end?)',
  wallTimeMs: 'the run took longer than a run may, tool calls included',
  outputBytes: 'console lines plus the returned value are larger than a run may produce: return only what you need',
  toolCalls: 'the script made more tools.* calls than a run may',
  concurrentRunsPerCredential: 'this account already has as many runs in progress as it may (whatever credential form it uses): wait for one to end',
  concurrentRuns: 'the gateway has as many runs in progress as it may: retry shortly',
};

/**
 * The tools a caller's script may call that its tools/list does not already describe: visible to the
 * model, read-only, listed (not withheld, not held), not advertised. The advertised read anchors are
 * callable from a script too; their schemas are in the listing beside run_code, so declaring them again
 * would spend the description's bytes twice.
 */
export function codeDeclaredTools(visible: VisibleCatalog): Tool[] {
  return visible.tools
    .filter((t) => {
      const r = resolveTool(visible.catalog, visible.access, t.name, 'compact', true);
      return r.reachableByModel && r.readOnly && !r.withheld && !r.pinned.held && !r.advertised;
    })
    .map((t) => t.definition);
}

/**
 * run_code as listed for one visible catalogue: what a script is and may do, then the declarations of
 * {@link codeDeclaredTools} within `declarationBytes` (the rest named by search_tools' `detail: typescript`).
 * Kept short: it is in every tools/list of /mcp/compact (`npm run surfaces`: the compact target of 45%).
 */
export function runCodeDefinition(config: CodeModeConfig, visible: VisibleCatalog): Tool {
  const { limits } = config;
  const declarations = toolsDeclaration(codeDeclaredTools(visible), config.declarationBytes);
  return {
    name: RUN_CODE,
    title: 'Run a script over read-only tools',
    description:
      'Runs JavaScript (an async function body) that chains read-only tools, `await tools.<name>(args)`, and returns only what you need. ' +
      'A call resolves to the structured content of the result (else its text, parsed when JSON) or throws an Error. `return` JSON; ' +
      `console.log lines come back too. No network, files, timers or imports; at most ${limits.toolCalls} calls and ` +
      `${Math.round(limits.wallTimeMs / 1000)} s. The read-only tools listed here are callable too; tools that change state are refused: call them directly.` +
      (declarations ? `\n\n\`\`\`ts\n${declarations}\n\`\`\`` : ''),
    inputSchema: {
      type: 'object',
      properties: {
        code: {
          type: 'string',
          // No tool of any one upstream: the example must hold for every catalogue (try-out: a CPZAI-shaped one failed on CPZAI).
          description:
            'The script, e.g. `const r = await tools.<name>({ /* its arguments */ }); return r;` (names and result types: the declarations in the description).',
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        result: { description: 'What the script returned.' },
        logs: { type: 'array', items: { type: 'string' } },
        calls: { type: 'integer' },
      },
      required: ['result', 'logs', 'calls'],
    },
    // Every call it makes is a read-only tool's; a write is refused.
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/**
 * Runs the caller's script: bad arguments and a full concurrency limit are isError results before
 * anything starts. The run is one span (`run_code`) with each inner call's spans under it; a 2025-era
 * caller's `notifications/cancelled` finds it under its request id (upstream/inflight-calls.ts), and a
 * cancellation stops the sandbox and aborts the inner calls in flight. With a progressToken the caller
 * gets one progress notification per inner call. The answer: `{result, logs, calls}` (structured
 * content where the caller's revision has it), or isError `script_error` with the line and column (and an
 * uncaught ToolError's kind, argument errors and retry delay: {@link toolErrorMeta}),
 * `limit_exceeded` naming the `compact.codeMode.limits` key, `cancelled`.
 */
export async function runCode(
  d: DispatchContext,
  visible: VisibleCatalog,
  definition: Tool,
  callTool: Tool,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const { config, codeSandbox } = d.runtime;
  const limits = config.compact.codeMode.limits;
  const { request } = d;
  // The run's own outcome, one event (obs/outcomes.ts): mcp_code_runs_total, its duration, the request span, its audit line.
  const called = performance.now();
  const ended = (outcome: CodeRunOutcome['outcome'], more: Partial<CodeRunOutcome> = {}) =>
    d.runtime.outcomes.emit({
      kind: 'code_run',
      endpoint: d.surface.name,
      outcome,
      calls: 0,
      ...more,
      requester: requesterOf(d.caller, (request.envelope ?? request._meta) as Record<string, unknown> | undefined),
      arguments: args,
      elapsedMs: performance.now() - called,
    });
  const own = d.runtime.inputs.check(RUN_CODE, definition.inputSchema, args);
  if (!own.ok) {
    ended('refused');
    const result = toolErrorResult('invalid_arguments', `Invalid arguments for run_code: ${own.issues.join('; ')}.`);
    return { ...result, _meta: { ...result._meta, ...argumentErrorsMeta(own.errors) } };
  }
  const digest = d.caller.credential.digest;
  // Runs in progress count per account, as the rate budgets do: a key pair and a bearer token of one account share its slots.
  const slot = codeSandbox.slots.acquire(d.caller.credential.account ?? digest, limits);
  if ('full' in slot) {
    ended('refused', { limit: slot.full });
    return limitResult(slot.full, limits[slot.full]);
  }
  const runId = randomUUID();
  // A 2025-era cancellation arrives in a POST of its own and finds the run by its request id.
  const tracked = d.caller.era === 'legacy' ? d.runtime.inflightCalls.track(digest, request.id, request.signal, request.abort) : undefined;
  const signal = abortSignalOf(tracked?.signal) ?? request.signal;
  const token = request._meta?.progressToken;
  const { progressToken: _token, ...meta } = request._meta ?? {};
  let calls = 0;
  let done = 0;
  const pending = new Set<Promise<CallAnswer>>();
  const started = performance.now();
  try {
    const ran = await inSpan('run_code', { 'ai.cpz.gateway.run_id': runId }, () =>
      codeSandbox.run({
        code: args.code as string,
        limits,
        signal,
        // Each call its own span under the run's, where its decision's outcome is written (obs/outcomes.ts annotateSpan).
        call: (name, json, stopped) => {
          const n = ++calls;
          const call = inSpan('run_code call', { 'ai.cpz.gateway.run_id': runId, 'ai.cpz.gateway.call': n }, async (): Promise<CallAnswer> => {
            const callStarted = performance.now();
            // What this caller may call was decided under the configuration a reload has since replaced: no new upstream call.
            if (d.runtime.replacedByReload) {
              refuseScriptCall({ ...d, log: d.log, runId }, visible, name, 'configuration_reloaded', undefined, callStarted);
              return {
                ok: false,
                kind: 'configuration_reloaded',
                message: `tools.${name}: the gateway's configuration was reloaded while this script ran, and what this credential may call is decided again on its next request: run the script again`,
              };
            }
            // A direct call's whole body is bounded by limits.bodyBytes before it is parsed; a script's call had no bound but
            // the run's memory, and parsing 20 calls of 800 KB each held the event loop (security try-out): bounded alike.
            const { bodyBytes } = d.runtime.config.limits;
            // UTF-16 units never outnumber UTF-8 bytes: a longer string is over without being measured.
            if (typeof json === 'string' && (json.length > bodyBytes || Buffer.byteLength(json) > bodyBytes)) {
              refuseScriptCall({ ...d, log: d.log, runId }, visible, name, 'payload_too_large', `over limits.bodyBytes (${bodyBytes})`, callStarted);
              return {
                ok: false,
                kind: 'payload_too_large',
                message: `tools.${name}: the arguments' JSON is larger than limits.bodyBytes (${bodyBytes} bytes), the most a request body may carry: pass fewer or shorter values`,
              };
            }
            let parsed: unknown;
            try {
              parsed = JSON.parse(json);
            } catch {
              parsed = undefined;
            }
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
              // Refused before call_tool's dispatch, which records every other inner decision: recorded here (a review found it had no line).
              refuseScriptCall({ ...d, log: d.log, runId }, visible, name, 'invalid_arguments', parsed, callStarted);
              return {
                ok: false,
                kind: 'invalid_arguments',
                message: `tools.${name}: arguments must be one object (got ${json === undefined ? 'nothing' : json.slice(0, 40)})`,
              };
            }
            // The inner call's own request: its id names the run and the call (never the caller's, whose cancellation is the run's).
            const inner: RequestView = {
              ...request,
              id: `${String(request.id)}#${runId}.${n}`,
              signal: AbortSignal.any([signal, stopped]),
              abort: undefined,
              // The run's cancellation reaches the inner call through `signal` (the caller's own is the run's).
              cancellation: undefined,
              _meta: meta,
              inputResponses: undefined,
              requestState: () => undefined,
            };
            const answer = await callThroughDispatcher(
              { ...d, log: d.log, request: inner, project: (r) => r, callerStream: undefined, target: undefined, runId },
              visible,
              callTool,
              { name, arguments: parsed },
              'run_code',
            );
            done += 1;
            if (token !== undefined)
              void request
                .notify({ method: 'notifications/progress', params: { progressToken: token, progress: done, message: `tools.${name} answered` } })
                .catch(() => {});
            return innerAnswer(name, answer);
          });
          pending.add(call);
          void call.finally(() => pending.delete(call)).catch(() => {});
          return call;
        },
      }),
    );
    // A run stopped (cancelled, over a limit) with calls in flight: they were aborted with it, and their
    // decisions are recorded before the run's, as config/README.md "Audit" says (its line came first). At
    // most a second: a call waiting on its upstream's handshake is not aborted by the signal (review).
    if (pending.size) await Promise.race([Promise.allSettled(pending), delay(INNER_SETTLE_MS, undefined, { ref: false })]);
    const ms = performance.now() - started;
    const outcome = nestingChecked(ran);
    const kind = outcome.ok ? 'ok' : outcome.kind === 'crashed' ? 'error' : outcome.kind;
    ended(kind, { runId, calls: outcome.calls, durationMs: ms, ...(!outcome.ok && outcome.kind === 'limit' ? { limit: outcome.limit } : {}) });
    d.log.info({ runId, outcome: kind, calls: outcome.calls, ms: Math.round(ms) }, 'run_code finished');
    return withRun(answerOf(d, definition, outcome, limits), runId);
  } finally {
    tracked?.release();
    slot.release();
  }
}

/**
 * A returned value nested deeper than {@link JSON_DEPTH_CEILING} (checks/input-limits.ts) is a script error
 * naming that limit: the answer around it could not be written (the SDK re-serialises it recursively; a
 * 5,000-deep array answered -32603 while the run was logged and counted ok). Run again, it fails alike.
 */
function nestingChecked(outcome: RunOutcome): RunOutcome {
  if (!outcome.ok) return outcome;
  if (!findLimitBreach(JSON.parse(outcome.json), { jsonDepth: JSON_DEPTH_CEILING, stringLength: Infinity, arrayLength: Infinity, objectMembers: Infinity }))
    return outcome;
  return {
    ok: false,
    kind: 'script_error',
    name: 'Error',
    message: `the returned value nests deeper than ${JSON_DEPTH_CEILING} levels, the most an answer carries: return it flatter`,
    logs: outcome.logs,
    calls: outcome.calls,
  };
}

/** What a script's `tools.<name>()` resolves to: structured content, else the text (parsed when JSON); an error becomes its message. */
function innerAnswer(name: string, answer: Awaited<ReturnType<typeof callThroughDispatcher>>): CallAnswer {
  if ((answer as { resultType?: unknown }).resultType !== undefined && !('content' in answer))
    return { ok: false, message: `tools.${name} asked for input or started a task, which a script cannot answer: call it through call_tool` };
  const result = answer as CallToolResult;
  const texts = (result.content ?? []).filter((c) => c.type === 'text').map((c) => (c as { text: string }).text);
  if (result.isError) {
    // The gateway's error kind, as the result's _meta says it: a script branches on it instead of parsing the text.
    // With the offending arguments and a rate limit's retry delay and budget, as call_tool's _meta gives them.
    const meta = result._meta ?? {};
    const details = toolErrorDetails({
      kind: meta[ERROR_META_KEY],
      errors: meta[ARGUMENT_ERRORS_META_KEY],
      retryAfterMs: meta[RETRY_AFTER_META_KEY],
      budget: meta[BUDGET_META_KEY],
    });
    return { ok: false, message: `tools.${name}: ${texts.join('\n') || 'the tool failed'}`, ...details };
  }
  if (result.structuredContent !== undefined) return { ok: true, json: JSON.stringify(result.structuredContent) };
  if (texts.length !== (result.content ?? []).length) return { ok: true, json: JSON.stringify({ content: result.content }) };
  const text = texts.join('\n');
  try {
    JSON.parse(text);
    return { ok: true, json: text };
  } catch {
    return { ok: true, json: JSON.stringify(text) };
  }
}

function answerOf(d: DispatchContext, definition: Tool, outcome: RunOutcome, limits: CodeModeConfig['limits']): CallToolResult {
  const logs = lastLines(outcome.logs);
  if (outcome.ok) {
    const structured = { result: JSON.parse(outcome.json) as unknown, logs: outcome.logs, calls: outcome.calls };
    // The text is the structured answer whole, in every case: a revision without structured content (2025-03-26)
    // reads it there, and one shape is what a model can rely on (it was the bare result without console lines).
    const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    return d.project(result, definition.outputSchema as Record<string, unknown> | undefined);
  }
  switch (outcome.kind) {
    case 'script_error': {
      const where = outcome.line === undefined ? '' : ` at line ${outcome.line}${outcome.column === undefined ? '' : `, column ${outcome.column}`}`;
      const result = toolErrorResult('script_error', `Script error${where}: ${outcome.name}: ${outcome.message}${logs}`);
      return {
        ...result,
        _meta: {
          ...result._meta,
          ...(outcome.line === undefined ? {} : { 'ai.cpz.gateway/line': outcome.line }),
          ...(outcome.column === undefined ? {} : { 'ai.cpz.gateway/column': outcome.column }),
          ...toolErrorMeta(outcome.toolError),
        },
      };
    }
    case 'limit':
      return limitResult(outcome.limit, limits[outcome.limit], logs);
    case 'cancelled':
      return toolErrorResult('cancelled', 'The run was cancelled: the script was stopped and its tool calls in flight aborted.');
    case 'crashed':
      d.log.warn({ reason: outcome.message }, 'run_code sandbox failed');
      return toolErrorResult('internal', 'The sandbox failed while running the script; nothing more was run. Retry.');
  }
}

/** `_meta` key of a script error that is an uncaught ToolError: its `kind`, the failed tools.* call's error kind. */
const TOOL_ERROR_META_KEY = 'ai.cpz.gateway/tool_error';
/** Argument errors a ToolError carries at most (call_tool's own list holds the first 20). */
const TOOL_ERROR_ERRORS = 20;
/** UTF-16 units of one string an uncaught ToolError's details put in `_meta` at most (a script may have made them). */
const TOOL_ERROR_CHARS = 1024;

/**
 * The well-formed part of a failed call's details: `kind` and `budget` strings, `errors` an array of `{path, message}`
 * strings (the first {@link TOOL_ERROR_ERRORS}, nothing else of an entry kept), `retryAfterMs` a finite non-negative
 * number; anything else left out. `chars`: the longest a string may be, cut with a marker (what a script threw).
 */
function toolErrorDetails(raw: Record<string, unknown> | undefined, chars = Number.POSITIVE_INFINITY): ToolErrorDetails {
  if (!raw) return {};
  const bounded = (text: string) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);
  const details: ToolErrorDetails = {};
  if (typeof raw.kind === 'string') details.kind = bounded(raw.kind);
  if (Array.isArray(raw.errors)) {
    const errors = raw.errors
      .slice(0, TOOL_ERROR_ERRORS)
      .filter(isArgumentError)
      .map((e) => ({ path: bounded(e.path), message: bounded(e.message) }));
    if (errors.length) details.errors = errors;
  }
  const retry = raw.retryAfterMs;
  if (typeof retry === 'number' && Number.isFinite(retry) && retry >= 0) details.retryAfterMs = retry;
  if (typeof raw.budget === 'string') details.budget = bounded(raw.budget);
  return details;
}

/**
 * The `_meta` of a run that ended on an uncaught ToolError: its kind, the offending arguments (paths into that
 * tool's arguments, as call_tool lists them) and a rate limit's budget and retry delay, each re-checked and bounded.
 */
function toolErrorMeta(thrown: Record<string, unknown> | undefined): Record<string, unknown> {
  const { kind, errors, retryAfterMs, budget } = toolErrorDetails(thrown, TOOL_ERROR_CHARS);
  return {
    ...(kind === undefined ? {} : { [TOOL_ERROR_META_KEY]: kind }),
    ...(errors === undefined ? {} : argumentErrorsMeta(errors)),
    ...(budget === undefined ? {} : { [BUDGET_META_KEY]: budget }),
    ...(retryAfterMs === undefined ? {} : { [RETRY_AFTER_META_KEY]: retryAfterMs }),
  };
}

/** How long a stopped run's answer waits for its aborted inner calls to record their decisions (ms). */
const INNER_SETTLE_MS = 1000;

/** Console lines an error answer shows at most: the last ones, the run having ended at them. */
const ERROR_LOG_LINES = 20;
/** UTF-16 units of console lines an error answer shows at most (a limit's answer was up to outputBytes of them, 64 KiB). */
const ERROR_LOG_CHARS = 2048;

/**
 * The last console lines of a failed run for its error text (at most {@link ERROR_LOG_LINES} and
 * {@link ERROR_LOG_CHARS}, a longer last line cut from its start), saying how many earlier ones are not
 * shown; '' without any. A script that logged up to `outputBytes` filled the model's context with them.
 */
function lastLines(lines: readonly string[]): string {
  if (lines.length === 0) return '';
  const shown: string[] = [];
  let chars = 0;
  for (let i = lines.length - 1; i >= 0 && shown.length < ERROR_LOG_LINES && chars < ERROR_LOG_CHARS; i--) {
    const room = ERROR_LOG_CHARS - chars;
    const line = lines[i]!.length > room ? `…${lines[i]!.slice(lines[i]!.length - room + 1)}` : lines[i]!;
    shown.unshift(line);
    chars += line.length;
  }
  const hidden = lines.length - shown.length;
  return `\nconsole${hidden ? ` (the last ${shown.length} of ${lines.length} lines)` : ''}:\n${shown.join('\n')}`;
}

function limitResult(limit: keyof CodeModeConfig['limits'], value: number, logs = ''): CallToolResult {
  // A concurrency limit refuses a run before it starts; every other one stops a run under way.
  const what = limit === 'concurrentRuns' || limit === 'concurrentRunsPerCredential' ? 'Run refused, not started' : 'Run stopped';
  const result = toolErrorResult('limit_exceeded', `${what}: limit compact.codeMode.limits.${limit} (${value}) exceeded: ${LIMIT_TEXT[limit]}.${logs}`);
  return { ...result, _meta: { ...result._meta, 'ai.cpz.gateway/limit': limit } };
}

function withRun(result: CallToolResult, runId: string): CallToolResult {
  return { ...result, _meta: { ...result._meta, 'ai.cpz.gateway/runId': runId } };
}
