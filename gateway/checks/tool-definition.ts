import { jsonPointer } from './json-pointer.ts';
import { schemaShapeProblem } from './schema-compiler.ts';

/**
 * The shape of an upstream's tool definition, as the spec's `Tool` type has it (MCP 2025-11-25 and
 * 2026-07-28 schema.ts `Tool`, `ToolAnnotations`, `Icon`, `ToolExecution`): the members a client's own
 * schema parses when it reads a tools/list. One definition that breaks them breaks the whole listing for
 * the client (an SDK v1 client throws a ZodError for the list, the v2 client "Invalid result for
 * tools/list": try-out), so such a tool is left out of the catalogue on its own (catalog.ts), like one
 * nested too deep. Written out rather than run through the SDK's zod schema: that one takes about 19 µs a
 * tool (a 10,000-tool catalogue's first build), and the 2026-07-28 schema no longer types an output
 * schema's `required`, which a 2025 client's does.
 */

/** Why `tool` is not a spec `Tool` a client can read, naming the member (a JSON Pointer); undefined when it is one. */
export function toolDefinitionProblem(tool: unknown): string | undefined {
  if (!isObject(tool)) return 'the definition is not an object';
  if (typeof tool.name !== 'string' || tool.name === '') return '/name: a tool name is a non-empty string';
  for (const key of ['title', 'description'] as const) if (tool[key] !== undefined && typeof tool[key] !== 'string') return `/${key}: must be a string`;
  const input = schemaProblem(tool.inputSchema, '/inputSchema');
  if (input) return input;
  if (!isObject(tool.inputSchema) || tool.inputSchema.type !== 'object') return '/inputSchema/type: must be "object"';
  if (tool.outputSchema !== undefined) {
    const output = schemaProblem(tool.outputSchema, '/outputSchema');
    if (output) return output;
    // An SDK v1 client compiles every outputSchema of the list: one that does not compile throws for the whole list (try-out).
    const shape = schemaShapeProblem(tool.outputSchema);
    if (shape) return `/outputSchema${shape}`;
  }
  if (tool.annotations !== undefined) {
    if (!isObject(tool.annotations)) return '/annotations: must be an object';
    if (tool.annotations.title !== undefined && typeof tool.annotations.title !== 'string') return '/annotations/title: must be a string';
    for (const hint of HINTS)
      if (tool.annotations[hint] !== undefined && typeof tool.annotations[hint] !== 'boolean') return `/annotations/${hint}: must be a boolean`;
  }
  if (tool._meta !== undefined && !isObject(tool._meta)) return '/_meta: must be an object';
  if (tool.execution !== undefined && !isObject(tool.execution)) return '/execution: must be an object';
  if (tool.icons !== undefined) {
    if (!Array.isArray(tool.icons)) return '/icons: must be an array';
    for (const [at, icon] of tool.icons.entries()) {
      const problem = iconProblem(icon);
      if (problem) return `/icons/${at}${problem}`;
    }
  }
  return undefined;
}

/** What breaks the spec's `Icon` (`src`, optional `mimeType`, `sizes` a list of strings, `theme` light or dark), as a path and words. */
function iconProblem(icon: unknown): string | undefined {
  if (!isObject(icon) || typeof icon.src !== 'string') return '/src: an icon is an object with a string src';
  if (icon.mimeType !== undefined && typeof icon.mimeType !== 'string') return '/mimeType: must be a string';
  if (icon.sizes !== undefined && !(Array.isArray(icon.sizes) && icon.sizes.every((size) => typeof size === 'string')))
    return '/sizes: must be an array of strings ("48x48", "any")';
  if (icon.theme !== undefined && icon.theme !== 'light' && icon.theme !== 'dark') return '/theme: must be "light" or "dark"';
  return undefined;
}

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** What a schema's root must be for a client to parse it: an object whose `properties` is an object and `required` a list of names. */
function schemaProblem(schema: unknown, at: string): string | undefined {
  if (!isObject(schema)) return `${at}: must be a JSON Schema object`;
  if (schema.properties !== undefined && !isObject(schema.properties)) return `${at}/properties: must be an object`;
  // A 2025 revision types each property's schema as an object (a boolean schema, valid JSON Schema, breaks its clients' list).
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    if (!isObject(property)) return `${at}/properties${jsonPointer([name])}: must be a JSON Schema object`;
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((name) => typeof name === 'string')))
    return `${at}/required: must be an array of property names`;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
