import type { ErrorObject } from 'ajv';
import { ATTR_GEN_AI_TOOL_NAME } from '@opentelemetry/semantic-conventions/incubating';
import { inSpan } from '../obs/tracing.ts';
import { contentHash } from './content-hash.ts';
import type { Logger } from '../obs/log.ts';
import { SchemaCompiler, pointerOf } from './schema-compiler.ts';

/**
 * At most this many offending paths and issues are reported; past it the issues end with how many
 * more there were. Why: an object with 50,000 unknown keys (an 828 KB request) answered 2.5 MB of issues.
 */
export const MAX_REPORTED_ISSUES = 20;

/** One offending argument: its JSON Pointer into the arguments (RFC 6901; '' for the whole object) and what is wrong. */
export interface ArgumentError {
  readonly path: string;
  readonly message: string;
}

/**
 * The `_meta` key of an invalid-arguments result, on every path a model may take: the gateway's own
 * checks (call_tool, search_tools, run_code) and the reference upstream's (a direct tools/call on `/mcp`
 * is checked by the upstream: upstream/server/call-tool.ts writes the same key and shape).
 */
export const ARGUMENT_ERRORS_META_KEY = 'ai.cpz/argument-errors';

/** Outcome of checking tools/call arguments: a value, never an exception. */
export type InputCheck = { ok: true; checked: boolean } | { ok: false; errors: ArgumentError[]; issues: string[] };

/** Whether `value` is one entry of an {@link ARGUMENT_ERRORS_META_KEY} list as the gateway writes it: `{path, message}` strings. */
export function isArgumentError(value: unknown): value is ArgumentError {
  const entry = value as { path?: unknown; message?: unknown } | null;
  return typeof entry === 'object' && entry !== null && typeof entry.path === 'string' && typeof entry.message === 'string';
}

/** The `_meta` of an invalid-arguments result: {@link ARGUMENT_ERRORS_META_KEY} listing the errors. */
export function argumentErrorsMeta(errors: readonly ArgumentError[]): Record<string, unknown> {
  return { [ARGUMENT_ERRORS_META_KEY]: errors };
}

/**
 * Checks tool arguments against an inputSchema before the gateway dispatches a call itself (the
 * compact surface's call_tool and search_tools). Validators are compiled lazily, once per distinct
 * schema (content hash, memoised per schema object, so a catalogue version hashes each schema once).
 * A schema that fails to compile is logged once and the arguments go on unchecked: the upstream
 * validates them anyway, so this check only saves a round trip and explains the failure better.
 */
export class InputValidator {
  private readonly compiler = new SchemaCompiler();
  private readonly keys = new WeakMap<object, string>();

  constructor(private readonly log: Logger) {}

  /**
   * The offending paths (JSON Pointer into the arguments, RFC 6901) with a one-line issue each, the
   * first {@link MAX_REPORTED_ISSUES} of them, then `and N more issues` when there were more.
   * Traced as an `input check` span of the request (obs/tracing.ts): the tool and the result, never a value.
   */
  check(tool: string, schema: object | undefined, args: Record<string, unknown>): InputCheck {
    return inSpan('input check', { [ATTR_GEN_AI_TOOL_NAME]: tool }, (span) => {
      const result = this.run(tool, schema, args);
      span?.setAttributes({ 'ai.cpz.gateway.check.ok': result.ok, 'ai.cpz.gateway.check.checked': result.ok ? result.checked : true });
      return result;
    });
  }

  private run(tool: string, schema: object | undefined, args: Record<string, unknown>): InputCheck {
    if (!schema) return { ok: true, checked: false };
    let key = this.keys.get(schema);
    if (key === undefined) this.keys.set(schema, (key = contentHash(schema)));
    const { entry, fresh } = this.compiler.compile(key, schema as Record<string, unknown>);
    if (fresh && 'unchecked' in entry && entry.unchecked)
      this.log.warn(
        { tool, err: entry.unchecked.join('; '), failureMode: 'pattern_unchecked' },
        'inputSchema has patterns the gateway cannot run; checking the rest of it',
      );
    if ('compileError' in entry) {
      if (fresh)
        this.log.warn({ tool, err: entry.compileError, failureMode: 'forward_unchecked' }, 'inputSchema failed to compile; arguments go upstream unchecked');
      return { ok: true, checked: false };
    }
    if (entry.validate(args)) return { ok: true, checked: true };
    // `if` errors only restate the failure of the `then` branch, already reported with its own path.
    const errors = (entry.validate.errors ?? []).filter((e) => e.keyword !== 'if');
    const shown = errors.slice(0, MAX_REPORTED_ISSUES).map(argumentErrorOf);
    const issues = shown.map(({ path, message }) => `${path || '(arguments)'} ${message}`);
    if (errors.length > shown.length) issues.push(`and ${(errors.length - MAX_REPORTED_ISSUES).toLocaleString('en-US')} more issues`);
    return { ok: false, errors: shown, issues };
  }
}

function argumentErrorOf(error: ErrorObject): ArgumentError {
  const path = pointerOf(error);
  if (error.keyword === 'required') return { path, message: 'is required' };
  if (error.keyword === 'additionalProperties') return { path, message: 'is not an argument of this tool' };
  if (error.keyword === 'enum')
    return { path, message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
  return { path, message: error.message ?? 'is invalid' };
}
