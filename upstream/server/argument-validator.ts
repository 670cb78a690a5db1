import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ArgumentIssue, ToolDefinition } from './tools/tool-definition.ts';

/**
 * Validates tools/call arguments against the tool's own inputSchema (JSON Schema 2020-12, the MCP
 * default dialect) and its refine() checks. Compiled once per tool, on first use.
 */

// `optimize: false`: Ajv's optimiser would use up V8's shared hidden classes in this process (gateway/checks/schema-compiler.ts).
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, code: { optimize: false } });
addFormats.default(ajv);
const compiled = new Map<string, ValidateFunction>();

function issueOf(error: ErrorObject): ArgumentIssue {
  const child = error.params.missingProperty ?? error.params.additionalProperty;
  const path = child === undefined ? error.instancePath : `${error.instancePath}/${child}`;
  if (error.keyword === 'required') return { path, message: 'is required' };
  if (error.keyword === 'additionalProperties') return { path, message: 'is not a known argument (check the spelling against inputSchema)' };
  if (error.keyword === 'enum')
    return { path, message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
  return { path, message: error.message ?? 'is invalid' };
}

/** Every problem with `args` for `tool`; empty when the call may go ahead. */
export function argumentIssues(tool: ToolDefinition, args: Record<string, unknown>): ArgumentIssue[] {
  let validate = compiled.get(tool.name);
  if (!validate) compiled.set(tool.name, (validate = ajv.compile(tool.inputSchema)));
  if (!validate(args)) {
    // `if` errors only restate the `then` failure already reported with its path.
    return (validate.errors ?? []).filter((e) => e.keyword !== 'if').map(issueOf);
  }
  return tool.refine?.(args) ?? [];
}

/** One line naming every offending path, e.g. `/quantity must be > 0; /price is required`. */
export function describeIssues(issues: ArgumentIssue[]): string {
  return issues.map((issue) => `${issue.path || '(arguments)'} ${issue.message}`).join('; ');
}
