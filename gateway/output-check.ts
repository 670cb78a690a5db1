import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CatalogTool } from './catalog.ts';
import type { Logger } from './log.ts';
import type { GatewayMetrics } from './metrics.ts';

/** Outcome of checking one tools/call result: a value, never an exception. */
export type OutputCheck =
  | { ok: true; checked: boolean }
  | { ok: false; paths: string[]; message: string };

type Dialect = '2020-12' | '2019-09' | 'draft-07';
type Compiled = { validate: ValidateFunction } | { compileError: string };

/**
 * Checks tools/call results against the tool's outputSchema. Validators are compiled lazily, once
 * per distinct schema (keyed by the schema's content hash, shared across tools and catalogue
 * versions). Dialect by `$schema`: 2020-12 (also when absent, as the spec's default dialect says),
 * 2019-09, or draft-07/06. A schema that fails to compile degrades only its tool: served unchecked,
 * logged once, counted in `mcp_output_schema_compile_failures_total`.
 */
export class OutputValidator {
  private readonly compiled = new LRUCache<string, Compiled>({ max: 5000 });
  private readonly engines = new Map<Dialect, Ajv>();

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {}

  /**
   * Validates `structuredContent` only, and only for results that are not `isError` (an error result
   * has no promise to keep). Missing structuredContent on a tool with an outputSchema is a violation.
   */
  check(tool: CatalogTool, result: CallToolResult): OutputCheck {
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
    return violation(tool.name, paths, errors.map((e) => `${pointerOf(e) || '(root)'} ${e.message ?? 'is invalid'}`));
  }

  private compile(tool: CatalogTool, key: string, schema: Record<string, unknown>): Compiled {
    const hit = this.compiled.get(key);
    if (hit) return hit;
    let entry: Compiled;
    try {
      const engine = this.engine(dialectOf(schema));
      if (typeof schema.$id === 'string' && engine.getSchema(schema.$id)) engine.removeSchema(schema.$id);
      entry = { validate: engine.compile(schema) };
    } catch (error) {
      entry = { compileError: (error as Error).message };
      this.metrics.outputSchemaCompileFailures.inc({ tool: tool.name });
      this.log.warn({ tool: tool.name, upstream: tool.upstream, err: entry.compileError, failureMode: 'serve_unchecked' }, 'outputSchema failed to compile; serving this tool without output checking');
    }
    this.compiled.set(key, entry);
    return entry;
  }

  private engine(dialect: Dialect): Ajv {
    let engine = this.engines.get(dialect);
    if (!engine) {
      const options = { strict: false, allErrors: true, validateFormats: true };
      engine = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
      addFormats.default(engine);
      this.engines.set(dialect, engine);
    }
    return engine;
  }
}

/** The dialect a schema declares; no `$schema` means 2020-12 (MCP 2026-07-28, basic §JSON Schema usage). */
function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema.replace(/#$/, '').replace(/^https?:\/\//, '') : undefined;
  if (declared === undefined || declared === 'json-schema.org/draft/2020-12/schema') return '2020-12';
  if (declared === 'json-schema.org/draft/2019-09/schema') return '2019-09';
  if (declared === 'json-schema.org/draft-07/schema' || declared === 'json-schema.org/draft-06/schema') return 'draft-07';
  throw new Error(`unsupported JSON Schema dialect ${String(schema.$schema).slice(0, 100)}`);
}

/** JSON Pointer (RFC 6901) of the failing value, into structuredContent. */
function pointerOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const child = error.keyword === 'required' ? params.missingProperty : error.keyword === 'additionalProperties' ? params.additionalProperty : undefined;
  return typeof child === 'string' ? `${error.instancePath}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}` : error.instancePath;
}

function violation(tool: string, paths: string[], details: string[]): OutputCheck {
  const shown = details.slice(0, 10).join('; ');
  return { ok: false, paths, message: `Tool "${tool}" returned structuredContent that does not match its outputSchema: ${shown}` };
}
