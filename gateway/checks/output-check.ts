import type { CallToolResult } from '@modelcontextprotocol/server';
import { ATTR_GEN_AI_TOOL_NAME } from '@opentelemetry/semantic-conventions/incubating';
import { inSpan } from '../obs/tracing.ts';
import type { Logger } from '../obs/log.ts';
import type { GatewayMetrics } from '../obs/metrics.ts';
import { SchemaCompiler, pointerOf, type Compiled } from './schema-compiler.ts';

/** What the output check reads of a catalogue tool (catalog/catalog.ts CatalogTool). */
export interface CheckedTool {
  readonly name: string;
  readonly upstream: string;
  /** The definition as advertised: its `outputSchema` is what a result is held to. */
  readonly definition: { readonly outputSchema?: unknown };
  /** Content hash of `definition.outputSchema` (content-hash.ts), the key of its compiled validator. */
  readonly outputSchemaKey?: string;
}

/**
 * Outcome of checking one tools/call result: a value, never an exception. A violation's `problems` (at
 * most ten, `; `-joined, each a JSON Pointer and what is wrong there) are in its `message` too.
 */
export type OutputCheck = { ok: true; checked: boolean } | { ok: false; paths: string[]; problems: string; message: string };

/**
 * Checks tools/call results against the tool's outputSchema. Validators are compiled lazily, once
 * per distinct schema (keyed by the schema's content hash, shared across tools and catalogue
 * versions; dialects as in schema-compiler.ts). A schema that fails to compile degrades only its
 * tool: served unchecked, logged once, counted in `mcp_output_schema_compile_failures_total`; a pattern
 * RE2 cannot run is left unchecked alone, logged once.
 */
export class OutputValidator {
  private readonly compiler = new SchemaCompiler();

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {}

  /**
   * Validates `structuredContent` only, and only for results that are not `isError` (an error result
   * has no promise to keep). Missing structuredContent on a tool with an outputSchema is a violation.
   * Traced as an `output check` span of the request (obs/tracing.ts).
   */
  check(tool: CheckedTool, result: CallToolResult): OutputCheck {
    return inSpan('output check', { [ATTR_GEN_AI_TOOL_NAME]: tool.name }, (span) => {
      const check = this.run(tool, result);
      span?.setAttributes({ 'ai.cpz.gateway.check.ok': check.ok, 'ai.cpz.gateway.check.checked': check.ok ? check.checked : true });
      return check;
    });
  }

  private run(tool: CheckedTool, result: CallToolResult): OutputCheck {
    const schema = tool.definition.outputSchema;
    if (!schema || !tool.outputSchemaKey || result.isError === true) return { ok: true, checked: false };
    const compiled = this.compile(tool, tool.outputSchemaKey, schema as Record<string, unknown>);
    if ('compileError' in compiled) return { ok: true, checked: false };
    if (result.structuredContent === undefined) {
      return violation(tool.name, [''], ['structuredContent is missing although the tool declares an outputSchema']);
    }
    if (compiled.validate(result.structuredContent)) return { ok: true, checked: true };
    const errors = compiled.validate.errors ?? [];
    const paths = [...new Set(errors.map(pointerOf))];
    return violation(
      tool.name,
      paths,
      errors.map((e) => `${pointerOf(e) || '(root)'} ${e.message ?? 'is invalid'}`),
    );
  }

  private compile(tool: CheckedTool, key: string, schema: Record<string, unknown>): Compiled {
    const { entry, fresh } = this.compiler.compile(key, schema);
    if (fresh && 'unchecked' in entry && entry.unchecked)
      this.log.warn(
        { tool: tool.name, upstream: tool.upstream, err: entry.unchecked.join('; '), failureMode: 'pattern_unchecked' },
        'outputSchema has patterns the gateway cannot run; checking the rest of it',
      );
    if (fresh && 'compileError' in entry) {
      this.metrics.outputSchemaCompileFailures.inc({ tool: tool.name });
      this.log.warn(
        { tool: tool.name, upstream: tool.upstream, err: entry.compileError, failureMode: 'serve_unchecked' },
        'outputSchema failed to compile; serving this tool without output checking',
      );
    }
    return entry;
  }
}

function violation(tool: string, paths: string[], details: string[]): OutputCheck {
  const problems = details.slice(0, 10).join('; ');
  return { ok: false, paths, problems, message: `Tool "${tool}" returned structuredContent that does not match its outputSchema: ${problems}` };
}
