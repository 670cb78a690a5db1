import type { Tool } from '@modelcontextprotocol/server';

/**
 * TypeScript declarations of tools for run_code's description and search_tools' `detail: "typescript"`:
 * each tool a method of `tools` taking its inputSchema as an object type and resolving to its
 * outputSchema's type (`unknown` without one). JSON Schema is mapped as far as a model needs to write a
 * call (types, enums, const, required, arrays, unions, nested objects to {@link MAX_DEPTH}); anything
 * else (`$ref`, conditionals, patterns) is `unknown` or the plain type: the gateway checks every call's
 * arguments against the real schema anyway (surfaces/call-tool.ts).
 */

/** Nesting past which a schema is declared `unknown`. */
const MAX_DEPTH = 4;
/** Longest description line kept, characters. */
const MAX_DOC = 120;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/u;

/** `name` as a property key: bare when it is an identifier, else a JSON string. */
function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** The first sentence of `text` on one line, at most {@link MAX_DOC} characters, safe inside a `/** *\/` comment. */
function doc(text: unknown): string | undefined {
  if (typeof text !== 'string' || !text.trim()) return undefined;
  const line = (text.trim().split(/\n|(?<=[.!?])\s/u)[0] ?? '').replaceAll('*/', '* /');
  return line.length > MAX_DOC ? `${line.slice(0, MAX_DOC - 1)}…` : line;
}

/** The TypeScript type of a JSON Schema (draft 2020-12 subset), on one line. */
export function schemaType(schema: unknown, depth = 0): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
  const s = schema as Record<string, unknown>;
  if ('const' in s) return JSON.stringify(s.const) ?? 'unknown';
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ') || 'never';
  const union = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined;
  if (union) return [...new Set(union.map((u) => parenthesise(schemaType(u, depth + 1))))].join(' | ');
  if (Array.isArray(s.type)) return s.type.map((t) => schemaType({ ...s, type: t }, depth)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${parenthesise(schemaType(s.items, depth + 1))}[]`;
    case 'object':
      return objectType(s, depth);
    default:
      return s.properties ? objectType(s, depth) : 'unknown';
  }
}

function parenthesise(type: string): string {
  return type.includes(' | ') ? `(${type})` : type;
}

function objectType(s: Record<string, unknown>, depth: number): string {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const fields = Object.entries(properties).map(([name, property]) => `${key(name)}${required.has(name) ? '' : '?'}: ${schemaType(property, depth + 1)}`);
  const extra = s.additionalProperties;
  if (typeof extra === 'object' && extra !== null) fields.push(`[key: string]: ${schemaType(extra, depth + 1)}`);
  if (fields.length === 0) return extra === false ? '{}' : 'Record<string, unknown>';
  return `{ ${fields.join('; ')} }`;
}

/**
 * One tool as a method of `tools`: its description's first sentence as a doc comment, then
 * `name(args: {...}): Promise<Output>` (`args` optional when nothing is required).
 */
export function toolDeclaration(tool: Pick<Tool, 'name' | 'description' | 'inputSchema' | 'outputSchema'>): string {
  const input = tool.inputSchema as Record<string, unknown>;
  const optional = !(Array.isArray(input.required) && input.required.length > 0);
  const comment = doc(tool.description);
  const output = tool.outputSchema ? schemaType(tool.outputSchema) : 'unknown';
  return `${comment ? `  /** ${comment} */\n` : ''}  ${key(tool.name)}(args${optional ? '?' : ''}: ${schemaType(input)}): Promise<${output}>;`;
}

/**
 * `declare const tools: {...}` within `budget` UTF-8 bytes: the declarations of `tools` in order, each
 * one that fits (a large one is skipped, not the rest), and a last line naming the tools left out (as
 * many names as fit, the others counted), found in full with search_tools' `detail: "typescript"`. The
 * names line is reserved first: a model that knows every name a script may call needs no search to pick
 * one; a budget too small for any name still gets the count. Empty string for no tools or a budget of 0.
 */
export function toolsDeclaration(tools: readonly Pick<Tool, 'name' | 'description' | 'inputSchema' | 'outputSchema'>[], budget: number): string {
  if (tools.length === 0 || budget <= 0) return '';
  const head = 'declare const tools: {\n';
  const tail = '};';
  const bytes = (text: string) => Buffer.byteLength(text);
  let used = bytes(head + tail);
  const lines: string[] = [];
  let left = tools.map((t) => t.name);
  for (const tool of tools) {
    const line = `${toolDeclaration(tool)}\n`;
    const rest = left.filter((name) => name !== tool.name);
    if (used + bytes(line) + bytes(namesLine(rest, 0)) > budget) continue;
    lines.push(line);
    used += bytes(line);
    left = rest;
  }
  // Names that do not fit in what is left are counted instead.
  let more = 0;
  while (left.length > 0 && used + bytes(namesLine(left, more)) > budget) {
    left = left.slice(0, -1);
    more += 1;
  }
  return `${head}${lines.join('')}${namesLine(left, more)}${tail}`;
}

/** The comment line naming the tools not declared (`names`, then `more` uncounted), or nothing when there are none. */
function namesLine(names: readonly string[], more: number): string {
  if (names.length === 0 && more === 0) return '';
  const what =
    names.length === 0 ? `${more} more read-only tool${more === 1 ? '' : 's'}` : `Also ${names.map(key).join(', ')}${more ? ` and ${more} more` : ''}`;
  return `  // ${what}: search_tools with detail "typescript" declares them.\n`;
}
